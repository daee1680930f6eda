"""A run as a judge reads it: every step, sub-agents included, failures shown as failures."""

from __future__ import annotations

from judges._helpers import real_runs, shop_run
from tracescore.judges.render import WITHHELD, render_run, withhold
from tracescore.judges.settings import JudgeFields


def test_calls_are_numbered_across_sub_agents_with_their_status() -> None:
    rendered = render_run(shop_run())
    assert [(n.number, n.call.name, n.depth) for n in rendered.calls] == [
        (1, "lookup_order", 0),
        (2, "get_weather", 0),
        (3, "refund", 1),
    ]
    text = rendered.text
    assert "[call 1] tool 'lookup_order': completed" in text
    assert "[call 2] tool 'get_weather': FAILED (TimeoutError)" in text
    assert "error: weather service timed out" in text
    assert "[sub-agent] 'billing' ran these steps:" in text
    assert "    [call 3] tool 'refund': NOT EXECUTED, paused (approval_required)" in text
    assert text.index("user request:") < text.index("steps:") < text.index("final answer:")


def test_a_recorded_sub_agent_run_is_shown_whole_to_the_parent_judge() -> None:
    parent = next(r for r in real_runs("subagent.otlp.json") if r.agent == "support_agent")
    rendered = render_run(parent)
    assert [n.call.name for n in rendered.calls] == ["ask_billing", "lookup_invoice"]
    assert '"total_cents": 12900' in rendered.text  # the sub-agent's own tool result


def test_a_recorded_tool_exception_is_shown_as_failed() -> None:
    (shop,) = real_runs("tool_exception.otlp.json")
    text = render_run(shop).text
    assert "tool 'delete_account': FAILED (RuntimeError)" in text
    assert "permission denied for user 7" in text
    assert "final answer:\n  (none recorded)" in text


def test_long_values_are_cut_in_the_middle_with_a_marker() -> None:
    run = shop_run(output="start " + "y" * 5000 + " end")
    text = render_run(run, value_limit=500).text
    assert "truncated" in text
    assert "start " in text
    assert " end" in text


def test_the_final_answer_can_be_left_out() -> None:
    assert "final answer" not in render_run(shop_run(), include_output=False).text


def test_judge_fields_withhold_results_and_one_tools_arguments_with_a_marker() -> None:
    fields = JudgeFields(exclude=("results", "get_weather.arguments", "errors"))
    run = withhold(shop_run(), fields)
    lookup, weather, sub = run.steps
    assert lookup.result == WITHHELD  # type: ignore[union-attr]
    assert lookup.arguments == {"order_id": "A-42"}  # type: ignore[union-attr]
    assert weather.arguments == WITHHELD  # type: ignore[union-attr]
    assert weather.error_message == WITHHELD  # type: ignore[union-attr]
    assert sub.steps[0].arguments == {"order_id": "A-42"}  # type: ignore[union-attr]
    assert run.input == shop_run().input


def test_judge_fields_can_withhold_the_request_and_answer() -> None:
    run = withhold(shop_run(), JudgeFields(exclude=("input", "output")))
    assert (run.input, run.output) == (WITHHELD, WITHHELD)


def test_nothing_excluded_leaves_the_run_unchanged() -> None:
    assert withhold(shop_run(), JudgeFields()) == shop_run()
