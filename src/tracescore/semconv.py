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

# --- Trajectory builder: names read per convention (conventions.md §8) --------------------
# OTel GenAI extras. `gen_ai.agent.call.id` is pydantic-ai's run id (not in the registry).
OP_INVOKE_WORKFLOW: Final = "invoke_workflow"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
GEN_AI_SYSTEM: Final = "gen_ai.system"
MSG_ROLE: Final = "role"
MSG_PARTS: Final = "parts"
MSG_ROLE_USER: Final = "user"
MSG_ROLE_ASSISTANT: Final = "assistant"
MSG_ROLE_TOOL: Final = "tool"
MSG_ROLE_SYSTEM: Final = "system"
PART_TYPE: Final = "type"
PART_CONTENT: Final = "content"
PART_ID: Final = "id"
PART_NAME: Final = "name"
PART_ARGUMENTS: Final = "arguments"
# The schema says `response`; the registry examples say `result`: both are accepted.
PART_RESPONSE: Final = "response"
PART_RESULT: Final = "result"
TOOL_DEF_FUNCTION: Final = "function"
TOOL_DEF_NAME: Final = "name"
TOOL_DEF_DESCRIPTION: Final = "description"
# MCP CallToolResult flag for a failed tool (error.type then SHOULD be `tool_error`).
MCP_IS_ERROR: Final = "isError"
# Vercel `execution-denied` tool responses ({"denied": true, "reason": ...}).
RESPONSE_DENIED: Final = "denied"
RESPONSE_EXECUTION_DENIED: Final = "execution-denied"
# AI SDK 5 tool outputs of a failed execution ({"type": "error-text" | "error-json", ...}).
RESPONSE_ERROR_TYPES: Final = frozenset({"error-text", "error-json"})
DECISION_DENY: Final = "deny"
DECISION_REQUIRE_APPROVAL: Final = "require_approval"

# pydantic-ai (current spans are GenAI; these are its extras and the legacy v2 names).
PYDANTIC_AI_SCOPE: Final = "pydantic-ai"
PYDANTIC_AI_ALL_MESSAGES: Final = "pydantic_ai.all_messages"
PYDANTIC_AI_FINAL_RESULT: Final = "final_result"
PYDANTIC_AI_AGENT_NAME: Final = "agent_name"
PYDANTIC_AI_MODEL_NAME: Final = "model_name"
PYDANTIC_AI_DEFERRAL_NAME: Final = "pydantic_ai.tool.deferral.name"
PYDANTIC_AI_FAILURE_STAGE: Final = "pydantic_ai.tool.failure_stage"
PYDANTIC_AI_FAILURE_VALIDATION: Final = "validation"
PYDANTIC_AI_RETRY_CAUSE: Final = "pydantic_ai.tool.retry.cause"
PYDANTIC_AI_MODEL_REQUEST_PARAMETERS: Final = "model_request_parameters"
PYDANTIC_AI_OUTPUT_TOOLS: Final = "output_tools"
PYDANTIC_AI_FUNCTION_TOOLS: Final = "function_tools"
PYDANTIC_AI_NEW_MESSAGE_INDEX: Final = "pydantic_ai.new_message_index"
PYDANTIC_AI_TOOL_ARGUMENTS: Final = "tool_arguments"
PYDANTIC_AI_TOOL_RESPONSE: Final = "tool_response"
PYDANTIC_AI_DEFERRED: Final = "CallDeferred"
PYDANTIC_AI_APPROVAL_REQUIRED: Final = "ApprovalRequired"
# The default name of pydantic-ai's output tool (several outputs: `final_result_<Type>`).
PYDANTIC_AI_OUTPUT_TOOL: Final = "final_result"
LOGFIRE_MSG: Final = "logfire.msg"
PYDANTIC_AI_SPAN_RUNNING_TOOL: Final = "running tool"
PYDANTIC_AI_SPAN_OUTPUT_FUNCTION: Final = "running output function"
PYDANTIC_AI_SPAN_AGENT_RUN: Final = "agent run"

