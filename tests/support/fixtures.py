"""Pytest fixtures around the fake OpenAI-compatible server (imported by tests/conftest.py).

`fake_openai_factory(script)` starts a server per call and stops them all after the test;
`fake_openai` is one server whose script comes from indirect parametrization::

    @pytest.mark.parametrize("fake_openai", [[{"json": {"score": 1}}]], indirect=True)
    def test_judge(fake_openai: FakeOpenAI) -> None: ...

Without a parameter it answers every request with the text ``ok``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from support.fake_openai_process import FakeOpenAI, start_fake_openai

__all__ = ["DEFAULT_SCRIPT", "fake_openai", "fake_openai_factory"]

DEFAULT_SCRIPT: dict[str, object] = {"steps": [], "exhausted": {"content": "ok"}}


@pytest.fixture
def fake_openai_factory(tmp_path: Path) -> Iterator[Callable[..., FakeOpenAI]]:
    """Start fake servers on demand: `factory(script, name="...") -> FakeOpenAI`."""
    with ExitStack() as stack:

        def start(script: object, name: str = "fake_openai") -> FakeOpenAI:
            return stack.enter_context(start_fake_openai(script, tmp_path / "fake_openai", name))

        yield start


@pytest.fixture
def fake_openai(
    request: pytest.FixtureRequest, fake_openai_factory: Callable[..., FakeOpenAI]
) -> FakeOpenAI:
    """One running fake server; its script is the indirect parameter, if any."""
    script = getattr(request, "param", None)
    return fake_openai_factory(DEFAULT_SCRIPT if script is None else script)
