"""`llm_tool_call_accuracy`: was each tool call the right one for the user's request?

Mastra's LLM tool-call accuracy scorer (reference/scorers.md §3.2): the judge sees the request,
the available tools and the run, and returns per call {tool, appropriate, reasoning} plus the
tools it should have called. Score = appropriate / evaluated; with nothing evaluated, 0 if a
tool is missing, else 1 (the agent rightly answered or asked for clarification).

Unlike Mastra, by default the judge must answer for exactly the calls it is asked about
(numbered in the rendering), so it cannot skip or merge calls to change the denominator: the
answer's schema has one required property per call (judges.answer_schema), so a server that
enforces the schema cannot leave one out; `compat: mastra` uses the judge's own list, attempted
calls and Mastra's rounding.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from tracescore import semconv
from tracescore.judges.answer_schema import keyed_answer_model, keyed_entries
from tracescore.judges.base import JudgeScorerBase, mastra_round2
from tracescore.judges.prompts import JudgeRequest
from tracescore.judges.render import render_run
from tracescore.model.trajectory import Trajectory
from tracescore.scorers.base import CallPolicy, Outcome, select_calls

if TYPE_CHECKING:
    from tracescore.judges.client import JudgeClient

__all__ = [
    "CallEvaluation",
    "CallVerdict",
    "LlmToolCallAccuracy",
    "ToolCallAccuracyAnswer",
    "ToolSpec",
    "tool_call_value",
]


class ToolSpec(BaseModel):
    """An available tool: a bare name in YAML, or `{name, description}`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str | None = None

    @model_validator(mode="before")
    @classmethod
    def bare_name(cls, data: Any) -> Any:
        return {"name": data} if isinstance(data, str) else data


class CallEvaluation(BaseModel):
    """The judge's verdict on one call."""

    model_config = ConfigDict(extra="forbid")

    call: int
    tool: str
    appropriate: bool
    reasoning: str


class CallVerdict(BaseModel):
    """The judge's verdict on one call, under the call's own key in the answer."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    appropriate: bool
    reasoning: str


_KEYED_SHAPE = (
    "Return `evaluations` as an object with exactly one entry per listed call, under the key "
    "`call_<number>` (`tool` = its tool name), and `missing_tools` (names from the available "
    "tools, or an empty list)."
)
_LIST_SHAPE = (
    "Return one evaluation per listed call (field `call` = its number, `tool` = its tool name), "
    "and `missing_tools` (names from the available tools, or an empty list)."
)


class ToolCallAccuracyAnswer(BaseModel):
    """What the judge returns."""

    model_config = ConfigDict(extra="forbid")

    evaluations: list[CallEvaluation]
    missing_tools: list[str]


def tool_call_value(answer: ToolCallAccuracyAnswer, *, mastra: bool) -> float:
    """The score of an answer (pure, so the formula is tested without a judge)."""
    if not answer.evaluations:
        # Nothing judged: right (a direct answer, a clarifying question) unless a tool was due.
        return 0.0 if answer.missing_tools else 1.0
    value = sum(1 for e in answer.evaluations if e.appropriate) / len(answer.evaluations)
    return mastra_round2(value) if mastra else value


class LlmToolCallAccuracy(JudgeScorerBase):
    """Judge whether each tool call served the user's explicit request."""

    type: Literal["llm_tool_call_accuracy"]
    template_name = "llm_tool_call_accuracy"
    template_version = 2

    available_tools: tuple[ToolSpec, ...] | None = None
    """Tools the agent could call; default: the ones recorded on the trace."""
    calls: CallPolicy = "clean"
    """Which calls are judged: `clean` executions, or every `attempted` call."""
    include_subagents: bool = False
    """Also judge the calls sub-agents made (they are always shown as context)."""
    compat: Literal["mastra"] | None = None
    """`mastra`: attempted calls, the judge's own list as denominator, rounding to 2 places."""

    @field_validator("available_tools")
    @classmethod
    def unique_tools(cls, value: tuple[ToolSpec, ...] | None) -> tuple[ToolSpec, ...] | None:
        if value is not None:
            names = [t.name for t in value]
            dupes = sorted({n for n in names if names.count(n) > 1})
            if dupes:
                raise ValueError(f"duplicate tool names in available_tools: {dupes}")
        return value

    async def ajudge(self, trajectory: Trajectory, judge: JudgeClient) -> Outcome:
        if not trajectory.input:
            return Outcome(None, "no user request recorded: nothing to judge the calls against")
        mastra = self.compat == "mastra"
        policy: CallPolicy = "attempted" if mastra else self.calls
        rendered = render_run(trajectory, value_limit=judge.value_limit)
        numbers = {id(n.call): n.number for n in rendered.calls}
        chosen = select_calls(trajectory, policy, include_subagents=self.include_subagents)
        wanted = [numbers[id(c)] for c in chosen if id(c) in numbers]
        fields: dict[str, str] = {
            "call_numbers": ", ".join(map(str, wanted)) if wanted else "none (no calls to judge)",
            "answer_shape": _LIST_SHAPE if mastra else _KEYED_SHAPE,
        }
        data = {"run": rendered.text}
        if self.available_tools is not None:
            fields["tools"] = _tool_list(self.available_tools)
        else:
            data["tools"] = _tool_list(_recorded_tools(trajectory))
        digest = self.digest(judge.model, judge.temperature)
        if mastra:
            listed = await judge.ask(
                JudgeRequest(self.template(), ToolCallAccuracyAnswer, digest, fields, data)
            )
            result, cached = listed.value, listed.cached
        else:
            keys = tuple(sorted(wanted))
            keyed = keyed_answer_model(
                "ToolCallAccuracyAnswer", CallVerdict, keys, (("missing_tools", list[str]),)
            )
            answer = await judge.ask(JudgeRequest(self.template(), keyed, digest, fields, data))
            result = ToolCallAccuracyAnswer(
                evaluations=[
                    CallEvaluation(call=n, **entry)
                    for n, entry in keyed_entries(answer.value, keys)
                ],
                missing_tools=answer.value.missing_tools,  # type: ignore[attr-defined]
            )
            cached = answer.cached
        evaluations = result.evaluations
        value = tool_call_value(result, mastra=mastra)
        details = {
            "evaluations": [e.model_dump() for e in evaluations],
            "missing_tools": list(result.missing_tools),
            "template": self.template().id,
            "cached": cached,
        }
        return Outcome(value, _explain(evaluations, result.missing_tools, value), details=details)


