#!/usr/bin/env bash
# Build tracescore into build/sanitized/ with its native extension compiled by gcc under
# AddressSanitizer and UndefinedBehaviorSanitizer (and trace-pc coverage for the fuzzer), then
# print the environment that runs Python against it. The in-place build under src/ is never
# touched: the sanitized package is a copy of src/tracescore with the sanitized extension in it,
# first on PYTHONPATH. The extension is rebuilt only when a C source, setup.py or the flags
# change (a stamp), the Python files are copied afresh on every run.
#
#   eval "$(scripts/sanitized-build.sh)"    # then: .venv/bin/python -m pytest tests/otlp
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=build/sanitized
FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1 -fsanitize-coverage=trace-pc -DTRACESCORE_FUZZ_COVERAGE"
STAMP=$( (cat setup.py src/tracescore/otlp/*.c src/tracescore/otlp/*.h; echo "$FLAGS"; gcc --version) | sha256sum | cut -c1-16)
SO_CACHE="build/sanitized-so/$STAMP"
if [ ! -d "$SO_CACHE" ]; then
    WHEELS=$(mktemp -d)
    trap 'rm -rf "$WHEELS"' EXIT
    # pip builds in the tree (build/lib.*, build/temp.*), and setuptools skips an extension
    # newer than its sources whatever the flags: start from none. setup.py marks the extension
    # optional, so a failed compile still makes a wheel, without it (checked below).
    rm -rf build/lib.* build/temp.* build/bdist.*
    CFLAGS="$FLAGS" LDFLAGS="-fsanitize=address,undefined" \
        .venv/bin/python -m pip wheel -q --no-deps --disable-pip-version-check -w "$WHEELS" . >&2
    mkdir -p "$SO_CACHE.tmp"
    .venv/bin/python - "$WHEELS" "$SO_CACHE.tmp" <<'PY'
import sys, zipfile, pathlib
wheel = next(pathlib.Path(sys.argv[1]).glob("tracescore-*.whl"))
names = [n for n in zipfile.ZipFile(wheel).namelist() if n.startswith("tracescore/otlp/_scan") and n.endswith(".so")]
if not names:
    raise SystemExit("sanitized build: the extension did not compile (see the pip output above)")
for name in names:
    target = pathlib.Path(sys.argv[2]) / pathlib.Path(name).name
    target.write_bytes(zipfile.ZipFile(wheel).read(name))
PY
    mv "$SO_CACHE.tmp" "$SO_CACHE"
fi
rm -rf "$OUT"
mkdir -p "$OUT"
cp -r src/tracescore "$OUT/tracescore"
rm -f "$OUT"/tracescore/otlp/_scan*.so
cp "$SO_CACHE"/_scan*.so "$OUT/tracescore/otlp/"
ASAN=$(gcc -print-file-name=libasan.so)
UBSAN=$(gcc -print-file-name=libubsan.so)
# detect_leaks=0: CPython frees little at exit by design; every other report stops the run.
cat <<ENV
export PYTHONPATH="$PWD/$OUT\${PYTHONPATH:+:\$PYTHONPATH}"
export LD_PRELOAD="$ASAN:$UBSAN"
export PYTHONMALLOC=malloc
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=1:print_summary=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
ENV
