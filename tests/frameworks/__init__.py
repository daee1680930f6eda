"""Trace generators: real agent frameworks run offline, their spans captured as OTLP JSON.

Each `*_traces.py` module is a script run in its own process by `fixtures.py` (so framework
instrumentation, environment switches and warnings never leak into the test process). It writes
one `<framework>-<case>.otlp.json` per case into `--out`.
"""
