"""`Deferred`: a record field computed when first read, then stored in place of itself."""

from __future__ import annotations

from functools import partial
from typing import Any

__all__ = ["Deferred", "computed_on_read"]


class Deferred(partial[Any]):
    """A tool call's arguments or result, or a score's details, computed when first read:
    `Deferred(function, *args)`.

    The trajectory builder hands `ToolCall` its arguments and results as JSON text to parse
    later: most scorers never read them, and parsing every one was a large part of building a
    run. Scorers hand `Score` the makings of their details, which `serve` never reads.
    Reading the field computes the value once and stores it in place of the `Deferred`, so
    every reader (equality, hashing, repr, `to_dict`, pickling, `dataclasses.replace`) sees
    exactly the value that computing it up front gave. The function must not fail.
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        # Two deferred values are the same when they would compute the same way (the builder's
        # views are compared in tests before any field is read).
        if not isinstance(other, Deferred):
            return NotImplemented
        return (self.func, self.args, self.keywords) == (other.func, other.args, other.keywords)

    def __hash__(self) -> int:
        return hash((self.func, self.args))


def computed_on_read(cls: type, name: str, stored_as: str) -> None:
    """Let field `name` of the slotted `cls` hold a `Deferred`, computed when first read.

    `cls.<stored_as>` is then the field's slot itself: assigning it stores a value as it is,
    for an `__init__` written by hand. (The interpreter specialises an assignment to a slot
    into a store at its offset, where assigning `name` calls the property's setter.)
    """
    slot = cls.__dict__[name]  # the slot's own descriptor, which reads and writes the value
    setattr(cls, stored_as, slot)
    get, put = slot.__get__, slot.__set__

    def read(self: object) -> Any:
        value = get(self)
        if value.__class__ is Deferred:
            value = value()
            put(self, value)
        return value

    setattr(cls, name, property(read, put, slot.__delete__, slot.__doc__))