# OpenInference (https://github.com/Arize-ai/openinference/tree/main/spec).
OI_SPAN_KIND: Final = "openinference.span.kind"
OI_KIND_TOOL: Final = "TOOL"
OI_KIND_AGENT: Final = "AGENT"
OI_KIND_LLM: Final = "LLM"
OI_KIND_CHAIN: Final = "CHAIN"
OI_KINDS: Final = frozenset(
    {
        "LLM",
        "EMBEDDING",
        "CHAIN",
        "RETRIEVER",
        "RERANKER",
        "TOOL",
        "AGENT",
        "GUARDRAIL",
        "EVALUATOR",
        "PROMPT",
        "UNKNOWN",
    }
)
OI_TOOL_NAME: Final = "tool.name"
OI_TOOL_ID: Final = "tool.id"
OI_TOOL_PARAMETERS: Final = "tool.parameters"
OI_INPUT_VALUE: Final = "input.value"
OI_OUTPUT_VALUE: Final = "output.value"
OI_AGENT_NAME: Final = "agent.name"
OI_GRAPH_NODE_NAME: Final = "graph.node.name"
OI_LLM_MODEL_NAME: Final = "llm.model_name"
OI_LLM_PROMPT_TOKENS: Final = "llm.token_count.prompt"
OI_LLM_COMPLETION_TOKENS: Final = "llm.token_count.completion"
OI_LLM_INPUT_MESSAGES: Final = "llm.input_messages."
OI_LLM_OUTPUT_MESSAGES: Final = "llm.output_messages."
OI_LLM_TOOLS: Final = "llm.tools."
# Suffixes below the flattened `llm.{input,output}_messages.<i>.` and `llm.tools.<i>.` prefixes.
OI_MSG_ROLE: Final = "message.role"
OI_MSG_CONTENT: Final = "message.content"
OI_MSG_CONTENTS_TEXT: Final = "message_content.text"
OI_MSG_TOOL_CALL_ID: Final = "message.tool_call_id"
OI_MSG_TOOL_CALLS: Final = "message.tool_calls"
# The raw OpenAI chat message in output.value (its `tool_calls` keep empty arguments).
OI_RAW_TOOL_CALLS: Final = "tool_calls"
OI_TOOL_CALL_ID: Final = "tool_call.id"
OI_TOOL_CALL_FUNCTION_NAME: Final = "tool_call.function.name"
OI_TOOL_CALL_FUNCTION_ARGUMENTS: Final = "tool_call.function.arguments"
OI_TOOL_JSON_SCHEMA: Final = "tool.json_schema"
AGNO_TOOLS: Final = "agno.tools"
# openinference-instrumentation-openai-agents names a handoff's TOOL span "handoff to <agent>"
# (no tool.name); the model called the SDK's default tool name "transfer_to_<agent>".
OI_HANDOFF_SPAN_PREFIX: Final = "handoff to "
OPENAI_AGENTS_HANDOFF_TOOL_PREFIX: Final = "transfer_to_"
# opentelemetry-instrumentation-openai-agents-v2 records a handoff as its own span.
OP_AGENT_HANDOFF: Final = "agent_handoff"
GEN_AI_HANDOFF_FROM_AGENT: Final = "gen_ai.handoff.from_agent"
GEN_AI_HANDOFF_TO_AGENT: Final = "gen_ai.handoff.to_agent"
# The instrumentation scopes of the OpenAI Agents SDK's two instrumentations. A tool that needs
# approval is exported by both as a successful `execute_tool` span with no result.
OPENAI_AGENTS_SCOPES: Final = frozenset(
    {
        "opentelemetry.instrumentation.openai_agents",
        "openinference.instrumentation.openai_agents",
    }
)
# What the SDK tells the model for a rejected approval (`agents.tool`
# DEFAULT_APPROVAL_REJECTION_MESSAGE): in a resumed run, the only record of the rejection.
OPENAI_AGENTS_REJECTION_MESSAGE: Final = "Tool execution was not approved."
# Agno teams delegate through tools the team makes: to one member (`member_id`) or to all.
AGNO_DELEGATE_TO_MEMBER: Final = "delegate_task_to_member"
AGNO_DELEGATE_TO_MEMBERS: Final = "delegate_task_to_members"
AGNO_MEMBER_ID: Final = "member_id"
AGNO_SCOPE: Final = "openinference.instrumentation.agno"
# Microsoft Agent Framework's HandoffBuilder gives each agent a `handoff_to_<agent>` tool that
# never runs (a middleware answers it with {"handoff_to": "<agent>"}, and no tool span).
MAF_HANDOFF_TOOL_PREFIX: Final = "handoff_to_"
MAF_HANDOFF_RESULT_KEY: Final = "handoff_to"
# A handoff to every member of a team at once.
HANDOFF_ALL_MEMBERS: Final = "*"

