"""Start `fake_openai.py` as a real process and talk about it from a test.

`start_fake_openai(script, workdir)` writes the script, starts the server on an ephemeral
loopback port, waits until it says it listens, and stops it (by its own pid) on exit. The
`FakeOpenAI` handle gives the base URL for clients and the recorded requests for assertions.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.fake_openai import LISTENING_PREFIX, parse_script

__all__ = ["SERVER_SCRIPT", "FakeOpenAI", "start_fake_openai"]

SERVER_SCRIPT = Path(__file__).with_name("fake_openai.py")
_STARTUP_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class FakeOpenAI:
    """A running fake server: where to send requests, and what it received."""

    base_url: str  # ends in /v1, as OpenAI clients expect
    log_path: Path
    script_path: Path
    pid: int

    @property
    def api_key(self) -> str:
        """A key clients must send; the fake accepts any, and tests can look for it."""
        return "sk-fake"

    def requests(self) -> list[dict[str, Any]]:
        """Every request received so far, in arrival order (`method`, `path`, `headers`, ...)."""
        if not self.log_path.exists():
            return []
        with self.log_path.open(encoding="utf-8") as fh:
            # A record ends with its newline: a last line without one is still being written
            # (the server's write may land in pieces) and is read on the next call.
            return [json.loads(line) for line in fh if line.endswith("\n") and line.strip()]

    def chat_bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of the chat-completions requests, in arrival order."""
        return [
            r["body"]
            for r in self.requests()
            if r["method"] == "POST" and r["path"].rstrip("/").endswith("/chat/completions")
        ]


@contextmanager
def start_fake_openai(
    script: object, workdir: Path, name: str = "fake_openai"
) -> Iterator[FakeOpenAI]:
    """Run the fake server with `script` (a Python list/dict) for the duration of the block.

    The script is validated here first, so a malformed script fails in the test that wrote it
    with the server's own message rather than as a start-up timeout.
    """
    parse_script(script)
    workdir.mkdir(parents=True, exist_ok=True)
    script_path = workdir / f"{name}.script.json"
    log_path = workdir / f"{name}.requests.jsonl"
    stderr_path = workdir / f"{name}.stderr.txt"
    script_path.write_text(json.dumps(script, indent=1), encoding="utf-8")
    log_path.unlink(missing_ok=True)
    cmd = [sys.executable, str(SERVER_SCRIPT), "--port", "0"]
    cmd += ["--script", str(script_path), "--log", str(log_path)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with stderr_path.open("wb") as stderr:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL, env=env
        )
    try:
        base_url = _wait_listening(proc, stderr_path)
        yield FakeOpenAI(base_url, log_path, script_path, proc.pid)
    finally:
        _stop(proc)


def _wait_listening(proc: subprocess.Popen[bytes], stderr_path: Path) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + _STARTUP_TIMEOUT_S
    buffer = b""
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while b"\n" not in buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RuntimeError(f"fake_openai did not start within {_STARTUP_TIMEOUT_S} s")
            if selector.select(remaining):
                chunk = os.read(proc.stdout.fileno(), 4096)
                if not chunk:  # the process exited before listening
                    proc.wait(timeout=5)
                    err = stderr_path.read_text(encoding="utf-8", errors="replace").strip()
                    raise RuntimeError(f"fake_openai exited with {proc.returncode}: {err}")
                buffer += chunk
    line = buffer.split(b"\n", 1)[0].decode()
    if not line.startswith(LISTENING_PREFIX):
        raise RuntimeError(f"fake_openai printed {line!r} instead of its address")
    return line[len(LISTENING_PREFIX) :].strip()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    if proc.stdout is not None:
        proc.stdout.close()
