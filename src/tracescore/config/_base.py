"""What every config section shares: the frozen base model and an error that points below it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Frozen", "LocatedError"]


class Frozen(BaseModel):
    """A config section: immutable, unknown keys refused, attribute docstrings as descriptions."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class LocatedError(ValueError):
    """A validation error that points below the model it was raised in.

    A model validator can only fail the whole model; `loc` (relative to that model) lets the
    config loader report the exact entry, e.g. `scenarios[0].scorers[2].name`.
    """

    def __init__(self, message: str, loc: tuple[str | int, ...]) -> None:
        super().__init__(message)
        self.loc = loc
