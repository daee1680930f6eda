#!/usr/bin/env bash
# Arize Phoenix for the viewer tests (tests/viewers), in a venv of its own outside the repo:
# it is large (~850 MB, ~2 min to install) and pins libraries tracescore does not need. Cached by
# version, so a second run costs a second. TRACESCORE_PHOENIX_VENV points the tests at it.
set -euo pipefail
VERSION=${PHOENIX_VERSION:-20.26.1}
CACHE=${TRACESCORE_CACHE:-$HOME/.cache/tracescore}
VENV="$CACHE/phoenix-$VERSION"
if [ -x "$VENV/bin/phoenix" ] && [ -f "$VENV/.installed" ]; then
    echo "phoenix $VERSION: cached at $VENV"
    exit 0
fi
rm -rf "$VENV"
mkdir -p "$CACHE"
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "arize-phoenix==$VERSION"
touch "$VENV/.installed"
echo "phoenix $VERSION: installed at $VENV"
