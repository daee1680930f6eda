"""A scripted, loopback-only OpenAI-compatible chat-completions server (stdlib only).

It stands in for the language model, the one thing tests may fake: agent frameworks and the
LLM-judge client talk to it over real HTTP, exactly as they would talk to a provider. It runs
as its own process so a test exercises real sockets, real timeouts and real retries::

    python tests/support/fake_openai.py --script script.json --log requests.jsonl [--port 0]

Once it accepts connections it prints ``fake_openai listening on http://127.0.0.1:PORT/v1``.
Routes: ``POST /v1/chat/completions`` (plain or ``stream: true`` SSE) and ``GET /v1/models``.

The script (JSON, or a Python literal) is a list of steps or an object::

    {"scenarios": [{"name": "n", "match": "text", "steps": [...]}, ...],  # or "steps": [...]
     "advance": "requests" | "turns", "exhausted": {step}, "models": ["fake-gpt"]}

A request goes to the first scenario whose ``match`` occurs (case-insensitively) in its system,
developer or user messages, and whose ``regex`` (if given; Python syntax, DOTALL, case kept) is
found in those messages joined by newlines; a scenario without either takes everything else.
``advance`` picks the step: ``requests`` (default) counts earlier requests of that scenario, so
a retry gets the next step; ``turns`` counts assistant messages in the request, so the reply
depends only on the conversation (robust when agents run concurrently). A step holds any of
``content`` (text), ``json`` (any value, sent as JSON text), ``tool_calls`` (``[{"name",
"arguments", "id"?}]``), ``status`` + ``headers`` + ``error`` (an HTTP error such as 429 with
``Retry-After``), ``delay`` (seconds before answering), ``disconnect`` (close without
answering), ``finish_reason`` and ``usage``. A script that runs out answers 400 ``script
exhausted`` unless ``exhausted`` gives a step. Every request is appended to the ``--log`` file
as one JSON line before the reply is sent.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import re
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LISTENING_PREFIX", "Scenario", "Script", "ScriptError", "Step", "parse_script"]

LISTENING_PREFIX = "fake_openai listening on "
_STEP_KEYS = frozenset(
    {
        "content",
        "json",
        "tool_calls",
        "status",
        "headers",
        "error",
        "delay",
        "disconnect",
        "finish_reason",
        "usage",
        "minimal",
    }
)
_SCRIPT_KEYS = frozenset({"scenarios", "steps", "advance", "exhausted", "models"})
_ERROR_TYPES = {429: "rate_limit_error", 401: "authentication_error", 404: "not_found_error"}


class ScriptError(ValueError):
    """A script that cannot be followed; the message names the offending key path."""


@dataclass(frozen=True)
class ToolCallSpec:
    """One tool call the fake model requests."""

    name: str
    arguments: str  # already JSON text, as the API sends it
    id: str | None = None


@dataclass(frozen=True)
class Step:
    """One scripted reply."""

    content: str | None = None
    tool_calls: tuple[ToolCallSpec, ...] = ()
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    error: str | None = None
    delay: float = 0.0
    disconnect: bool = False
    finish_reason: str | None = None
    usage: Mapping[str, int] | None = None
    minimal: bool = False
    """Answer with the least value the request's `response_format` schema admits, as a server
    with guided decoding may: required properties only, empty strings and lists, the first enum
    value, a number's minimum, false."""


@dataclass(frozen=True)
class Scenario:
    """A named list of steps for the requests whose messages contain `match`."""

    name: str
    match: str | None
    steps: tuple[Step, ...]
    regex: re.Pattern[str] | None = None


@dataclass(frozen=True)
class Script:
    """A parsed, validated script."""

    scenarios: tuple[Scenario, ...]
    advance: str = "requests"
    exhausted: Step | None = None
    models: tuple[str, ...] = ("fake-gpt",)


