#!/usr/bin/env bash
# The native wire code under gcc's AddressSanitizer and UndefinedBehaviorSanitizer: its tests
# (tests/otlp, tests/adversarial/test_native_edges.py), then the wire fuzzer for a bounded time
# (FUZZ_SECONDS, 60 by default). Any sanitizer report aborts the run, so zero reports are
# required. Built into build/sanitized/ (scripts/sanitized-build.sh): the in-place build that
# the rest of the suite uses is left alone.
set -euo pipefail
cd "$(dirname "$0")/../.."
eval "$(scripts/sanitized-build.sh)"
.venv/bin/python - <<'PY'
import tracescore.otlp._scan as native
if "/build/sanitized/" not in native.__file__ or not hasattr(native, "coverage_news"):
    raise SystemExit(f"post-sanitizers: the sanitized extension is not the one imported: {native.__file__}")
PY
.venv/bin/python -m pytest tests/otlp tests/adversarial/test_native_edges.py -q
.venv/bin/python tests/fuzz/wire_target.py --seconds "${FUZZ_SECONDS:-60}" --artifacts build/fuzz-artifacts
