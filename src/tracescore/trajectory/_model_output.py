"""What a model call answered: its final text and the tool calls it asked for.

Both come from the span's output messages (`gen_ai.output.messages`), read here in one pass
over their parts; the general readers in `_messages` define what each is.
"""

from __future__ import annotations

from typing import Any

from tracescore import semconv
from tracescore.trajectory._messages import last_assistant_text, tool_requests
from tracescore.trajectory._openai_agents import is_message_repr, openai_message_parts
from tracescore.trajectory._values import as_text, clean_id
from tracescore.trajectory._views import MISSING, RequestValues, request_values

__all__ = ["answer_and_requests"]


def answer_and_requests(
    messages: list[dict[str, Any]],
) -> tuple[str | None, tuple[RequestValues, ...]]:
    """`(last_assistant_text(m), request_values(tool_requests(m)))` of
    `m = openai_message_parts(messages)`.

    In one pass over the parts, for messages with no OpenAI repr to rewrite (the usual case):
    the two reads and the check for a repr each walked every part, and the model span is the
    span read most often.
    """
    text: str | None = None
    requests: list[RequestValues] = []
    for message in messages:
        parts = message.get(_MSG_PARTS)
        answers = message.get(_MSG_ROLE) in _ANSWER_ROLES
        texts: list[str] | None = None  # made for the first text (most messages have none)
        # Exact classes first (what JSON parses to): no isinstance call for most values.
        if parts.__class__ is list or isinstance(parts, list):
            for part in parts:
                if part.__class__ is not dict and not isinstance(part, dict):
                    continue
                kind = part.get(_PART_TYPE)
                if kind == _PART_TOOL_CALL:
                    # ASCII text (most names and ids) is as_text's own value: no call needed.
                    name = part.get(_PART_NAME)
                    if name.__class__ is not str or not name.isascii():
                        name = as_text(name)
                    if name:
                        call_id = part.get(_PART_ID)
                        if call_id.__class__ is str and call_id.isascii():
                            call_id = call_id.strip() or None
                        else:
                            call_id = clean_id(call_id)
                        arguments = part.get(_PART_ARGUMENTS, MISSING)
                        requests.append((name, call_id, arguments))
                elif kind == _PART_TEXT:
                    content = part.get(_PART_CONTENT)
                    if is_message_repr(content):  # rewritten first: the general reads
                        outputs = openai_message_parts(messages)
                        return last_assistant_text(outputs), request_values(tool_requests(outputs))
                    if answers:
                        found = as_text(content)
                        if found is not None:
                            if texts is None:
                                texts = [found]
                            else:
                                texts.append(found)
        if answers:
            # The last assistant (or role-less) message with text is the answer.
            if texts:
                answer: str | None = "\n".join(texts)
            else:  # older producers' `content` text; most messages of tool calls have none
                content = message.get(_PART_CONTENT)
                answer = as_text(content) if content is not None else None
            if answer:
                text = answer
    return text, tuple(requests)


_ANSWER_ROLES = (semconv.MSG_ROLE_ASSISTANT, None)
# Names bound here: one lookup fewer each per part read.
_MSG_PARTS = semconv.MSG_PARTS
_MSG_ROLE = semconv.MSG_ROLE
_PART_TYPE = semconv.PART_TYPE
_PART_TOOL_CALL = semconv.PART_TOOL_CALL
_PART_NAME = semconv.PART_NAME
_PART_ID = semconv.PART_ID
_PART_ARGUMENTS = semconv.PART_ARGUMENTS
_PART_TEXT = semconv.PART_TEXT
_PART_CONTENT = semconv.PART_CONTENT