def parse_script(raw: object) -> Script:
    """Validate a script given as parsed JSON (or a Python literal) and freeze it.

    Raises:
        ScriptError: naming the path of the first problem, so a typo in a test's script fails
            loudly at start-up instead of producing a confusing reply later.
    """
    if isinstance(raw, list):
        raw = {"steps": raw}
    if not isinstance(raw, Mapping):
        raise ScriptError(f"script: expected a list of steps or an object, got {_kind(raw)}")
    unknown = sorted(set(raw) - _SCRIPT_KEYS)
    if unknown:
        raise ScriptError(f"script: unknown key {unknown[0]!r} (allowed: {sorted(_SCRIPT_KEYS)})")
    if ("scenarios" in raw) == ("steps" in raw):
        raise ScriptError("script: give exactly one of 'scenarios' and 'steps'")
    scenarios: tuple[Scenario, ...]
    if "steps" in raw:
        scenarios = (Scenario("default", None, _steps(raw["steps"], "steps")),)
    else:
        scenarios = _scenarios(raw["scenarios"])
    advance = raw.get("advance", "requests")
    if advance not in ("requests", "turns"):
        raise ScriptError(f"script.advance: expected 'requests' or 'turns', got {advance!r}")
    exhausted = raw.get("exhausted")
    models = raw.get("models", ["fake-gpt"])
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise ScriptError(f"script.models: expected a list of model ids, got {models!r}")
    return Script(
        scenarios=scenarios,
        advance=advance,
        exhausted=None if exhausted is None else _step(exhausted, "exhausted"),
        models=tuple(models),
    )


def _scenarios(raw: object) -> tuple[Scenario, ...]:
    if not isinstance(raw, list) or not raw:
        raise ScriptError(f"scenarios: expected a non-empty list, got {_kind(raw)}")
    out = []
    for i, obj in enumerate(raw):
        where = f"scenarios[{i}]"
        if not isinstance(obj, Mapping):
            raise ScriptError(f"{where}: expected an object, got {_kind(obj)}")
        extra = sorted(set(obj) - {"name", "match", "steps", "regex"})
        if extra:
            raise ScriptError(f"{where}: unknown key {extra[0]!r}")
        match = obj.get("match")
        if match is not None and (not isinstance(match, str) or not match):
            raise ScriptError(f"{where}.match: expected a non-empty string, got {match!r}")
        regex = obj.get("regex")
        if regex is not None:
            try:
                regex = re.compile(regex, re.DOTALL)
            except (re.error, TypeError) as exc:
                raise ScriptError(f"{where}.regex: not a regular expression: {exc}") from None
        name = obj.get("name", match or f"scenario{i}")
        steps = _steps(obj.get("steps"), f"{where}.steps")
        out.append(Scenario(str(name), match, steps, regex))
    if len({s.name for s in out}) != len(out):
        raise ScriptError("scenarios: names must be unique")
    return tuple(out)


def _steps(raw: object, where: str) -> tuple[Step, ...]:
    if not isinstance(raw, list):
        raise ScriptError(f"{where}: expected a list of steps, got {_kind(raw)}")
    return tuple(_step(obj, f"{where}[{i}]") for i, obj in enumerate(raw))


def _step(raw: object, where: str) -> Step:
    if not isinstance(raw, Mapping):
        raise ScriptError(f"{where}: expected an object, got {_kind(raw)}")
    unknown = sorted(set(raw) - _STEP_KEYS)
    if unknown:
        raise ScriptError(f"{where}: unknown key {unknown[0]!r} (allowed: {sorted(_STEP_KEYS)})")
    if "content" in raw and "json" in raw:
        raise ScriptError(f"{where}: give 'content' or 'json', not both")
    content = json.dumps(raw["json"]) if "json" in raw else raw.get("content")
    if content is not None and not isinstance(content, str):
        raise ScriptError(f"{where}.content: expected a string, got {_kind(content)}")
    status = raw.get("status", 200)
    if not isinstance(status, int) or not 200 <= status <= 599:
        raise ScriptError(f"{where}.status: expected an HTTP status code, got {status!r}")
    headers = raw.get("headers", {})
    if not isinstance(headers, Mapping):
        raise ScriptError(f"{where}.headers: expected an object, got {_kind(headers)}")
    delay = raw.get("delay", 0.0)
    if not isinstance(delay, int | float) or isinstance(delay, bool) or delay < 0:
        raise ScriptError(f"{where}.delay: expected seconds >= 0, got {delay!r}")
    usage = raw.get("usage")
    if usage is not None and not isinstance(usage, Mapping):
        raise ScriptError(f"{where}.usage: expected an object, got {_kind(usage)}")
    return Step(
        content=content,
        tool_calls=_tool_calls(raw.get("tool_calls", []), f"{where}.tool_calls"),
        status=status,
        headers={str(k): str(v) for k, v in headers.items()},
        error=None if raw.get("error") is None else str(raw["error"]),
        delay=float(delay),
        disconnect=bool(raw.get("disconnect", False)),
        finish_reason=raw.get("finish_reason"),
        usage=None if usage is None else {str(k): int(v) for k, v in usage.items()},
        minimal=bool(raw.get("minimal", False)),
    )


