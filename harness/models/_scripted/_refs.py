"""References in scripted arguments: values the model saw earlier in the run.

An argument value ``{"$from": SOURCE, ...selectors}`` is resolved when the step is
played, against the request the model received, so a script stays valid when the
agent makes fresh ids on every run::

    - call: read_thread
      args: {thread_id: {$from: call 1, path: "threads[0].id"}}
    - call: "article_*_save"          # several match: take the second one offered
      rank: 2
      args: {article_id: {$from: tool article_*_save, rank: 2, word: 1}}

Sources: ``call N`` (the result of the N-th tool call of the conversation, 1-based),
``prompt`` (the first user message), ``system`` (the system message), ``tool GLOB``
(the ``rank``-th offered tool name matching the glob). Selectors: ``path``
(``orders[0].order_id``, into the JSON of a result), ``word`` (the N-th word, 0-based,
of the text — of a tool name: its N-th ``_``-separated part), ``quoted`` (the N-th
double-quoted phrase), then ``as`` (``string``, ``integer`` or ``number``) and
``add`` (a number added, for boundaries next to a value seen). The functions that
cut texts into words are shared with the fuzzer, so what it copied is what replays.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

from harness._errors import ScriptError
from harness._validation import is_int, is_number
from harness.loop import ModelRequest
from harness.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from harness.tools import match_names

__all__ = [
    "REF_KEY",
    "ValueRef",
    "call_results",
    "format_path",
    "has_refs",
    "name_parts",
    "parse_json",
    "quoted_phrases",
    "ref_from_data",
    "resolve_refs",
    "words",
]

REF_KEY = "$from"
"""The key that makes a mapping a reference."""

Cast = Literal["string", "integer", "number"]
_CASTS: tuple[str, ...] = ("string", "integer", "number")
_SELECTORS = frozenset({REF_KEY, "path", "word", "quoted", "rank", "as", "add"})

_WORD = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_\-.:@/]*[A-Za-z0-9])?")
_QUOTED = re.compile(r'"([^"\n]{1,200})"')
_PATH_PART = re.compile(r'\.?([^.\[\]"]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')
_SOURCE = re.compile(r"^(?:call (\d+)|prompt|system|tool (\S+))$")


def words(text: str) -> list[str]:
    """The words of a text: runs of letters and digits, with ``_-.:@/`` inside them."""
    return _WORD.findall(text)


def quoted_phrases(text: str) -> list[str]:
    """The phrases in double quotes, in order."""
    return _QUOTED.findall(text)


def name_parts(name: str) -> list[str]:
    """A tool name's ``_``-separated parts (``article_3f2a_save`` -> article, 3f2a, save)."""
    return [p for p in name.split("_") if p]


_DECODER = json.JSONDecoder()


def parse_json(text: str) -> Any:
    """The JSON value a result text starts with; the text itself when it is not JSON.

    Notes the harness appends after a result (``\n\n[state is now PAYMENT]``) are
    left out: the value is what the tool returned.
    """
    stripped = text.lstrip()
    try:
        value, end = _DECODER.raw_decode(stripped)
    except ValueError:
        return text
    rest = stripped[end:]
    return value if not rest or rest[:1].isspace() else text


