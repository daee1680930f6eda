"""`tracescore serve` says which OTLP wire codec runs, and both paths score alike.

The same agent runs are sent to a service on the native path and to one with
`TRACESCORE_NATIVE=0` (the pure-Python path, as on a machine without a C compiler): the scored
agent spans and the evaluation events must be the same, and each process's start-up line must
name its path.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from e2e._process import ServeProcess, run_agent_client
from e2e.test_serve import CONFIG
from support.otlp_sink import OtlpSink, attrs
from tracescore.otlp import native

pytestmark = pytest.mark.slow

_BUILT = importlib.util.find_spec("tracescore.otlp._scan") is not None


def _scores(attributes: dict[str, Any]) -> list[tuple[str, Any]]:
    """What the service added to an agent span (the run's own attributes vary per run)."""
    return sorted((k, v) for k, v in attributes.items() if k.startswith(("eval.", "tracescore.")))


def _agent_spans(sink: OtlpSink) -> list[Any]:
    return [s for s in sink.spans() if s.span.name == "invoke_agent shop-assistant"]


def _scored(tmp_path: Path, setting: str) -> tuple[str, list[Any], list[Any]]:
    """(the codec line, the agent spans' attributes, the events' attributes) of one service."""
    folder = tmp_path / f"native-{setting}"
    folder.mkdir()
    with OtlpSink("http") as sink:
        config = CONFIG.format(endpoint=sink.endpoint, protocol="http/protobuf", mode="forward")
        with ServeProcess(config, folder, env={native.ENV: setting}) as serve:
            run_agent_client("http", f"127.0.0.1:{serve.ports['http']}", folder / "sent.json")
            # Both signals: the agent spans are released just after their events are logged.
            sink.wait_for(lambda: len(sink.log_records()) == 4 and len(_agent_spans(sink)) == 2)
            line = next(x for x in serve.lines if "OTLP wire codec" in x)
        agents = sorted((_scores(attrs(s.span.attributes)) for s in _agent_spans(sink)), key=repr)
        events = sorted(
            (sorted(attrs(r.attributes).items()) for _, r in sink.log_records()), key=repr
        )
    return line, agents, events


def test_both_paths_say_which_they_are_and_score_alike(tmp_path: Path) -> None:
    python_line, python_agents, python_events = _scored(tmp_path, "0")
    native_line, native_agents, native_events = _scored(tmp_path, "1")
    assert python_line.startswith("tracescore serve: OTLP wire codec: pure Python")
    assert f"{native.ENV}=0 chose the pure-Python path" in python_line
    if _BUILT:
        assert native_line.startswith("tracescore serve: OTLP wire codec: native: C extension")
    else:
        assert "the C extension was not built" in native_line
    assert len(python_agents) == 2
    assert any("eval.no_tool_errors.score" in dict(a) for a in python_agents)
    assert python_agents == native_agents
    assert len(python_events) == 4
    assert python_events == native_events
