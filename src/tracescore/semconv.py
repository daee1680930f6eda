"""Every attribute, event and metric name tracescore reads or emits.

No other module writes these names as string literals. Sources: the OpenTelemetry GenAI
semantic conventions (https://github.com/open-telemetry/semantic-conventions-genai), the
OpenInference spec (https://github.com/Arize-ai/openinference/tree/main/spec), the Vercel AI
SDK, OpenLLMetry, pydantic-ai and Mastra (see reference/conventions.md §8 in the team notes).
Names tracescore itself defines start with `tracescore.`.
"""

from __future__ import annotations

from typing import Final

# --- OTel GenAI: operations ---------------------------------------------------------------
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
OP_EXECUTE_TOOL: Final = "execute_tool"
OP_INVOKE_AGENT: Final = "invoke_agent"
OP_CREATE_AGENT: Final = "create_agent"
OP_CHAT: Final = "chat"
OP_GENERATE_CONTENT: Final = "generate_content"
OP_TEXT_COMPLETION: Final = "text_completion"
MODEL_OPERATIONS: Final = frozenset({OP_CHAT, OP_GENERATE_CONTENT, OP_TEXT_COMPLETION})

# --- OTel GenAI: agents -------------------------------------------------------------------
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_AGENT_ID: Final = "gen_ai.agent.id"
GEN_AI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
GEN_AI_SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
GEN_AI_TOOL_DEFINITIONS: Final = "gen_ai.tool.definitions"

# --- OTel GenAI: tools --------------------------------------------------------------------
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
GEN_AI_TOOL_TYPE: Final = "gen_ai.tool.type"
# Proposed event for pre-execution decisions (allow / deny / require_approval).
GEN_AI_TOOL_CALL_DECISION_EVENT: Final = "gen_ai.tool.call.decision"
GEN_AI_TOOL_CALL_DECISION_OUTCOME: Final = "gen_ai.tool.call.decision.outcome"

# --- OTel GenAI: models -------------------------------------------------------------------
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
# Older conventions (<= v1.26) named them prompt/completion tokens.
GEN_AI_USAGE_PROMPT_TOKENS: Final = "gen_ai.usage.prompt_tokens"
GEN_AI_USAGE_COMPLETION_TOKENS: Final = "gen_ai.usage.completion_tokens"

# --- Errors and exceptions ----------------------------------------------------------------
ERROR_TYPE: Final = "error.type"
ERROR_MESSAGE: Final = "error.message"
EXCEPTION_EVENT: Final = "exception"
EXCEPTION_TYPE: Final = "exception.type"
EXCEPTION_MESSAGE: Final = "exception.message"
MCP_TOOL_ERROR: Final = "tool_error"

# --- Message JSON parts (gen_ai.input/output.messages) ------------------------------------
PART_TOOL_CALL: Final = "tool_call"
PART_TOOL_CALL_RESPONSE: Final = "tool_call_response"
PART_TEXT: Final = "text"

# --- Evaluation results we emit (gen_ai.evaluation.result) --------------------------------
GEN_AI_EVALUATION_RESULT_EVENT: Final = "gen_ai.evaluation.result"
GEN_AI_EVALUATION_NAME: Final = "gen_ai.evaluation.name"
GEN_AI_EVALUATION_SCORE_VALUE: Final = "gen_ai.evaluation.score.value"
GEN_AI_EVALUATION_SCORE_LABEL: Final = "gen_ai.evaluation.score.label"
GEN_AI_EVALUATION_EXPLANATION: Final = "gen_ai.evaluation.explanation"

# --- tracescore's own attributes ----------------------------------------------------------
TRACESCORE_VERDICT: Final = "tracescore.verdict"
TRACESCORE_SCENARIO: Final = "tracescore.scenario"
TRACESCORE_DIGEST: Final = "tracescore.digest"
TRACESCORE_COMPLETE: Final = "tracescore.complete"
# Span attributes on the scored span: f"{prefix}.{name}.score" etc., prefix "eval" by default.
DEFAULT_SCORE_ATTRIBUTE_PREFIX: Final = "eval"
SCORE_SUFFIX: Final = "score"
LABEL_SUFFIX: Final = "label"
EXPLANATION_SUFFIX: Final = "explanation"
LABEL_PASS: Final = "pass"
LABEL_FAIL: Final = "fail"


def score_attribute(prefix: str, scorer_name: str, suffix: str) -> str:
    """The span attribute carrying one part of a score, e.g. `eval.tool_calls.score`."""
    return f"{prefix}.{scorer_name}.{suffix}"
