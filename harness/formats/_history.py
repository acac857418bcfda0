"""Convert a growing history to wire dicts (and their JSON) once per message, not once per turn.

An algorithmic speed-up of the client side of every format: a loop's history only
grows, so each request converts (and JSON-encodes) only the messages added since the
previous one. The SDK fast path (``harness.models._openai._fast``) posts the joined text.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from harness.formats._json import encode_json
from harness.messages import AssistantMessage, Message

__all__ = ["TurnKey", "WireHistory", "message_key"]

TurnKey = tuple[str, ...]
"""Identifies an assistant turn in later histories (``message_key``)."""


def message_key(message: AssistantMessage) -> TurnKey:
    """Identifies an assistant turn in later histories (its call ids, else its text): how
    an adapter finds the turn to send opaque items (reasoning, thinking) back with."""
    if message.tool_calls:
        return ("calls", *(call.id for call in message.tool_calls))
    return ("text", message.content or "", message.refusal or "")


Convert = Callable[[Message], "dict[str, Any] | list[dict[str, Any]]"]


class WireHistory:
    """Remembers the last history an adapter sent, its wire dicts and their JSON text.

    A loop's history only grows, so each request repeats the previous one plus a
    few messages: when the new history starts with the previous one (equal
    messages; usually the very same objects, compared by identity first) only the
    new messages are converted (and encoded). Any other history is converted in
    full. The wire dicts are shared between requests and must not be mutated.

    The format's encoder passes ``convert``, which turns one message into one wire dict
    (Chat Completions) or a list of them (Responses API input items); the result is
    always the flat list.
    """

    __slots__ = ("_last", "_lock", "_messages", "_text", "_wire")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._messages: list[Message] = []
        self._wire: list[dict[str, Any]] = []
        self._text: list[str] | None = []
        self._last: list[dict[str, Any]] | None = None

    def convert(self, messages: Sequence[Message], convert: Convert) -> list[dict[str, Any]]:
        """The wire dicts of ``messages`` (a new list each call).

        ``convert`` converts this call's new messages (it may see state known only now,
        such as reasoning items); the earlier ones keep their remembered conversion.
        """
        current = messages[:]  # a list for lists and the loop's history views (C-level copy)
        if not isinstance(current, list):
            current = list(current)
        with self._lock:
            known, wire, text = self._messages, self._wire, self._text
        size = len(known)
        if not (size and len(current) >= size and current[:size] == known):
            size, wire, text = 0, [], []
        added = self._flat(current[size:], convert)
        wire = wire + added
        if text is not None:  # encoded now, so that each message is serialised once per run
            try:
                text = text + [encode_json(item) for item in added]
            except (TypeError, ValueError, RecursionError):  # not plain JSON: the SDK encodes
                text = None
        result = list(wire)
        with self._lock:
            self._messages, self._wire, self._text, self._last = current, wire, text, result
        return result

    @staticmethod
    def _flat(messages: Sequence[Message], convert: Convert) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for message in messages:
            converted = convert(message)
            if isinstance(converted, list):
                out.extend(converted)
            else:
                out.append(converted)
        return out

    def encoded(self, wire: object) -> str | None:
        """The JSON text of ``wire`` when it is the list the last ``convert`` returned, else None.

        The text is what the SDK would write for that list (``encode_json``).
        """
        with self._lock:
            last, text = self._last, self._text
        if wire is not last or last is None or text is None or len(last) != len(text):
            return None
        return "[" + ",".join(text) + "]"

    def clear(self) -> None:
        """Forget the remembered history (at the end of a run, or when conversions change)."""
        with self._lock:
            self._messages, self._wire, self._text, self._last = [], [], [], None
