"""Config section of the LLM judges (any OpenAI-compatible chat-completions endpoint)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["JudgeSettings"]


class JudgeSettings(BaseModel):
    """The default judge; scorers may override any field."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    base_url: str
    model: str