def _explain(evaluations: list[CallEvaluation], missing: list[str], value: float) -> str:
    if not evaluations:
        if missing:
            return f"no tool was called, but the request needed: {', '.join(missing)}"
        return "no tool calls to judge, and none was needed (a direct answer or clarification)"
    good = sum(1 for e in evaluations if e.appropriate)
    parts = [f"{good} of {len(evaluations)} judged calls appropriate ({value:.2f})"]
    for e in evaluations:
        if not e.appropriate:
            parts.append(f"call {e.call} {e.tool!r} inappropriate: {e.reasoning}")
    if missing:
        parts.append(f"missing tools: {', '.join(missing)}")
    return "; ".join(parts)


def _tool_list(tools: tuple[ToolSpec, ...]) -> str:
    if not tools:
        return "(none recorded)"
    return "\n".join(
        f"- {t.name}: {t.description}" if t.description else f"- {t.name}" for t in tools
    )


def _recorded_tools(trajectory: Trajectory) -> tuple[ToolSpec, ...]:
    """Tools from `gen_ai.tool.definitions` on the agent span, else the recorded names."""
    raw = trajectory.attributes.get(semconv.GEN_AI_TOOL_DEFINITIONS)
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raw = None
    specs: list[ToolSpec] = []
    if isinstance(raw, list | tuple):
        for item in raw:
            spec = _definition(item)
            if spec is not None and all(s.name != spec.name for s in specs):
                specs.append(spec)
    known = {s.name for s in specs}
    specs.extend(ToolSpec(name=n) for n in trajectory.available_tools if n not in known)
    return tuple(specs)


def _definition(item: Any) -> ToolSpec | None:
    if isinstance(item, str):
        return ToolSpec(name=item)
    if not isinstance(item, dict):
        return None
    inner = item.get(semconv.TOOL_DEF_FUNCTION)
    source = inner if isinstance(inner, dict) else item
    name = source.get(semconv.TOOL_DEF_NAME)
    description = source.get(semconv.TOOL_DEF_DESCRIPTION)
    if not isinstance(name, str) or not name:
        return None
    return ToolSpec(name=name, description=description if isinstance(description, str) else None)
