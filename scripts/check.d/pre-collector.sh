#!/usr/bin/env bash
# Builds the OpenTelemetry Collector that tests/collector/ runs (tests/collector/otelcol, upstream
# component modules) once per machine and caches the binary outside the repo, keyed by a hash of
# go.mod, go.sum and main.go: a second run costs a hash. The cold build takes minutes (the
# loadbalancing exporter brings the Kubernetes client).
#
#   bash scripts/check.d/pre-collector.sh          # build if needed, print the binary's path
#   bash scripts/check.d/pre-collector.sh --path   # print the path only (the tests use this)
#
# TRACESCORE_CACHE overrides the cache folder (default ~/.cache/tracescore). Without Go this
# fails under CI=true and otherwise skips, so the collector tests skip naming this command.
set -euo pipefail
cd "$(dirname "$0")/../.."
src=tests/collector/otelcol
cache=${TRACESCORE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tracescore}
key=$(cat "$src/go.mod" "$src/go.sum" "$src/main.go" | sha256sum | cut -c1-16)
bin="$cache/otelcol-$key"
if [ "${1:-}" = "--path" ]; then
    echo "$bin"
    exit 0
fi
if [ -x "$bin" ]; then
    echo "collector: cached $bin"
    exit 0
fi
# Go's own install location, for shells whose PATH lacks it.
command -v go >/dev/null 2>&1 || PATH="$PATH:/usr/local/go/bin"
if ! command -v go >/dev/null 2>&1; then
    echo "collector: go is not installed, so the collector tests cannot run" >&2
    [ "${CI:-}" = "true" ] && exit 1
    exit 0
fi
mkdir -p "$cache"
started=$(date +%s)
# -mod=readonly: build exactly what go.sum pins, whatever GOFLAGS the machine has.
(cd "$src" && GOFLAGS=-mod=readonly go build -trimpath -o "$bin.tmp.$$" .)
mv "$bin.tmp.$$" "$bin"
echo "collector: built $bin in $(($(date +%s) - started))s"
