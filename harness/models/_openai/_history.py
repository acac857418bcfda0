"""Convert a growing history to wire dicts once per message, not once per turn."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from harness.messages import Message

__all__ = ["WireHistory"]


class WireHistory:
    """Remembers the last history an adapter sent and its wire dicts.

    A loop's history only grows, so each request repeats the previous one plus a
    few messages: when the new history starts with the previous one (equal
    messages; usually the very same objects, compared by identity first) only the
    new messages are converted. Any other history is converted in full. The wire
    dicts are shared between requests and must not be mutated.
    """

    __slots__ = ("_convert", "_lock", "_messages", "_wire")

    def __init__(self, convert: Callable[[Message], dict[str, Any]]) -> None:
        self._convert = convert
        self._lock = threading.Lock()
        self._messages: list[Message] = []
        self._wire: list[dict[str, Any]] = []

    def convert(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The wire dicts of ``messages`` (a new list each call)."""
        current = messages[:]  # a list for lists and the loop's history views (C-level copy)
        if not isinstance(current, list):
            current = list(current)
        with self._lock:
            known, wire = self._messages, self._wire
        size = len(known)
        convert = self._convert
        if size and len(current) >= size and current[:size] == known:
            wire = wire + [convert(message) for message in current[size:]]
        else:
            wire = [convert(message) for message in current]
        with self._lock:
            self._messages, self._wire = current, wire
        return list(wire)

    def clear(self) -> None:
        """Forget the remembered history (at the end of a run)."""
        with self._lock:
            self._messages, self._wire = [], []
