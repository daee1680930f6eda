"""Session fixtures that run the framework trace generators once and hand out their traces.

Each generator runs in its own process (`python -m frameworks.<module> --out <tmp>`), so a
framework's global instrumentation, environment switches and warnings stay out of the test
process. Every trace is also copied to `tests/testdata/frameworks/<framework>-<case>.otlp.json`
for other tests and examples, but only when it changed in substance: clocks, uuids, ports and
stack-trace paths differ on every run and are ignored in that comparison, so an unchanged
framework leaves the committed files untouched. `framework_testdata_updates` lists what was
rewritten, and a test fails on it (as golden files do) so the new traces get reviewed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "TESTDATA",
    "agent_framework_traces",
    "agno_traces",
    "framework_testdata_updates",
    "openai_agents_traces",
    "pydantic_ai_traces",
    "stable_view",
    "traceloop_traces",
]

TESTS_DIR = Path(__file__).resolve().parents[1]
TESTDATA = TESTS_DIR / "testdata" / "frameworks"
_GENERATOR_TIMEOUT_S = 600

_VOLATILE_FIELDS = frozenset({"startTimeUnixNano", "endTimeUnixNano", "timeUnixNano"})
_VOLATILE_ATTRIBUTES = frozenset(
    {"exception.stacktrace", "server.port", "agent_framework.function.invocation.duration"}
)
_VOLATILE_TEXT = (
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),
    (re.compile(r"\b1\d{9}\b"), "<epoch>"),
    # Timings inside JSON text, e.g. Agno's message metrics {"duration": 0.23}.
    (re.compile(r'("\w*(?:duration|time)\w*": )-?[0-9][0-9.eE+-]*'), r"\1<number>"),
)

_HEX16 = re.compile(r"^[0-9a-f]{16}$")

Traces = dict[str, dict[str, Any]]

# traceloop-sdk cannot share a venv with the `frameworks` extra: every release needs
# opentelemetry-instrumentation-threading, whose versions pin the OTel packages below what
# opentelemetry-util-genai (openai-agents-v2) requires, so pip finds no resolution. Its generator
# runs in a venv of its own, made once per requirements set in the pytest cache.
TRACELOOP_REQUIREMENTS = (
    "traceloop-sdk==0.40.14",
    "openai==3.57.0",
    "protobuf>=5.26",
)
TRACELOOP_CONSTRAINTS = Path(__file__).with_name("traceloop-constraints.txt")
_INSTALL_TIMEOUT_S = 900
_UPDATED: list[str] = []  # testdata files rewritten in this session, for the freshness test


def stable_view(obj: Any) -> Any:
    """`obj` without what changes on every run (clock, uuids, ports, stack traces, order).

    Concurrent tool calls end, and so are exported, in whatever order the event loop ran them,
    and their span ids follow their start order: spans are compared as a set, each one linked
    to its parent by the parent's name instead of by id.
    """
    if isinstance(obj, Mapping):
        if obj.get("key") in _VOLATILE_ATTRIBUTES:
            return {"key": obj["key"]}
        out = {}
        for key, value in obj.items():
            if key in _VOLATILE_FIELDS:
                continue
            if key == "spans" and isinstance(value, list):
                out[key] = _stable_spans(value)
            elif key == "stringValue" and isinstance(value, str):
                # Agno's session and run ids are bare 16-hex strings.
                out[key] = _HEX16.sub("<hex16>", _mask(value))
            else:
                out[key] = stable_view(value)
        return out
    if isinstance(obj, list):
        return [stable_view(x) for x in obj]
    if isinstance(obj, str):
        return _mask(obj)
    return obj


def _mask(text: str) -> str:
    for pattern, placeholder in _VOLATILE_TEXT:
        text = pattern.sub(placeholder, text)
    return text


def _stable_spans(spans: list[Any]) -> list[Any]:
    names = {s.get("spanId"): s.get("name") for s in spans if isinstance(s, Mapping)}
    out = []
    for span in spans:
        if not isinstance(span, Mapping):
            out.append(stable_view(span))
            continue
        view = stable_view({k: v for k, v in span.items() if k not in ("spanId", "parentSpanId")})
        view["parent"] = names.get(span.get("parentSpanId"), span.get("parentSpanId") and "?")
        out.append(view)
    return sorted(out, key=lambda v: json.dumps(v, sort_keys=True))


def _isolated_python(
    cache: pytest.Cache, name: str, requirements: tuple[str, ...], constraints: Path
) -> str:
    """The python of a venv holding `requirements`, made once and kept in the pytest cache."""
    pins = constraints.read_text(encoding="utf-8")
    key = hashlib.sha256("\n".join([*requirements, pins]).encode()).hexdigest()[:12]
    venv = Path(cache.mkdir(f"{name}-venv-{key}"))
    python = venv / "bin" / "python"
    ready = venv / ".ready"
    if not ready.exists():
        for command in (
            [sys.executable, "-m", "venv", "--clear", str(venv)],
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
             "-c", str(constraints), *requirements],
        ):  # fmt: skip
            proc = subprocess.run(
                command, capture_output=True, text=True, timeout=_INSTALL_TIMEOUT_S, check=False
            )
            if proc.returncode != 0:
                pytest.fail(
                    f"cannot make the {name} venv ({' '.join(command[:4])}...):\n"
                    f"{proc.stderr[-4000:]}",
                    pytrace=False,
                )
        ready.touch()
    return str(python)


def _generate(module: str, out_dir: Path, python: str = sys.executable) -> Traces:
    out_dir.mkdir(parents=True, exist_ok=True)
    pythonpath = os.pathsep.join(filter(None, [str(TESTS_DIR), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": pythonpath}
    proc = subprocess.run(
        [python, "-m", module, "--out", str(out_dir)],
        cwd=TESTS_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=_GENERATOR_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(
            f"trace generator {module} exited with {proc.returncode} (are the frameworks "
            f"installed? pip install -e '.[test,frameworks]'):\n{proc.stderr[-4000:]}",
            pytrace=False,
        )
    traces: Traces = {}
    for line in proc.stdout.splitlines():
        path = Path(line.strip())
        if path.name.endswith(".otlp.json"):
            traces[path.name.removesuffix(".otlp.json")] = json.loads(path.read_text("utf-8"))
    if not traces:
        pytest.fail(f"trace generator {module} wrote no traces", pytrace=False)
    _sync_testdata(traces)
    return traces


def _sync_testdata(traces: Traces) -> None:
    TESTDATA.mkdir(parents=True, exist_ok=True)
    for name, doc in traces.items():
        target = TESTDATA / f"{name}.otlp.json"
        if target.exists():
            try:
                committed = json.loads(target.read_text("utf-8"))
            except ValueError:
                committed = None
            if stable_view(committed) == stable_view(doc):
                continue
        # Write then rename, so a concurrent test run never reads half a file.
        tmp = target.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, target)
        _UPDATED.append(target.name)


@pytest.fixture(scope="session")
def pydantic_ai_traces(tmp_path_factory: pytest.TempPathFactory) -> Traces:
    """`{"pydantic_ai-<case>": OTLP JSON}` from real pydantic-ai runs (FunctionModel)."""
    return _generate("frameworks.pydantic_ai_traces", tmp_path_factory.mktemp("pydantic_ai"))


@pytest.fixture(scope="session")
def agno_traces(tmp_path_factory: pytest.TempPathFactory) -> Traces:
    """`{"agno-<case>": OTLP JSON}` from real Agno runs against the fake LLM server."""
    return _generate("frameworks.agno_traces", tmp_path_factory.mktemp("agno"))


@pytest.fixture(scope="session")
def agent_framework_traces(tmp_path_factory: pytest.TempPathFactory) -> Traces:
    """`{"agent_framework-<case>": OTLP JSON}` from Microsoft Agent Framework workflows."""
    return _generate("frameworks.agent_framework_traces", tmp_path_factory.mktemp("maf"))


@pytest.fixture(scope="session")
def openai_agents_traces(tmp_path_factory: pytest.TempPathFactory) -> Traces:
    """`{"openai_agents_<instrumentation>-<case>": OTLP JSON}` from OpenAI Agents SDK runs."""
    return _generate("frameworks.openai_agents_traces", tmp_path_factory.mktemp("openai_agents"))


@pytest.fixture(scope="session")
def traceloop_traces(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Traces:
    """`{"traceloop-<case>": OTLP JSON}` from hand-written agents traced by traceloop-sdk."""
    # No `cache` attribute at all when the cacheprovider plugin is off.
    cache = getattr(pytestconfig, "cache", None)
    if cache is None:
        pytest.skip("the traceloop-sdk venv lives in the pytest cache (cacheprovider is off)")
    python = _isolated_python(cache, "traceloop", TRACELOOP_REQUIREMENTS, TRACELOOP_CONSTRAINTS)
    return _generate("frameworks.traceloop_traces", tmp_path_factory.mktemp("traceloop"), python)


@pytest.fixture(scope="session")
def framework_testdata_updates(
    pydantic_ai_traces: Traces,
    agno_traces: Traces,
    openai_agents_traces: Traces,
    traceloop_traces: Traces,
    agent_framework_traces: Traces,
) -> list[str]:
    """Names of the testdata files this session rewrote because a framework's output changed."""
    return sorted(_UPDATED)