# Vercel AI SDK legacy `ai.*` spans (the GenAI spans of @ai-sdk/otel are plain GenAI).
AI_OPERATION_ID: Final = "ai.operationId"
AI_TOOL_CALL_SPAN: Final = "ai.toolCall"
AI_SPAN_PREFIX: Final = "ai."
AI_TOOL_CALL_NAME: Final = "ai.toolCall.name"
AI_TOOL_CALL_ID: Final = "ai.toolCall.id"
AI_TOOL_CALL_ARGS: Final = "ai.toolCall.args"
AI_TOOL_CALL_RESULT: Final = "ai.toolCall.result"
AI_FUNCTION_ID: Final = "ai.telemetry.functionId"
AI_RESOURCE_NAME: Final = "resource.name"
AI_PROMPT: Final = "ai.prompt"
AI_PROMPT_MESSAGES: Final = "ai.prompt.messages"
AI_PROMPT_TOOLS: Final = "ai.prompt.tools"
AI_RESPONSE_TEXT: Final = "ai.response.text"
AI_RESPONSE_TOOL_CALLS: Final = "ai.response.toolCalls"
AI_RESPONSE_MODEL: Final = "ai.response.model"
AI_MODEL_ID: Final = "ai.model.id"
AI_USAGE_PROMPT_TOKENS: Final = "ai.usage.promptTokens"
AI_USAGE_COMPLETION_TOKENS: Final = "ai.usage.completionTokens"
AI_USAGE_INPUT_TOKENS: Final = "ai.usage.inputTokens"
AI_USAGE_OUTPUT_TOKENS: Final = "ai.usage.outputTokens"
# Operation ids of model-call spans (one per LLM round trip).
AI_MODEL_OPERATIONS: Final = frozenset(
    {
        "ai.generateText.doGenerate",
        "ai.streamText.doStream",
        "ai.generateObject.doGenerate",
        "ai.streamObject.doStream",
    }
)
# Vercel message JSON (ai.prompt.messages / ai.response.toolCalls).
AI_TOOL_CALL_ID_KEY: Final = "toolCallId"
AI_TOOL_NAME_KEY: Final = "toolName"
AI_TOOL_ARGS_KEY: Final = "args"
AI_TOOL_INPUT_KEY: Final = "input"
AI_TOOL_OUTPUT_KEY: Final = "output"
AI_PART_TOOL_RESULT: Final = "tool-result"
AI_PART_TOOL_CALL: Final = "tool-call"