def format_path(parts: Sequence[str | int]) -> str:
    """``("orders", 0, "id")`` -> ``orders[0].id`` (odd keys as ``["a key"]``)."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[^.\[\]\"]+", part) and part.strip() == part:
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out


def _parse_path(path: str, where: str) -> tuple[str | int, ...]:
    parts: list[str | int] = []
    position = 0
    while position < len(path):
        match = _PATH_PART.match(path, position)
        if match is None or match.end() == position:
            raise ScriptError(f"{where}: bad path {path!r} near {path[position:]!r}")
        key, index, quoted = match.groups()
        parts.append(int(index) if index is not None else json.loads(quoted) if quoted else key)
        position = match.end()
    return tuple(parts)


def call_results(messages: Sequence[Message]) -> Iterator[tuple[int, str, ToolMessage | None]]:
    """``(number, tool name, tool message or None)`` of every tool call so far, in order."""
    answers = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    number = 0
    for message in messages:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls or ():
                number += 1
                yield number, call.name, answers.get(call.id)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ValueRef:
    """A value taken from what the model saw: a source and selectors (see the module)."""

    source: str
    path: tuple[str | int, ...] = ()
    word: int | None = None
    quoted: int | None = None
    rank: int = 1
    cast: Cast | None = None
    add: int | float = 0

    def describe(self) -> str:
        """``call 2 .orders[0].id`` and the like, for reprs and errors."""
        text = self.source + (f" #{self.rank}" if self.source.startswith("tool") else "")
        if self.path:
            text += " ." + format_path(self.path)
        if self.word is not None:
            text += f" word {self.word}"
        if self.quoted is not None:
            text += f" quoted {self.quoted}"
        if self.add:
            text += f" {self.add:+g}"
        return text

    def to_data(self) -> dict[str, Any]:
        """The scenario-file form (``{"$from": ..., ...}``)."""
        data: dict[str, Any] = {REF_KEY: self.source}
        if self.source.startswith("tool") and self.rank != 1:
            data["rank"] = self.rank
        if self.path:
            data["path"] = format_path(self.path)
        if self.word is not None:
            data["word"] = self.word
        if self.quoted is not None:
            data["quoted"] = self.quoted
        if self.cast is not None:
            data["as"] = self.cast
        if self.add:
            data["add"] = self.add
        return data

    def resolve(self, request: ModelRequest) -> Any:
        """The value in ``request`` (``ScriptError`` saying what is missing)."""
        value = self._base(request)
        for part in self.path:
            value = self._step(value, part)
        if self.word is not None or self.quoted is not None:
            text = value if isinstance(value, str) else json.dumps(value)
            found = (
                (
                    name_parts(text)
                    if self.source.startswith("tool") and not self.path
                    else words(text)
                )
                if self.word is not None
                else quoted_phrases(text)
            )
            index = self.word if self.word is not None else self.quoted
            assert index is not None
            if index >= len(found):
                raise ScriptError(
                    f"reference {self.describe()!r}: {text[:80]!r} has only {len(found)} "
                    f"{'words' if self.word is not None else 'quoted phrases'}"
                )
            value = found[index]
        return self.convert(value)

    def _base(self, request: ModelRequest) -> Any:
        match = _SOURCE.match(self.source)
        assert match is not None  # checked when read
        number, glob = match.groups()
        if number is not None:
            wanted = int(number)
            seen = 0
            for index, name, answer in call_results(request.messages):
                seen = index
                if index == wanted:
                    if answer is None:
                        raise ScriptError(
                            f"reference {self.describe()!r}: call {index} ({name}) "
                            "has no result yet"
                        )
                    return parse_json(answer.content)
            raise ScriptError(
                f"reference {self.describe()!r}: the conversation has {seen} tool call(s) so far"
            )
        if glob is not None:
            found = match_names(glob, request.tool_names)
            if len(found) < self.rank:
                raise ScriptError(
                    f"reference {self.describe()!r}: {len(found)} offered tool(s) match "
                    f"{glob!r}, rank {self.rank} asked"
                )
            return found[self.rank - 1]
        kind = SystemMessage if self.source == "system" else UserMessage
        for message in request.messages:
            if isinstance(message, kind) and isinstance(message.content, str):
                return message.content
        raise ScriptError(f"reference {self.describe()!r}: the conversation has no such message")

    def _step(self, value: Any, part: str | int) -> Any:
        if isinstance(part, int) and isinstance(value, list) and part < len(value):
            return value[part]
        if isinstance(part, str) and isinstance(value, dict) and part in value:
            return value[part]
        raise ScriptError(f"reference {self.describe()!r}: no {part!r} in {json.dumps(value)[:80]}")

    def convert(self, value: Any) -> Any:
        """``value`` (as found) after ``as`` and ``add``."""
        if self.cast == "string":
            value = value if isinstance(value, str) else json.dumps(value)
        elif self.cast in ("integer", "number"):
            try:
                number = float(value) if not is_number(value) else value
            except (TypeError, ValueError):
                raise ScriptError(
                    f"reference {self.describe()!r}: {value!r} is not a number"
                ) from None
            if not math.isfinite(number):
                raise ScriptError(
                    f"reference {self.describe()!r}: {value!r} is not a finite number, so it "
                    f"has no {self.cast} value to send"
                )
            value = int(number) if self.cast == "integer" else number
        if self.add:
            if not is_number(value):
                raise ScriptError(f"reference {self.describe()!r}: cannot add to {value!r}")
            try:
                total = value + self.add
            except OverflowError:  # an int too large for a float, plus a float
                total = math.inf
            if not math.isfinite(total):
                raise ScriptError(
                    f"reference {self.describe()!r}: {value!r} {self.add:+g} is {total!r}, not a "
                    "finite number a tool could be sent"
                )
            value = total
        return value


def _index(data: Mapping[str, Any], key: str, where: str, minimum: int) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if not is_int(value) or value < minimum:
        raise ScriptError(f"{where}: {key!r} must be an int >= {minimum}, got {value!r}")
    return int(value)


def ref_from_data(data: Mapping[str, Any], where: str) -> ValueRef:
    """Read ``{"$from": ..., ...}``; a bad source or selector is a ``ScriptError``."""
    unknown = set(data) - _SELECTORS
    if unknown:
        raise ScriptError(
            f"{where}: unknown keys {sorted(unknown)} in a reference; use {sorted(_SELECTORS)}"
        )
    source = data[REF_KEY]
    if not isinstance(source, str) or not _SOURCE.match(source):
        raise ScriptError(
            f"{where}: {REF_KEY} must be 'call N', 'prompt', 'system' or 'tool GLOB', "
            f"got {source!r}"
        )
    cast = data.get("as")
    if cast is not None and cast not in _CASTS:
        raise ScriptError(f"{where}: 'as' must be one of {list(_CASTS)}, got {cast!r}")
    add = data.get("add", 0)
    if not is_number(add) or not math.isfinite(add):
        raise ScriptError(f"{where}: 'add' must be a finite number, got {add!r}")
    path = data.get("path")
    if path is not None and not isinstance(path, str):
        raise ScriptError(f"{where}: 'path' must be a text like 'orders[0].id', got {path!r}")
    word = _index(data, "word", where, 0)
    quoted = _index(data, "quoted", where, 0)
    if word is not None and quoted is not None:
        raise ScriptError(f"{where}: give 'word' or 'quoted', not both")
    return ValueRef(
        source=source,
        path=_parse_path(path, where) if path else (),
        word=word,
        quoted=quoted,
        rank=_index(data, "rank", where, 1) or 1,
        cast=cast,
        add=add,
    )


def has_refs(value: Any) -> bool:
    """Whether ``value`` holds a reference anywhere."""
    if isinstance(value, Mapping):
        return REF_KEY in value or any(has_refs(v) for v in value.values())
    if isinstance(value, list):
        return any(has_refs(v) for v in value)
    return False


def _compile(value: Any, where: str) -> Any:
    if isinstance(value, Mapping):
        if REF_KEY in value:
            return ref_from_data(value, where)
        return {k: _compile(v, where) for k, v in value.items()}
    if isinstance(value, list):
        return [_compile(v, where) for v in value]
    return value


def _fill(value: Any, request: ModelRequest) -> Any:
    if isinstance(value, ValueRef):
        return value.resolve(request)
    if isinstance(value, dict):
        return {k: _fill(v, request) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, request) for v in value]
    return value


def resolve_refs(args: Mapping[str, Any], where: str) -> Callable[[ModelRequest], Any]:
    """Arguments holding references as a function of the request (checked now)."""
    compiled = _compile(args, where)

    def arguments(request: ModelRequest) -> Any:
        try:
            return _fill(compiled, request)
        except ScriptError as exc:
            raise ScriptError(f"{where}: {exc}") from None

    return arguments
