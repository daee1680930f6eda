"""The fake language-model server behaves like an OpenAI endpoint for the real `openai` client.

Other tests (agent frameworks, LLM judges) trust it, so its contract is pinned here: replies,
streaming, scripted HTTP errors, delays, scenario routing, and the request log.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import openai
import pytest

from support.fake_openai import ScriptError, parse_script
from support.fake_openai_process import SERVER_SCRIPT, FakeOpenAI

Factory = Callable[..., FakeOpenAI]
USER = [{"role": "user", "content": "hello"}]


def _client(server: FakeOpenAI, **kw: object) -> openai.OpenAI:
    options: dict[str, object] = {"max_retries": 0, "timeout": 10.0, **kw}
    return openai.OpenAI(base_url=server.base_url, api_key=server.api_key, **options)


def test_tool_calls_then_text_follow_the_script_and_every_request_is_logged(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory(
        [
            {
                "tool_calls": [
                    {"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_w"},
                    {"name": "lookup_order", "arguments": '{"order_id": "A-42"'},
                ]
            },
            {"content": "done", "usage": {"prompt_tokens": 3, "completion_tokens": 2}},
        ]
    )
    client = _client(server)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    first = client.chat.completions.create(model="m1", messages=USER, tools=tools)
    second = client.chat.completions.create(model="m1", messages=USER)

    calls = first.choices[0].message.tool_calls or []
    assert [(c.id, c.function.name, c.function.arguments) for c in calls] == [
        ("call_w", "get_weather", '{"city": "Paris"}'),
        ("call_default_0_1", "lookup_order", '{"order_id": "A-42"'),  # malformed on purpose
    ]
    assert first.choices[0].finish_reason == "tool_calls"
    assert second.choices[0].message.content == "done"
    assert second.usage is not None
    assert second.usage.total_tokens == 5
    log = server.requests()
    assert [(r["seq"], r["status"], r["step"]) for r in log] == [(1, 200, 0), (2, 200, 1)]
    assert log[0]["body"]["tools"] == tools
    assert log[0]["headers"]["authorization"] == "Bearer sk-fake"
    assert server.chat_bodies()[1]["messages"] == USER


def test_a_streamed_reply_reassembles_into_the_scripted_text_and_tool_calls(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory(
        [{"content": "sunny in Paris"}, {"tool_calls": [{"name": "f", "arguments": {"x": 1}}]}]
    )
    client = _client(server)
    stream = client.chat.completions.create(
        model="m", messages=USER, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "sunny in Paris"
    assert chunks[-1].usage is not None
    assert chunks[-1].choices == []

    stream = client.chat.completions.create(model="m", messages=USER, stream=True)
    deltas = [tc for c in stream if c.choices for tc in c.choices[0].delta.tool_calls or []]
    assert deltas[0].id == "call_default_1_0"
    assert "".join(d.function.arguments or "" for d in deltas if d.function) == '{"x": 1}'


def test_scripted_429_carries_retry_after_and_the_next_request_succeeds(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory(
        [
            {"status": 429, "headers": {"Retry-After": "2"}, "error": "slow down"},
            {"status": 500},
            {"json": {"score": 0.5, "reason": "ok"}},
        ]
    )
    client = _client(server)
    with pytest.raises(openai.RateLimitError, match="slow down") as rate_limited:
        client.chat.completions.create(model="m", messages=USER)
    assert rate_limited.value.response.headers["retry-after"] == "2"
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="m", messages=USER)
    reply = client.chat.completions.create(model="m", messages=USER)
    assert json.loads(reply.choices[0].message.content or "") == {"score": 0.5, "reason": "ok"}
    assert [r["status"] for r in server.requests()] == [429, 500, 200]


def test_the_openai_client_retries_a_scripted_500_into_the_following_step(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory(
        [{"status": 503, "headers": {"Retry-After": "0.01"}}, {"content": "recovered"}]
    )
    reply = _client(server, max_retries=1).chat.completions.create(model="m", messages=USER)
    assert reply.choices[0].message.content == "recovered"
    assert [r["status"] for r in server.requests()] == [503, 200]


def test_a_delay_longer_than_the_client_timeout_is_a_timeout(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"delay": 5, "content": "too late"}])
    with pytest.raises(openai.APITimeoutError):
        _client(server, timeout=0.3).chat.completions.create(model="m", messages=USER)


def test_a_disconnect_is_a_connection_error(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"disconnect": True}])
    with pytest.raises(openai.APIConnectionError):
        _client(server).chat.completions.create(model="m", messages=USER)


def test_scenarios_route_by_prompt_text_and_turns_advance_by_assistant_messages(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory(
        {
            "advance": "turns",
            "scenarios": [
                {
                    "name": "crash",
                    "match": "CRASH",
                    "steps": [{"content": "c0"}, {"content": "c1"}],
                },
                {"steps": [{"content": "d0"}, {"content": "d1"}]},
            ],
        }
    )
    client = _client(server)

    def ask(messages: list[dict[str, str]]) -> str | None:
        reply = client.chat.completions.create(model="m", messages=messages)
        return reply.choices[0].message.content

    system = {"role": "system", "content": "please crash"}
    assert ask([system, *USER]) == "c0"
    assert ask([system, *USER]) == "c0"  # same conversation, same turn: same answer
    assert ask([system, *USER, {"role": "assistant", "content": "c0"}, *USER]) == "c1"
    assert ask(USER) == "d0"
    assert [(r["scenario"], r["step"]) for r in server.requests()] == [
        ("crash", 0),
        ("crash", 0),
        ("crash", 1),
        ("scenario1", 0),
    ]


def test_a_regex_scenario_matches_the_joined_messages_with_case_and_backreferences(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory(
        {
            "scenarios": [
                # the tag declared in the system message must wrap the word in the user message
                {
                    "name": "tagged",
                    "regex": r"tag=(?P<t>\w+).*<(?P=t)>[^<]*Secret[^<]*</(?P=t)>",
                    "steps": [{"content": "inside"}],
                },
                {"steps": [{"content": "other"}] * 2},
            ]
        }
    )
    client = _client(server)

    def ask(system: str, user: str) -> str | None:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return (
            client.chat.completions.create(model="m", messages=messages).choices[0].message.content
        )

    assert ask("tag=ab", "x <ab> a Secret </ab>") == "inside"
    assert ask("tag=ab", "x <cd> a Secret </cd>") == "other"  # not the declared tag
    assert ask("tag=ab", "x <ab> a secret </ab>") == "other"  # case is kept


def test_an_exhausted_script_answers_400_naming_the_scenario(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"content": "only one"}])
    client = _client(server)
    client.chat.completions.create(model="m", messages=USER)
    with pytest.raises(openai.BadRequestError, match="script exhausted for scenario 'default'"):
        client.chat.completions.create(model="m", messages=USER)


def test_the_unparametrized_fixture_answers_ok_and_lists_a_model(fake_openai: FakeOpenAI) -> None:
    client = _client(fake_openai)
    reply = client.chat.completions.create(model="m", messages=USER)
    assert reply.choices[0].message.content == "ok"
    assert [m.id for m in client.models.list()] == ["fake-gpt"]


@pytest.mark.parametrize("fake_openai", [[{"content": "from param"}]], indirect=True)
def test_the_fixture_takes_its_script_from_indirect_parametrization(
    fake_openai: FakeOpenAI,
) -> None:
    reply = _client(fake_openai).chat.completions.create(model="m", messages=USER)
    assert reply.choices[0].message.content == "from param"


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("steps", "expected a list of steps or an object, got str"),
        ([{"contnet": "x"}], "steps[0]: unknown key 'contnet'"),
        ([{"status": 42}], "steps[0].status: expected an HTTP status code, got 42"),
        ([{"delay": -1}], "steps[0].delay: expected seconds >= 0"),
        ({"steps": [], "advance": "time"}, "script.advance: expected 'requests' or 'turns'"),
        ({"scenarios": [{"steps": [{"tool_calls": [{}]}]}]}, "tool_calls[0]: expected"),
        ({}, "exactly one of 'scenarios' and 'steps'"),
        ({"scenarios": [{"regex": "(", "steps": []}]}, "scenarios[0].regex: not a regular"),
    ],
)
def test_a_malformed_script_is_refused_with_its_path(script: object, message: str) -> None:
    with pytest.raises(ScriptError, match=re.escape(message)):
        parse_script(script)


def test_the_server_process_exits_2_on_an_unreadable_script(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[{'content': 'x', 'oops': 1}]")  # a Python literal, with an unknown key
    proc = subprocess.run(
        [sys.executable, str(SERVER_SCRIPT), "--script", str(bad)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 2
    assert "steps[0]: unknown key 'oops'" in proc.stderr
