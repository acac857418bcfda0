"""Values seen in the conversation, each with the reference that finds it again.

The fuzzer playing the model copies ids, names and numbers from what a model would
read: earlier tool results (the JSON of each result, walked to its leaves, and the
words of text), the prompt, and the names of offered tools (their id-like parts:
``article_3f2a9c_save``). Every value keeps a ``ValueRef`` (``call 2 .orders[0].id``),
so a counterexample written with references replays on a fresh agent whose ids
differ. The texts are cut with the same functions the replaying model uses.

A request's history repeats the previous one's: only the messages new since the last
request are read (the whole history again when it was rewritten).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Iterator, Sequence
from typing import Any

from harness.loop import ModelRequest
from harness.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from harness.models._scripted._refs import (
    ValueRef,
    name_parts,
    parse_json,
    quoted_phrases,
    words,
)
from harness.scenarios._coverage import is_id_like, offered_patterns
from harness.tools import match_names

__all__ = ["Scalar", "Seen", "SeenValues", "fills", "leaves"]

Scalar = str | int | float | bool

_MAX_LEAVES = 48
"""Leaves kept per tool result (the first ones, depth first)."""
_MAX_WORDS = 16
"""Words kept per text."""
_MAX_POOL = 400
"""Values kept in all (the oldest go first)."""
_MAX_TEXT = 200
"""Longer strings are not values to copy (their words still are)."""
_MAX_DEPTH = 8
_MAX_NUMBERS = 32
_NUMERIC = re.compile(r"-?\d{1,15}(\.\d{1,15})?")
_ID_KEY = re.compile(r"(?:^|_)(?:id|uuid|guid|token|ref|key|code)$|[a-z]Id$", re.IGNORECASE)
"""Keys that hold ids: a digits-only id made per run (a uuid's hex part) is a text
there, never a number, so whether it can fill a number does not change between runs."""


@functools.lru_cache(maxsize=4096, typed=True)
def fills(value: Scalar, key: str | None) -> tuple[str, ...]:
    """The JSON kinds ``value`` can fill, in order of preference (a numeric word fills
    numbers too, unless it is an id)."""
    if isinstance(value, bool):
        return ("boolean",)
    if isinstance(value, int):
        return ("integer", "number", "string")
    if isinstance(value, float):
        return ("number", "string")
    if key is not None and _ID_KEY.search(key):
        return ("string",)
    if _NUMERIC.fullmatch(value):
        return ("string", "integer", "number") if "." not in value else ("string", "number")
    return ("string",)


@dataclasses.dataclass(frozen=True, slots=True)
class Seen:
    """One value seen, where it was, and how recent it is."""

    value: Scalar
    """The value as its reference finds it (a word is a text, even ``"42"``)."""
    ref: ValueRef
    key: str | None
    """The JSON key it was under (``order_id``), for matching argument names."""
    order: int
    """When it was seen: larger is more recent."""


def leaves(value: Any) -> Iterator[tuple[tuple[str | int, ...], Scalar]]:
    """``(path, value)`` of each scalar of a JSON value, depth first (a few levels deep)."""
    return _leaves(value, (), 0)


def _leaves(
    value: Any, path: tuple[str | int, ...], depth: int
) -> Iterator[tuple[tuple[str | int, ...], Scalar]]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, str(key)), depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value[:16]):
            yield from _leaves(item, (*path, index), depth + 1)
    elif isinstance(value, (str, int, float, bool)) and value is not None:
        yield path, value


class SeenValues:
    """The pool of values of one run, filled as requests arrive."""

    def __init__(self) -> None:
        self.values: list[Seen] = []
        self.numbers: list[Seen] = []
        """The numbers among ``values`` (the latest ``_MAX_NUMBERS``)."""
        self._by_kind: dict[str, list[Seen]] = {}
        self.results: dict[int, Any] = {}
        """The parsed result of each call read, by call number."""
        self._order = 0
        self._prompt_read = False
        self._names: set[str] = set()
        self._read_numbers: set[int] = set()
        self._latest = 0
        self._keys: set[str] = set()
        self._latest_keys: set[str] = set()
        # the history read so far: how many messages, the last one, calls unanswered
        self._scanned = 0
        self._last: Message | None = None
        self._calls = 0
        self._pending: dict[str, tuple[int, str]] = {}
        self.answered: dict[int, tuple[str, bool]] = {}
        """The tool name and whether it failed, of each call answered, by call number."""

    @property
    def latest_call(self) -> str | None:
        """The source of the latest tool result (``call N``), or ``None`` before any."""
        return f"call {self._latest}" if self._latest else None

    def keys(self) -> tuple[set[str], set[str]]:
        """The JSON keys values were seen under: all of them, and those of the latest
        result."""
        return self._keys, self._latest_keys

    def fitting(self, kinds: frozenset[str], most: int) -> list[tuple[Seen, str]]:
        """Up to ``most`` values that can fill an argument of ``kinds``, the most recent
        first, each with the kind it fills (its first preference among ``kinds``)."""
        found: dict[int, Seen] = {}
        for kind in kinds:
            for item in self._by_kind.get(kind, ())[-most:]:
                found[item.order] = item
        out: list[tuple[Seen, str]] = []
        for order in sorted(found, reverse=True)[:most]:
            item = found[order]
            kind = next(k for k in fills(item.value, item.key) if k in kinds)
            out.append((item, kind))
        return out

    def _add(self, value: Scalar, ref: ValueRef, key: str | None) -> None:
        if isinstance(value, str) and (not value.strip() or len(value) > _MAX_TEXT):
            return
        self._order += 1
        seen = Seen(value=value, ref=ref, key=key, order=self._order)
        self.values.append(seen)
        for kind in fills(value, key):
            self._by_kind.setdefault(kind, []).append(seen)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            self.numbers.append(seen)
            if len(self.numbers) > _MAX_NUMBERS:
                del self.numbers[0]
        if key is not None:
            self._keys.add(key)
        if len(self.values) > _MAX_POOL:
            del self.values[: len(self.values) - _MAX_POOL]
            oldest = self.values[0].order
            for kind, items in self._by_kind.items():
                self._by_kind[kind] = [i for i in items if i.order >= oldest]

    def _text(self, text: str, ref: ValueRef, key: str | None) -> None:
        """A text's words (and its quoted phrases) as values."""
        found = words(text)
        if len(found) > 1 or (found and found[0] != text):
            for index, word in enumerate(found[:_MAX_WORDS]):
                self._add(word, ValueRef(source=ref.source, path=ref.path, word=index), key)
        if '"' in text:
            for index, phrase in enumerate(quoted_phrases(text)[:_MAX_WORDS]):
                self._add(phrase, ValueRef(source=ref.source, path=ref.path, quoted=index), key)

    def read(self, request: ModelRequest) -> None:
        """Take in what is new in ``request``: the prompt, results, offered names."""
        messages = request.messages
        if not self._prompt_read:
            self._prompt_read = True
            for message in messages:
                if isinstance(message, (UserMessage, SystemMessage)) and isinstance(
                    message.content, str
                ):
                    source = "system" if isinstance(message, SystemMessage) else "prompt"
                    self._text(message.content, ValueRef(source=source), None)
                    if source == "prompt":
                        break
        scanned = self._scanned
        if scanned > len(messages) or (scanned and messages[scanned - 1] is not self._last):
            scanned = self._calls = 0  # a rewritten history: read it again
            self._pending = {}
        arrived: list[tuple[int, str]] = []
        for message in messages[scanned:]:
            if isinstance(message, AssistantMessage):
                for call in message.tool_calls or ():
                    self._calls += 1
                    self._pending[call.id] = (self._calls, call.name)
            elif isinstance(message, ToolMessage):
                pending = self._pending.pop(message.tool_call_id, None)
                if pending is not None and pending[0] not in self._read_numbers:
                    self.answered[pending[0]] = (pending[1], message.is_error)
                    arrived.append((pending[0], message.content))
        self._scanned = len(messages)
        self._last = messages[-1] if messages else None
        for number, content in sorted(arrived):
            self._read_numbers.add(number)
            if number > self._latest:
                self._latest = number
                self._latest_keys = set()
            self._result(number, content)
        self._tool_names(request.tool_names)

    def _result(self, number: int, content: str) -> None:
        ref = ValueRef(source=f"call {number}")
        value = parse_json(content)
        self.results[number] = value
        if isinstance(value, str):
            if value != content or words(value) == [value]:  # a JSON string, or one token
                self._add(value, ref, None)  # (a one-token text is an id: ``cus-ann``)
            self._text(value, ref, None)
            return
        latest = number == self._latest
        for count, (path, leaf) in enumerate(_leaves(value, (), 0)):
            if count >= _MAX_LEAVES:
                break
            key = next((p for p in reversed(path) if isinstance(p, str)), None)
            leaf_ref = ValueRef(source=ref.source, path=path)
            self._add(leaf, leaf_ref, key)
            if latest and key is not None:
                self._latest_keys.add(key)
            if isinstance(leaf, str):
                self._text(leaf, leaf_ref, key)

    def _tool_names(self, names: Sequence[str]) -> None:
        new = [n for n in names if n not in self._names]
        if not new:
            return
        patterns = offered_patterns(tuple(names))
        for name in new:
            self._names.add(name)
            pattern = patterns[name]
            if pattern == name:
                continue
            rank = match_names(pattern, names).index(name) + 1
            shape = pattern.split("_")
            split = name.split("_")
            starred = {p for p, s in zip(split, shape, strict=False) if s == "*"}
            for index, part in enumerate(name_parts(name)):
                if is_id_like(part) or part in starred:
                    ref = ValueRef(source=f"tool {pattern}", rank=rank, word=index)
                    self._add(part, ref, None)
