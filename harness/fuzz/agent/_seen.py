"""Values seen in the conversation, each with the reference that finds it again.

The fuzzer playing the model copies ids, names and numbers from what a model would
read: earlier tool results (the JSON of each result, walked to its leaves, and the
words of text), the prompt, and the names of offered tools (their id-like parts:
``article_3f2a9c_save``). Every value keeps a ``ValueRef`` (``call 2 .orders[0].id``),
so a counterexample written with references replays on a fresh agent whose ids
differ. The texts are cut with the same functions the replaying model uses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

from harness.loop import ModelRequest
from harness.messages import SystemMessage, UserMessage
from harness.models._scripted._refs import (
    ValueRef,
    call_results,
    name_parts,
    parse_json,
    quoted_phrases,
    words,
)
from harness.scenarios._coverage import is_id_like, name_pattern
from harness.tools import match_names

__all__ = ["Seen", "SeenValues", "leaves"]

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
        self._calls_read = 0
        self._order = 0
        self._prompt_read = False
        self._names: set[str] = set()

    @property
    def latest_call(self) -> str | None:
        """The source of the latest tool result (``call N``), or ``None`` before any."""
        return f"call {self._calls_read}" if self._calls_read else None

    def keys(self) -> tuple[set[str], set[str]]:
        """The JSON keys values were seen under: all of them, and those of the latest
        result."""
        latest = self.latest_call
        every = {v.key for v in self.values if v.key is not None}
        last = {v.key for v in self.values if v.key is not None and v.ref.source == latest}
        return every, last

    def _add(self, value: Scalar, ref: ValueRef, key: str | None) -> None:
        if isinstance(value, str) and (not value.strip() or len(value) > _MAX_TEXT):
            return
        self._order += 1
        self.values.append(Seen(value=value, ref=ref, key=key, order=self._order))
        if len(self.values) > _MAX_POOL:
            del self.values[: len(self.values) - _MAX_POOL]

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
        if not self._prompt_read:
            self._prompt_read = True
            for message in request.messages:
                if isinstance(message, (UserMessage, SystemMessage)) and isinstance(
                    message.content, str
                ):
                    source = "system" if isinstance(message, SystemMessage) else "prompt"
                    self._text(message.content, ValueRef(source=source), None)
                    if source == "prompt":
                        break
        for number, _name, answer in call_results(request.messages):
            if number <= self._calls_read or answer is None:
                continue
            self._calls_read = number
            self._result(number, answer.content)
        self._tool_names(request.tool_names)

    def _result(self, number: int, content: str) -> None:
        ref = ValueRef(source=f"call {number}")
        value = parse_json(content)
        if isinstance(value, str):
            if value != content:  # a JSON string
                self._add(value, ref, None)
            self._text(value, ref, None)
            return
        for count, (path, leaf) in enumerate(_leaves(value, (), 0)):
            if count >= _MAX_LEAVES:
                break
            key = next((p for p in reversed(path) if isinstance(p, str)), None)
            leaf_ref = ValueRef(source=ref.source, path=path)
            self._add(leaf, leaf_ref, key)
            if isinstance(leaf, str):
                self._text(leaf, leaf_ref, key)

    def _tool_names(self, names: Sequence[str]) -> None:
        for name in names:
            if name in self._names:
                continue
            self._names.add(name)
            pattern = name_pattern(name)
            if pattern == name:
                continue
            rank = match_names(pattern, names).index(name) + 1
            for index, part in enumerate(name_parts(name)):
                if is_id_like(part):
                    ref = ValueRef(source=f"tool {pattern}", rank=rank, word=index)
                    self._add(part, ref, None)
