"""Convert a growing history to wire dicts (and their JSON) once per message, not once per turn."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import Any

from harness.messages import Message

__all__ = ["WireHistory", "encode_json"]

encode_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
"""JSON text exactly as the ``openai`` SDK writes request bodies (``openapi_dumps``) for
plain JSON values: no ASCII escaping, no spaces, no NaN."""

Convert = Callable[[Message], "dict[str, Any] | list[dict[str, Any]]"]


class WireHistory:
    """Remembers the last history an adapter sent, its wire dicts and their JSON text.

    A loop's history only grows, so each request repeats the previous one plus a
    few messages: when the new history starts with the previous one (equal
    messages; usually the very same objects, compared by identity first) only the
    new messages are converted (and encoded). Any other history is converted in
    full. The wire dicts are shared between requests and must not be mutated.

    ``convert`` turns one message into one wire dict (Chat Completions) or a list
    of them (Responses API input items); the result is always the flat list.
    """

    __slots__ = ("_convert", "_last", "_lock", "_messages", "_text", "_wire")

    def __init__(self, convert: Convert) -> None:
        self._convert = convert
        self._lock = threading.Lock()
        self._messages: list[Message] = []
        self._wire: list[dict[str, Any]] = []
        self._text: list[str] | None = []
        self._last: list[dict[str, Any]] | None = None

    def convert(
        self, messages: Sequence[Message], convert: Convert | None = None
    ) -> list[dict[str, Any]]:
        """The wire dicts of ``messages`` (a new list each call).

        ``convert`` replaces the converter for this call's new messages (e.g. one
        that sees the reasoning items known now).
        """
        current = messages[:]  # a list for lists and the loop's history views (C-level copy)
        if not isinstance(current, list):
            current = list(current)
        with self._lock:
            known, wire, text = self._messages, self._wire, self._text
        size = len(known)
        if not (size and len(current) >= size and current[:size] == known):
            size, wire, text = 0, [], []
        added = self._flat(current[size:], convert or self._convert)
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