# OpenLLMetry / Traceloop.
TRACELOOP_SPAN_KIND: Final = "traceloop.span.kind"
TRACELOOP_KIND_TOOL: Final = "tool"
TRACELOOP_KIND_AGENT: Final = "agent"
TRACELOOP_KIND_WORKFLOW: Final = "workflow"
TRACELOOP_ENTITY_NAME: Final = "traceloop.entity.name"
TRACELOOP_ENTITY_INPUT: Final = "traceloop.entity.input"
TRACELOOP_ENTITY_OUTPUT: Final = "traceloop.entity.output"
TRACELOOP_ARGS: Final = "args"
TRACELOOP_KWARGS: Final = "kwargs"
# OpenLLMetry's legacy flattened chat spans (traceloop-sdk 0.40.x instrumentations): the
# request type instead of `gen_ai.operation.name`, messages flattened under indexed prefixes.
LLM_REQUEST_TYPE: Final = "llm.request.type"
LLM_MODEL_REQUEST_TYPES: Final = frozenset({"chat", "completion"})
LLM_PROMPTS: Final = "gen_ai.prompt."
LLM_COMPLETIONS: Final = "gen_ai.completion."
LLM_REQUEST_FUNCTIONS: Final = "llm.request.functions."
LLM_USAGE_PROMPT_TOKENS: Final = "llm.usage.prompt_tokens"
LLM_USAGE_COMPLETION_TOKENS: Final = "llm.usage.completion_tokens"
# Suffixes below the indexed prefixes above (and below `tool_calls.<k>.` in a message).
LLM_MSG_ROLE: Final = "role"
LLM_MSG_CONTENT: Final = "content"
LLM_MSG_TOOL_CALL_ID: Final = "tool_call_id"
LLM_MSG_TOOL_CALLS: Final = "tool_calls."
LLM_TOOL_CALL_ID: Final = "id"
LLM_TOOL_CALL_NAME: Final = "name"
LLM_TOOL_CALL_ARGUMENTS: Final = "arguments"
LLM_FUNCTION_NAME: Final = "name"

# Mastra exporter.
MASTRA_SPAN_TYPE: Final = "mastra.span.type"
MASTRA_TOOL_TYPES: Final = frozenset({"tool_call", "mcp_tool_call"})
MASTRA_AGENT_TYPES: Final = frozenset({"agent_run"})
MASTRA_MODEL_TYPES: Final = frozenset({"model_generation", "llm_generation"})
MASTRA_AGENT_RUN_INPUT: Final = "mastra.agent_run.input"
MASTRA_AGENT_RUN_OUTPUT: Final = "mastra.agent_run.output"

# --- Scorers (scorers/): payload keys read under `compat: mastra` --------------------------
# Mastra's noToolErrors treats a tool result object with a truthy `error` field as a failure.
MASTRA_RESULT_ERROR: Final = "error"

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

# --- Re-emit (export/): labels, events, spans, resource -----------------------------------
# Label of a score whose scorer failed (no value; `error.type` says why) and of a run the
# scorer could not score (no value, no error, e.g. nothing to check).
LABEL_ERROR: Final = "error"
LABEL_SKIPPED: Final = "skipped"
# Semconv fallback value of `error.type` when no low-cardinality class name is known.
ERROR_TYPE_OTHER: Final = "_OTHER"
# Pre-1.5 OTLP receivers only see the event name as this LogRecord attribute; newer ones read
# the LogRecord `event_name` field. We set both.
EVENT_NAME: Final = "event.name"
# `mode: fanout` span, named f"{EVALUATE_SPAN_NAME} {agent}".
EVALUATE_SPAN_NAME: Final = "evaluate"
SCOPE_NAME: Final = "tracescore"
SERVICE_NAME: Final = "service.name"
SERVICE_VERSION: Final = "service.version"

