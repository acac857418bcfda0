"""Tool arguments the fuzzer sends: copied from the conversation, or drawn from the schema.

For each argument the fuzzer playing the model first tries, with high probability, a
value seen earlier in the run that fits the argument's schema (one under a key of the
same name first, then the most recent), sometimes moved by one (a boundary next to a
value seen). A number may instead walk toward a limit the run showed: the difference
of two numbers seen (a limit and a total: ``capacity - booked``), the step past it, or
as far toward it as the schema allows. Otherwise a value is drawn from the argument's
JSON schema (hypothesis-jsonschema; plain texts mostly readable ones). Copied values
keep their reference, so the counterexample says "the ``order_id`` of call 2's result"
rather than a literal that goes stale.

Repeating an earlier call (the same ids, the largest or smallest valid amount) is a
move of the player (``_player``); the extremes of a number's schema it uses are here
(``bounds``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jsonschema
from hypothesis import strategies as st

from harness.fuzz.agent._seen import SeenValues
from harness.loop import ModelRequest
from harness.models._scripted._refs import Cast, ValueRef

__all__ = [
    "CLOSE",
    "ArgumentMaker",
    "Copied",
    "Draw",
    "SchemaInfo",
    "affinity",
    "chance",
    "concrete",
    "integer",
    "offered_schemas",
    "pick",
    "schema_info",
    "short_repr",
    "stated_numbers",
    "to_data",
]

Draw = Callable[[st.SearchStrategy[Any]], Any]
"""Hypothesis's ``draw`` (of ``st.composite`` or ``st.data()``)."""

_MAX_CANDIDATES = 64

_INTEGERS: dict[tuple[int, int], st.SearchStrategy[int]] = {}


def integer(draw: Draw, low: int, high: int) -> int:
    """An integer from ``low`` to ``high``, as ``draw(st.integers(low, high))`` draws it.

    The player makes dozens of such choices per run: inside a strategy the choice goes
    straight to the example's choice sequence (``ConjectureData.draw_integer``, the
    call ``st.integers`` ends in), which costs a tenth of a strategy draw; spans stay
    one per model turn (``_player``), which is what hypothesis's mutations work on.
    """
    data = getattr(draw, "__self__", None)
    direct = getattr(data, "draw_integer", None)
    if direct is not None:
        return int(direct(low, high))
    strategy = _INTEGERS.get((low, high))
    if strategy is None:
        strategy = _INTEGERS[(low, high)] = st.integers(low, high)
    return int(draw(strategy))


def chance(draw: Draw, percent: int) -> bool:
    """True with ``percent`` % probability; shrinks toward True (the value 0). A chance
    of 0 draws nothing (an example whose swarm leaves a move out spends no choice on it)."""
    return percent > 0 and integer(draw, 0, 99) < percent


def pick(draw: Draw, weights: Sequence[int]) -> int:
    """An index drawn with the given integer weights (shrinks toward the first).

    The draw behind it is one byte (two for totals over 256): hypothesis draws integers
    of a range up to 256 about uniformly (wider ranges lean hard toward small values,
    which would make the first tool and the first value seen the usual choice), and a
    choice takes the same draws whatever the number of choices, so that when a value
    seen differs between two runs of an example (a fresh id, a random amount) the
    choices hypothesis replays keep their shape."""
    total = sum(weights)
    if total <= 0:
        return 0
    point = integer(draw, 0, 255)
    if total > 256:
        point = point * 256 + integer(draw, 0, 255)
    point %= total
    for index, weight in enumerate(weights):
        if point < weight:
            return index
        point -= weight
    return len(weights) - 1  # pragma: no cover - point < total


@dataclasses.dataclass(frozen=True, slots=True)
class Copied:
    """An argument value taken from the conversation, with where it came from."""

    value: Any
    ref: ValueRef

    def __repr__(self) -> str:
        return f"{short_repr(self.value)} <- {self.ref.describe()}"


