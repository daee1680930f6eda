"""The progress bar: drawn on a real terminal (a pty), silent on pipes and for few runs."""

from __future__ import annotations

import io
import os
import select
from collections.abc import Iterator

import pytest

from tracescore.judges.progress import MIN_RUNS, Progress


@pytest.fixture
def terminal() -> Iterator[tuple[io.TextIOWrapper, int]]:
    """A pseudo-terminal: writes to the follower side, reads back from the leader."""
    leader, follower = os.openpty()
    stream = open(follower, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    try:
        yield stream, leader
    finally:
        stream.close()
        os.close(leader)


def read_all(fd: int) -> str:
    chunks = []
    while True:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            return b"".join(chunks).decode()
        chunks.append(os.read(fd, 4096))


def test_the_bar_is_drawn_on_a_terminal_and_cleared_at_the_end(
    terminal: tuple[io.TextIOWrapper, int],
) -> None:
    stream, leader = terminal
    progress = Progress(8, stream)
    assert progress.shown
    for _ in range(8):
        progress.advance()
    progress.close()
    text = read_all(leader)
    assert "judging [" in text
    assert "8/8 runs" in text
    assert text.endswith("\r")


def test_few_runs_get_no_bar(terminal: tuple[io.TextIOWrapper, int]) -> None:
    stream, leader = terminal
    progress = Progress(MIN_RUNS - 1, stream)
    progress.advance()
    progress.close()
    assert not progress.shown
    assert read_all(leader) == ""


def test_a_pipe_gets_no_bar() -> None:
    buffer = io.StringIO()
    progress = Progress(100, buffer)
    progress.advance(100)
    progress.close()
    assert buffer.getvalue() == ""


def test_the_line_shows_the_fraction_done() -> None:
    progress = Progress(40, io.StringIO())
    progress.done = 10
    assert progress.line(3.14) == "judging [#######.......................] 10/40 runs 3.1s"