# --- Metrics we emit ----------------------------------------------------------------------
# gen_ai.evaluation.score follows Splunk util-genai (the only precedent; SCG defines none).
METRIC_EVALUATION_SCORE: Final = "gen_ai.evaluation.score"
METRIC_EVALUATION_ERRORS: Final = "tracescore.evaluation.errors"
METRIC_RUNS: Final = "tracescore.runs"
METRIC_TOOL_CALLS: Final = "tracescore.tool_calls"
METRIC_SPANS_RECEIVED: Final = "tracescore.spans.received"
METRIC_SPANS_REJECTED: Final = "tracescore.spans.rejected"
METRIC_REQUESTS_REFUSED: Final = "tracescore.requests.refused"
METRIC_SPANS_FORWARDED: Final = "tracescore.spans.forwarded"
METRIC_SPANS_LATE: Final = "tracescore.spans.late"
METRIC_SPANS_DROPPED: Final = "tracescore.spans.dropped"
METRIC_RUNS_BUFFERED: Final = "tracescore.runs.buffered"
METRIC_BYTES_BUFFERED: Final = "tracescore.bytes.buffered"
METRIC_SCORING_DURATION: Final = "tracescore.scoring.duration"
METRIC_EXPORT_DURATION: Final = "tracescore.export.duration"
METRIC_EXPORT_FAILURES: Final = "tracescore.export.failures"
METRIC_EXPORT_DROPPED: Final = "tracescore.export.dropped"
METRIC_EXPORT_QUEUE_ITEMS: Final = "tracescore.export.queue.items"
METRIC_EXPORT_QUEUE_BYTES: Final = "tracescore.export.queue.bytes"
# Scores by evaluation and result, beside the histogram: pass rates without histogram_quantile.
METRIC_EVALUATION_RESULTS: Final = "tracescore.evaluation.results"
EVALUATION_RESULT: Final = "tracescore.evaluation.result"
# Values of `tracescore.evaluation.result`: a threshold passed or failed, the scorer failed
# (`error`), the run gave it nothing to score (`unscorable`), or a value without a threshold.
RESULT_PASSED: Final = "passed"
RESULT_FAILED: Final = "failed"
RESULT_ERROR: Final = "error"
RESULT_UNSCORABLE: Final = "unscorable"
RESULT_SCORED: Final = "scored"
# Metric attributes (low cardinality only; never a trace id).
TOOL_CALL_STATUS: Final = "tracescore.tool_call.status"
REASON: Final = "reason"
SIGNAL: Final = "signal"
# Folded value once a traffic-derived attribute (tool or agent name) has too many values.
OTHER_VALUE: Final = "_other"
# Values of `reason` on tracescore.spans.dropped set by the exporter.
DROP_EXPORT_REJECTED: Final = "export_rejected"
DROP_EXPORT_PARTIAL: Final = "export_partial"
DROP_EXPORT_RETRIES_EXHAUSTED: Final = "export_retries_exhausted"
DROP_SHUTDOWN: Final = "shutdown"
DROP_EXPORT_UNSUPPORTED: Final = "export_unsupported"
"""The backend does not serve the signal (HTTP 404/405/501, gRPC UNIMPLEMENTED)."""
# Values of `reason` on tracescore.requests.refused: the limit that made a receiver answer
# 503 / UNAVAILABLE, as the config names it (a failed disk write has no config name).
REFUSED_MAX_RUNS: Final = "assembly.max_runs"
REFUSED_MAX_SPANS: Final = "assembly.max_spans"
REFUSED_MAX_BYTES: Final = "assembly.max_bytes"
REFUSED_EXPORT_QUEUE: Final = "exporter.queue_size"
REFUSED_STORAGE_FULL: Final = "storage.max_bytes"
REFUSED_STORAGE_FAILED: Final = "storage_write_failed"
# Every refusal reason: each series of tracescore.requests.refused exists at 0 from start-up.
REFUSED_REASONS: Final = (
    REFUSED_MAX_RUNS,
    REFUSED_MAX_SPANS,
    REFUSED_MAX_BYTES,
    REFUSED_EXPORT_QUEUE,
    REFUSED_STORAGE_FULL,
    REFUSED_STORAGE_FAILED,
)
# Every known drop reason: each series of tracescore.spans.dropped exists at 0 from start-up.
DROP_REASONS: Final = (
    DROP_EXPORT_REJECTED,
    DROP_EXPORT_PARTIAL,
    DROP_EXPORT_RETRIES_EXHAUSTED,
    DROP_SHUTDOWN,
    DROP_EXPORT_UNSUPPORTED,
)
# `signal` of the Phoenix span-annotation exporter, on tracescore.export.* metrics.
SIGNAL_PHOENIX_ANNOTATIONS: Final = "phoenix_annotations"
# `reason` on tracescore.export.failures when annotations are let go, not retried.
ANNOTATIONS_DROPPED_QUEUE_FULL: Final = "dropped_queue_full"
ANNOTATIONS_DROPPED_GAVE_UP: Final = "dropped_gave_up"