def short_repr(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (counterexamples stay readable)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def to_data(value: Any) -> Any:
    """Scenario-file data of arguments: references as ``{"$from": ...}``."""
    if isinstance(value, Copied):
        return value.ref.to_data()
    if isinstance(value, dict):
        return {k: to_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_data(v) for v in value]
    return value


def concrete(value: Any) -> Any:
    """The plain JSON value of arguments (what the tool receives)."""
    if isinstance(value, Copied):
        return value.value
    if isinstance(value, dict):
        return {k: concrete(v) for k, v in value.items()}
    if isinstance(value, list):
        return [concrete(v) for v in value]
    return value


_STATED_NUMBER = re.compile(r"(?<![\w.])\d{1,9}(?:\.\d{1,6})?(?![\w.]*\w)")


@functools.lru_cache(maxsize=512)
def stated_numbers(text: str | None) -> tuple[float, ...]:
    """The numbers a description states (``at most 50.00 at a time``: 50.0), the limits a
    schema often leaves to words; at most eight, in order."""
    if not text:
        return ()
    found = dict.fromkeys(float(m) for m in _STATED_NUMBER.findall(text))
    return tuple(found)[:8]


def offered_schemas(request: ModelRequest) -> dict[str, Mapping[str, Any]]:
    """Each offered tool's parameter schema, by name."""
    return {definition.name: definition.parameters for definition in request.tools}


# -- what a schema allows, worked out once per schema ------------------------------------


@functools.lru_cache(maxsize=512)
def _validator(key: str) -> Any:
    schema = json.loads(key)
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        return cls(schema)
    except Exception:
        return None


def _kinds(schema: Mapping[str, Any]) -> frozenset[str]:
    """The JSON types a schema allows (``enum``/``const`` schemas: ``{"enum"}``)."""
    if "enum" in schema or "const" in schema:
        return frozenset({"enum"})
    kind = schema.get("type")
    found: set[str] = set()
    if isinstance(kind, str):
        found.add(kind)
    elif isinstance(kind, list):
        found.update(k for k in kind if isinstance(k, str))
    for key in ("anyOf", "oneOf", "allOf"):
        for member in schema.get(key) or ():
            if isinstance(member, Mapping):
                found |= _kinds(member)
    if not found and "properties" in schema:
        found.add("object")
    return frozenset(found)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _numeric_member(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema itself, or its first integer/number member (``Optional[int]``)."""
    if schema.get("type") in ("integer", "number"):
        return schema
    for key in ("anyOf", "oneOf"):
        for member in schema.get(key) or ():
            if isinstance(member, Mapping) and member.get("type") in ("integer", "number"):
                return member
    return schema


@dataclasses.dataclass(frozen=True, slots=True)
class SchemaInfo:
    """What the argument generator needs to know about one argument's schema."""

    key: str
    """The schema as canonical JSON (the key of the caches)."""
    kinds: frozenset[str]
    validator: Any
    integer: bool
    """A number argument that takes whole numbers only."""
    low: float | None
    """The smallest valid number (``None``: no bound, or not a number)."""
    high: float | None
    """The largest valid number."""
    text: tuple[int, int] | None
    """``(min, max)`` length of a plain text (no pattern, format or enum), else ``None``."""

    def valid(self, value: Any) -> bool:
        """Whether ``value`` fits the schema."""
        return self.validator is None or bool(self.validator.is_valid(value))


def _bounds(member: Mapping[str, Any], integer: bool) -> tuple[float | None, float | None]:
    step = 1.0 if integer else 0.01
    low, high = _number(member.get("minimum")), _number(member.get("maximum"))
    above, below = _number(member.get("exclusiveMinimum")), _number(member.get("exclusiveMaximum"))
    if above is not None:
        low = max(low, above + step) if low is not None else above + step
    if below is not None:
        high = min(high, below - step) if high is not None else below - step
    if integer:
        low = float(math.ceil(low)) if low is not None else None
        high = float(math.floor(high)) if high is not None else None
    return low, high


def _build_info(schema: Mapping[str, Any]) -> SchemaInfo:
    key = json.dumps(schema, sort_keys=True, default=str)
    kinds = _kinds(schema)
    member = _numeric_member(schema)
    integer = member.get("type") == "integer"
    low = high = None
    if kinds & {"integer", "number"}:
        low, high = _bounds(member, integer)
    text = None
    if kinds == {"string"} and not {"pattern", "format", "enum", "const"} & set(schema):
        shortest = schema.get("minLength", 0)
        longest = schema.get("maxLength", 24)
        if isinstance(shortest, int) and isinstance(longest, int) and shortest <= longest:
            text = (shortest, min(longest, max(shortest, 24)))
    return SchemaInfo(
        key=key,
        kinds=kinds,
        validator=_validator(key),
        integer=integer,
        low=low,
        high=high,
        text=text,
    )


_INFOS: dict[int, tuple[Mapping[str, Any], SchemaInfo]] = {}
_MAX_INFOS = 2048


def schema_info(schema: Mapping[str, Any]) -> SchemaInfo:
    """``SchemaInfo`` of an argument's schema, remembered by identity (a tool's schema is
    the same object on every request of the loop)."""
    known = _INFOS.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    info = _build_info(schema)
    if len(_INFOS) >= _MAX_INFOS:
        _INFOS.clear()
    _INFOS[id(schema)] = (schema, info)  # the schema is kept, so its id stays its own
    return info


# -- values drawn from the schema ---------------------------------------------------------

READABLE = string.ascii_letters + string.digits + " -_.,:@"
"""Characters of the texts drawn for plain text arguments (most of them)."""
WORDS = ("test", "a", "hello world", "x", "note", "example", "yes", "2024-01-01", "")
"""Plain texts a model might send, tried first."""


@functools.lru_cache(maxsize=512)
def _schema_strategy(key: str) -> st.SearchStrategy[Any]:
    """hypothesis-jsonschema's strategy for one schema (built once: building is slow)."""
    from hypothesis_jsonschema import from_schema

    schema = json.loads(key)
    try:
        strategy = from_schema(schema)
        return strategy
    except Exception:  # an unsupported construct: fall back to plain values of its type
        return _plain(_kinds(schema))


@functools.lru_cache(maxsize=128)
def _text_strategy(shortest: int, longest: int) -> st.SearchStrategy[str]:
    """Readable texts of a length in the range: a plain word, else readable characters."""
    fitting = [w for w in WORDS if shortest <= len(w) <= longest]
    chars = st.text(alphabet=READABLE, min_size=shortest, max_size=longest)
    return st.sampled_from(fitting) | chars if fitting else chars


def _plain(kinds: frozenset[str]) -> st.SearchStrategy[Any]:
    options: list[st.SearchStrategy[Any]] = []
    if "string" in kinds:
        options.append(st.text(max_size=12))
    if "integer" in kinds:
        options.append(st.integers(-10, 1000))
    if "number" in kinds:
        options.append(st.floats(-10, 1000, allow_nan=False))
    if "boolean" in kinds:
        options.append(st.booleans())
    if "array" in kinds:
        options.append(st.just([]))
    if "object" in kinds:
        options.append(st.just({}))
    return st.one_of(options) if options else st.none()


def _cast(value: Any, kind: str) -> Cast | None:
    """The ``as`` a reference needs so that ``value`` fills an argument of ``kind``."""
    if kind == "string":
        return None if isinstance(value, str) else "string"
    if kind == "integer":
        return None if isinstance(value, int) and not isinstance(value, bool) else "integer"
    if kind == "number":
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else "number"
    return None


CLOSE = 16
"""The affinity of a key that names the argument (``order_id`` for ``order_id``, ``id``
for ``order_id``, ``id`` for ``id``): what ``_inputs_ready`` counts as the input ready."""


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _words(name: str) -> frozenset[str]:
    """The words of a name (``from_account``, ``fromAccount``: from, account), ``id``
    left out."""
    return frozenset(w for w in _CAMEL.sub("_", name).lower().split("_") if w and w != "id")


@functools.lru_cache(maxsize=4096)
def affinity(name: str, key: str | None) -> int:
    """How well a value under ``key`` fits an argument called ``name``: 32 for the same
    name, ``CLOSE`` for one ending the other (``id`` for ``order_id``) or naming the same
    thing (``account_id`` for ``from_account``), 4 for a key holding the argument's stem,
    else 1. A model copies ids by their names: the weights make a value under the
    argument's own name the usual choice among dozens seen."""
    if key is None:
        return 1
    mine, theirs = _words(name), _words(key)
    name, key = name.lower(), key.lower()
    if name == key:
        return 32
    if name.endswith(key) or key.endswith(name) or (name.endswith("_id") and key == "id"):
        return CLOSE
    if mine and theirs and (theirs <= mine or mine <= theirs):
        return CLOSE
    stem = name.removesuffix("_id").removesuffix("id")
    return 4 if stem and stem in key else 1


_LIMIT_WORDS = ("limit", "max", "cap", "quota", "budget", "balance", "available", "capacity")
_TOTAL_WORDS = ("total", "spent", "used", "booked", "sent", "count", "sum", "balance", "taken")


def _hint(key: str | None, hints: tuple[str, ...]) -> int:
    """4 when ``key`` names one of ``hints`` (``daily_limit`` for a limit), else 1."""
    if key is None:
        return 1
    lowered = key.lower()
    return 4 if any(h in lowered for h in hints) else 1


class ArgumentMaker:
    """Draws one call's arguments for a tool schema, from the pool or the schema."""

    def __init__(
        self,
        draw: Draw,
        *,
        copy_percent: int = 80,
        boundary_percent: int = 25,
        optional_percent: int = 35,
        limit_percent: int = 15,
        stated_percent: int = 10,
    ) -> None:
        self.draw = draw
        self.copy_percent = copy_percent
        self.boundary_percent = boundary_percent
        self.optional_percent = optional_percent
        self.limit_percent = limit_percent
        self.stated_percent = stated_percent
        self.moves: list[str] = []
        """How each value drawn since the caller last cleared it was made: ``copy``,
        ``boundary`` (a copied number moved by one), ``limit`` (toward a limit seen),
        ``stated`` (a number the tool's description states, or a step past it),
        ``schema`` (drawn from the schema), ``text`` (a readable text)."""

    def arguments(
        self, schema: Mapping[str, Any], seen: SeenValues, *, stated: tuple[float, ...] = ()
    ) -> dict[str, Any]:
        """Arguments for ``schema`` (an object schema): values or ``Copied`` values;
        ``stated``: the numbers the tool's description states."""
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return {}
        required = schema.get("required") or ()
        out: dict[str, Any] = {}
        for name, prop in properties.items():
            if not isinstance(prop, Mapping):
                continue
            if name not in required and not chance(self.draw, self.optional_percent):
                continue
            out[name] = self.value(name, prop, seen, stated)
        return out

    def value(
        self, name: str, prop: Mapping[str, Any], seen: SeenValues, stated: tuple[float, ...] = ()
    ) -> Any:
        """One argument's value."""
        info = schema_info(prop)
        kinds = info.kinds
        numeric = bool(kinds & {"integer", "number"})
        said = stated + stated_numbers(prop.get("description"))
        if numeric and said and chance(self.draw, self.stated_percent):
            found = self.at_stated(info, said)
            if found is not None:
                self.moves.append("stated")
                return found
        if "enum" not in kinds and seen.values and chance(self.draw, self.copy_percent):
            if "array" in kinds and not kinds & {"string", "integer", "number"}:
                items = prop.get("items")
                if isinstance(items, Mapping):
                    first = self._copy(name, schema_info(items), seen)
                    if first is not None:
                        return [first]
            else:
                copied = self._copy(name, info, seen)
                if copied is not None:
                    return copied
        if numeric and seen.numbers and chance(self.draw, self.limit_percent):
            toward = self.toward_limit(info, seen)
            if toward is not None:
                self.moves.append("limit")
                return toward
        if info.text is not None:
            self.moves.append("text")
            return self.draw(_text_strategy(*info.text))
        self.moves.append("schema")
        return self.draw(_schema_strategy(info.key))

    def _copy(self, name: str, info: SchemaInfo, seen: SeenValues) -> Copied | None:
        kinds = info.kinds
        latest = seen.latest_call
        candidates = seen.fitting(kinds, _MAX_CANDIDATES)  # the most recent first
        # a value of the argument's own type first: a number is an id only now and then
        weights = [
            affinity(name, item.key)
            * (3 if item.ref.source == latest else 1)
            * (1 if _cast(item.value, kind) else 4)
            for item, kind in candidates
        ]
        if not candidates:
            return None
        item, kind = candidates[pick(self.draw, weights)]
        add = 0
        if kind in ("integer", "number") and chance(self.draw, self.boundary_percent):
            add = 1 if chance(self.draw, 50) else -1
        ref = dataclasses.replace(item.ref, cast=_cast(item.value, kind), add=add)
        value = ref.convert(item.value)  # what the replaying model computes, the same way
        if not info.valid(value):
            return None
        self.moves.append("boundary" if add else "copy")
        return Copied(value, ref)

    def at_stated(self, info: SchemaInfo, stated: tuple[float, ...]) -> int | float | None:
        """A number a description states, or the step past it either way (``at most 50``:
        50, 50.01, 49.99), when the schema takes it."""
        number = stated[pick(self.draw, [1] * len(stated))]
        step = 1 if "integer" in info.kinds and "number" not in info.kinds else 0.01
        number += (0, step, -step)[pick(self.draw, [2, 1, 1])]
        value: int | float = int(number) if step == 1 else round(number, 2)
        return value if info.valid(value) else None

    def toward_limit(self, info: SchemaInfo, seen: SeenValues) -> int | float | None:
        """A number walking a total the run showed toward a limit it showed: their
        difference (to land on the limit), one more (past it), or the most the schema
        allows toward it; ``None`` when no pair of numbers seen gives a valid one."""
        numbers = seen.numbers
        limit = numbers[pick(self.draw, [_hint(n.key, _LIMIT_WORDS) for n in numbers])]
        ceiling = float(limit.value)
        totals = [n for n in numbers if n is not limit and float(n.value) < ceiling]
        if not totals:
            return None
        latest = seen.latest_call
        weights = [
            _hint(n.key, _TOTAL_WORDS) * (3 if n.ref.source == latest else 1) for n in totals
        ]
        total = totals[pick(self.draw, weights)]
        gap = float(limit.value) - float(total.value)
        step = (0.0, 1.0, -1.0)[pick(self.draw, (3, 3, 1))]
        wanted = gap + step
        if info.high is not None and wanted > info.high:
            wanted = info.high  # as far toward the limit as one call may go
        value: int | float = round(wanted) if info.integer else round(wanted, 2)
        return value if info.valid(value) else None
