#!/usr/bin/env bash
# The whole suite again on the pure-Python path: TRACESCORE_NATIVE=0 makes otlp.native report
# the C extension absent, as on a machine without a C compiler. Tests about the extension itself
# skip (tests/support/native.py); everything else must pass on both paths.
set -euo pipefail
TRACESCORE_NATIVE=0 .venv/bin/pytest -x -q