# --- Phoenix span annotations (https://arize.com/docs/phoenix, REST /v1/span_annotations) --
PHOENIX_SPAN_ANNOTATIONS_PATH: Final = "/v1/span_annotations"
PHOENIX_ANNOTATOR_LLM: Final = "LLM"
PHOENIX_ANNOTATOR_CODE: Final = "CODE"
# The annotation's `identifier`: one annotation per score name, span and scenario, so a run
# scored again (after a restart) updates its annotation instead of adding a second one.
PHOENIX_IDENTIFIER_PREFIX: Final = "tracescore"
# OpenInference span kind of the `evaluate {agent}` span tracescore emits in fanout mode.
OI_SPAN_KIND_EVALUATOR: Final = "EVALUATOR"
# On the `evaluate {agent}` span, which sits in a trace of its own linked to the agent span
# (so the agent's trace keeps its own latency): the scored agent span, for viewers that do not
# show links.
EVALUATED_TRACE_ID: Final = "tracescore.evaluated.trace_id"
EVALUATED_SPAN_ID: Final = "tracescore.evaluated.span_id"

# --- LLM judges (judges/): the judge's own calls ------------------------------------------
# GenAI client metrics (https://github.com/open-telemetry/semantic-conventions-genai
# docs/gen-ai-metrics.md), recorded for the judge's chat completions, not the agent's.
METRIC_GEN_AI_CLIENT_TOKEN_USAGE: Final = "gen_ai.client.token.usage"
METRIC_GEN_AI_CLIENT_OPERATION_DURATION: Final = "gen_ai.client.operation.duration"
GEN_AI_TOKEN_TYPE: Final = "gen_ai.token.type"
TOKEN_TYPE_INPUT: Final = "input"
TOKEN_TYPE_OUTPUT: Final = "output"
METRIC_JUDGE_CALLS: Final = "tracescore.judge.calls"
METRIC_JUDGE_ERRORS: Final = "tracescore.judge.errors"
METRIC_JUDGE_RETRIES: Final = "tracescore.judge.retries"
METRIC_JUDGE_CACHE_HITS: Final = "tracescore.judge.cache.hits"
METRIC_JUDGE_SKIPPED: Final = "tracescore.judge.skipped"
METRIC_JUDGE_REDACTIONS: Final = "tracescore.judge.redactions"
METRIC_JUDGE_QUEUE_ITEMS: Final = "tracescore.judge.queue.items"
# `serve` with `judge.judge_wait` > 0: held spans released before their judge scores were ready.
METRIC_JUDGE_WAIT_EXPIRED: Final = "tracescore.judge.wait.expired"
# Metric attribute: the outcome of one judge call (`ok` or an error type).
JUDGE_OUTCOME: Final = "tracescore.judge.outcome"
JUDGE_OUTCOME_OK: Final = "ok"
# Values of `reason` on tracescore.judge.skipped (and `skipped: <reason>` in the score error).
JUDGE_SKIP_QUEUE_FULL: Final = "queue_full"
JUDGE_SKIP_BUDGET: Final = "budget"
JUDGE_SKIP_SHUTDOWN: Final = "shutdown"
# Known `error.type` values of tracescore.judge.errors (also `http_<status>`), at 0 from start-up.
JUDGE_ERROR_TYPES: Final = (
    "timeout",
    "rate_limited",
    "server_error",
    "connection",
    "invalid_output",
    "config",
    "judge_required",
)


def score_attribute(prefix: str, scorer_name: str, suffix: str) -> str:
    """The span attribute carrying one part of a score, e.g. `eval.tool_calls.score`."""
    return f"{prefix}.{scorer_name}.{suffix}"
