"""Decode request bodies whose history repeats the previous body's, parsing only what is new.

A tool loop sends the whole conversation on every turn, so each body is the
previous one with a few more history items. ``BodyDecoder.decode`` gives exactly
what ``json.loads(body)`` gives (the same values, the same errors), but when the
body's text up to the end of the previous body's last history item is the same,
those items are not parsed again: the previous decode's objects are reused (so
decoded bodies share them; treat decoded bodies as read-only).

Anything unusual (a body that is not a UTF-8 JSON object, the history key twice,
a syntax error anywhere) is decoded by ``json.loads`` itself.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["BodyDecoder"]

_DECODER = json.JSONDecoder()
_scan: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
_ws: Callable[[str, int], Any] = json.decoder.WHITESPACE.match  # type: ignore[attr-defined]


class _Unusual(Exception):
    """Not decoded here: ``json.loads`` decides (and raises its own errors)."""


@dataclasses.dataclass(frozen=True, slots=True)
class _Prefix:
    """The previous body's text up to the end of its last history item, and those items."""

    text: str
    start: int
    """Where the history array's first item starts."""
    items: list[Any]


class BodyDecoder:
    """``json.loads`` for request bodies, reusing the previous body's history items.

    One decoder per history key (``"messages"``, ``"input"``); thread-safe.
    """

    def __init__(self, key: str) -> None:
        self.key = key
        self._prefix: _Prefix | None = None
        self._lock = threading.Lock()

    def decode(self, body: bytes) -> Any:
        """``json.loads(body)``, computed incrementally when the history grew."""
        try:
            if json.detect_encoding(body) != "utf-8":
                raise _Unusual
            text = body.decode("utf-8", "surrogatepass")
            with self._lock:
                prefix = self._prefix
            decoded, found = self._object(text, prefix)
        except (_Unusual, StopIteration, ValueError, IndexError, RecursionError):
            return json.loads(body)
        if found is not None:
            with self._lock:
                self._prefix = found
        return decoded

    def _object(self, text: str, prefix: _Prefix | None) -> tuple[dict[str, Any], _Prefix | None]:
        idx = _ws(text, 0).end()
        if text[idx] != "{":
            raise _Unusual
        idx = _ws(text, idx + 1).end()
        result: dict[str, Any] = {}
        found: _Prefix | None = None
        seen = False
        if text[idx] == "}":
            idx += 1
        else:
            while True:
                if text[idx] != '"':
                    raise _Unusual
                key, idx = _scan(text, idx)
                idx = _ws(text, idx).end()
                if text[idx] != ":":
                    raise _Unusual
                idx = _ws(text, idx + 1).end()
                if key == self.key:
                    if seen:  # a repeated key: json.loads keeps the last value; so do we
                        found = None
                        value, idx = _scan(text, idx)
                    else:
                        seen = True
                        value, idx, found = self._history(text, idx, prefix)
                else:
                    value, idx = _scan(text, idx)
                result[key] = value
                idx = _ws(text, idx).end()
                if text[idx] == ",":
                    idx = _ws(text, idx + 1).end()
                    continue
                if text[idx] != "}":
                    raise _Unusual
                idx += 1
                break
        if _ws(text, idx).end() != len(text):
            raise _Unusual
        return result, found

    def _history(
        self, text: str, idx: int, prefix: _Prefix | None
    ) -> tuple[Any, int, _Prefix | None]:
        if text[idx] != "[":
            value, idx = _scan(text, idx)
            return value, idx, None
        start = _ws(text, idx + 1).end()
        if text[start] == "]":
            return [], start + 1, None
        if prefix is not None and prefix.start == start and text.startswith(prefix.text):
            items = list(prefix.items)
            idx = len(prefix.text)
            end = _ws(text, idx).end()
            if text[end] == "]":
                return items, end + 1, prefix
            if text[end] != ",":
                raise _Unusual
            idx = _ws(text, end + 1).end()
        else:
            items, idx = [], start
        while True:
            item, idx = _scan(text, idx)
            items.append(item)
            last = idx
            idx = _ws(text, idx).end()
            if text[idx] == ",":
                idx = _ws(text, idx + 1).end()
                continue
            if text[idx] != "]":
                raise _Unusual
            return items, idx + 1, _Prefix(text=text[:last], start=start, items=items[:])
