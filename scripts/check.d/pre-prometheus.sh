#!/usr/bin/env bash
# Debian's Prometheus, for the test that runs every Grafana dashboard query against a real
# Prometheus that scraped a live `tracescore serve` (tests/export/test_dashboard.py).
# Installed once; a second run finds it and takes no time. Nothing else is cached here.
set -euo pipefail
if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "pre-prometheus: prometheus is missing; install it with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends prometheus" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# The package's post-install does not start a daemon here (no systemd; policy-rc.d refuses).
apt-get install -y -qq --no-install-recommends prometheus >/dev/null
command -v prometheus >/dev/null