def _tool_calls(raw: object, where: str) -> tuple[ToolCallSpec, ...]:
    if not isinstance(raw, list):
        raise ScriptError(f"{where}: expected a list, got {_kind(raw)}")
    out = []
    for i, obj in enumerate(raw):
        if not isinstance(obj, Mapping) or not isinstance(obj.get("name"), str):
            raise ScriptError(f"{where}[{i}]: expected an object with a string 'name'")
        args = obj.get("arguments", {})
        # A string is sent as it is, so a test can script malformed JSON arguments.
        text = args if isinstance(args, str) else json.dumps(args)
        call_id = obj.get("id")
        out.append(ToolCallSpec(obj["name"], text, None if call_id is None else str(call_id)))
    return tuple(out)


def _kind(value: object) -> str:
    return type(value).__name__


def _message_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""


class _State:
    """The script plus per-scenario request counters, shared by the handler threads."""

    def __init__(self, script: Script, log_path: str | None) -> None:
        self.script = script
        self.log_path = log_path
        self.lock = threading.Lock()
        self.counters: dict[str, int] = {}
        self.seq = 0

    def pick(self, body: Mapping[str, Any]) -> tuple[Scenario, int, Step | None]:
        messages = body.get("messages")
        messages = messages if isinstance(messages, list) else []
        texts = [
            _message_text(m.get("content"))
            for m in messages
            if isinstance(m, Mapping) and m.get("role") in ("system", "developer", "user")
        ]
        prompt = " ".join(texts).lower()
        raw_prompt = "\n".join(texts)
        scenario = next(
            (
                s
                for s in self.script.scenarios
                if (s.match is None or s.match.lower() in prompt)
                and (s.regex is None or s.regex.search(raw_prompt))
            ),
            None,
        )
        if scenario is None:
            return Scenario("<none>", None, ()), 0, None
        if self.script.advance == "turns":
            index = sum(
                1 for m in messages if isinstance(m, Mapping) and m.get("role") == "assistant"
            )
        else:
            with self.lock:
                index = self.counters.get(scenario.name, 0)
                self.counters[scenario.name] = index + 1
        step = scenario.steps[index] if index < len(scenario.steps) else self.script.exhausted
        return scenario, index, step

    def log(self, record: dict[str, Any]) -> None:
        with self.lock:
            self.seq += 1
            record = {"seq": self.seq, "time": time.time(), **record}
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(record) + "\n")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # every request is in the JSONL log; stderr noise would hide test failures

    def _send_json(
        self, status: int, obj: object, headers: Mapping[str, str] | None = None
    ) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _record(self, body: object, **extra: Any) -> None:
        self.server.state.log(
            {
                "method": self.command,
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body,
                **extra,
            }
        )

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._record(None, status=200)
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake_openai"}
                for m in self.server.state.script.models
            ]
            return self._send_json(200, {"object": "list", "data": data})
        self._record(None, status=404)
        return self._send_json(404, _error(404, f"unknown path {self.path!r}"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._record(None, raw_body=raw.decode("utf-8", "replace"), status=400)
            return self._send_json(400, _error(400, "request body is not valid JSON"))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._record(body, status=404)
            return self._send_json(404, _error(404, f"unknown path {self.path!r}"))
        if not isinstance(body, Mapping):
            self._record(body, status=400)
            return self._send_json(400, _error(400, "request body must be a JSON object"))
        scenario, index, step = self.server.state.pick(body)
        status = 400 if step is None else step.status
        self._record(body, scenario=scenario.name, step=index, status=status)
        if step is None:
            message = (
                f"fake_openai: script exhausted for scenario {scenario.name!r} at step {index}"
            )
            return self._send_json(400, _error(400, message))
        if step.delay:
            time.sleep(step.delay)
        if step.disconnect:
            self.close_connection = True
            return None
        if step.status != 200:
            message = step.error or f"scripted error {step.status}"
            return self._send_json(step.status, _error(step.status, message), step.headers)
        if step.minimal:
            schema = body.get("response_format", {}).get("json_schema", {}).get("schema")
            if not isinstance(schema, Mapping):
                return self._send_json(400, _error(400, "minimal step: the request has no schema"))
            content = json.dumps(minimal_instance(schema, schema))
            step = dataclasses.replace(step, content=content, minimal=False)
        reply = _Reply(body, scenario, index, step)
        if body.get("stream"):
            return self._stream(reply)
        return self._send_json(200, reply.completion(), step.headers)

    def _stream(self, reply: _Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for chunk in reply.chunks():
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


class _Reply:
    """The body (or SSE chunks) of one successful scripted answer."""

    def __init__(self, body: Mapping[str, Any], scenario: Scenario, index: int, step: Step):
        self.body = body
        self.step = step
        self.model = str(body.get("model") or "fake-gpt")
        self.id = f"chatcmpl-{scenario.name}-{index}"
        self.created = int(time.time())
        self.tool_calls: list[dict[str, Any]] = [
            {
                "id": tc.id or f"call_{scenario.name}_{index}_{i}",
                "type": "function",
                "function": {"name": tc.name, "arguments": tc.arguments},
            }
            for i, tc in enumerate(step.tool_calls)
        ]
        self.finish = step.finish_reason or ("tool_calls" if self.tool_calls else "stop")
        prompt = 10 + 5 * index
        self.usage = dict(step.usage or {"prompt_tokens": prompt, "completion_tokens": 7})
        self.usage.setdefault("prompt_tokens", prompt)
        self.usage.setdefault("completion_tokens", 7)
        self.usage["total_tokens"] = self.usage["prompt_tokens"] + self.usage["completion_tokens"]

    def completion(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.step.content}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        choice = {"index": 0, "message": message, "finish_reason": self.finish, "logprobs": None}
        return {**self._head("chat.completion"), "choices": [choice], "usage": self.usage}

    def chunks(self) -> list[dict[str, Any]]:
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        content = self.step.content
        if content:
            # Two pieces, so clients that concatenate deltas are exercised.
            half = len(content) // 2
            deltas += [{"content": content[:half]}, {"content": content[half:]}]
        for i, tc in enumerate(self.tool_calls):
            function = tc["function"]
            head = {"index": i, "id": tc["id"], "type": "function"}
            deltas.append({"tool_calls": [{**head, "function": {"name": function["name"]}}]})
            args = {"index": i, "function": {"arguments": function["arguments"]}}
            deltas.append({"tool_calls": [args]})
        out = [self._chunk(d, None) for d in deltas] + [self._chunk({}, self.finish)]
        options = self.body.get("stream_options")
        if isinstance(options, Mapping) and options.get("include_usage"):
            out.append({**self._head("chat.completion.chunk"), "choices": [], "usage": self.usage})
        return out

    def _chunk(self, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {**self._head("chat.completion.chunk"), "choices": [choice]}

    def _head(self, obj: str) -> dict[str, Any]:
        return {"id": self.id, "object": obj, "created": self.created, "model": self.model}


def _error(status: int, message: str) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a scripted delay must never hold up the process's exit

    def __init__(self, address: tuple[str, int], state: _State) -> None:
        super().__init__(address, _Handler)
        self.state = state


def minimal_instance(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    """The least value `schema` admits (JSON Schema as pydantic and OpenAI strict mode write it)."""
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return minimal_instance(root["$defs"][name], root)
    if "anyOf" in schema:
        return minimal_instance(schema["anyOf"][0], root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        return {k: minimal_instance(properties[k], root) for k in schema.get("required", [])}
    if kind == "array":
        return [minimal_instance(schema["items"], root)] * int(schema.get("minItems", 0))
    if kind in ("number", "integer"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "" if kind == "string" else None


def load_script_file(path: str) -> Script:
    """Read a script file: JSON, or a Python literal (True/None, tuples, comments-free)."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        raw = json.loads(text)
    except ValueError:
        try:
            raw = ast.literal_eval(text)
        except (ValueError, SyntaxError) as exc:
            raise ScriptError(f"{path}: neither JSON nor a Python literal ({exc})") from None
    return parse_script(raw)


def main(argv: list[str] | None = None) -> int:
    """Serve until terminated; exit 2 when the script is unusable."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--script", help="script file (JSON or Python literal)")
    parser.add_argument("--log", help="append every request to this JSONL file")
    args = parser.parse_args(argv)
    try:
        script = load_script_file(args.script) if args.script else parse_script([])
    except (OSError, ScriptError) as exc:
        print(f"fake_openai: {exc}", file=sys.stderr)
        return 2
    server = _Server((args.host, args.port), _State(script, args.log))
    host, port = server.server_address[:2]
    print(f"{LISTENING_PREFIX}http://{host!s}:{port}/v1", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
