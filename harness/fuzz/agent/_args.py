"""Tool arguments the fuzzer sends: copied from the conversation, or drawn from the schema.

For each argument the fuzzer playing the model first tries, with high probability, a
value seen earlier in the run that fits the argument's schema (one under a key of the
same name first, then the most recent), sometimes moved by one (a boundary next to a
value seen); otherwise it draws a value from the argument's JSON schema with
hypothesis-jsonschema. Copied values keep their reference, so the counterexample says
"the ``order_id`` of call 2's result" rather than a literal that goes stale.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jsonschema
from hypothesis import strategies as st

from harness.fuzz.agent._seen import Scalar, Seen, SeenValues
from harness.loop import ModelRequest
from harness.models._scripted._refs import Cast, ValueRef

__all__ = [
    "CLOSE",
    "ArgumentMaker",
    "Copied",
    "Draw",
    "affinity",
    "chance",
    "concrete",
    "offered_schemas",
    "pick",
    "short_repr",
    "to_data",
]

Draw = Callable[[st.SearchStrategy[Any]], Any]
"""Hypothesis's ``draw`` (of ``st.composite`` or ``st.data()``)."""

_MAX_CANDIDATES = 64


@functools.lru_cache(maxsize=64)
def _percent() -> st.SearchStrategy[int]:
    return st.integers(0, 99)


_BYTE = st.integers(0, 255)
"""The draw behind every weighted choice. Hypothesis draws integers of a range up to 256
about uniformly (wider ranges lean hard toward small values, which would make the first
tool and the first value seen the usual choice); one or two of these draws make a choice
whatever the number of choices, so that when a value seen differs between two runs of
an example (a fresh id, a random amount) the choices hypothesis replays keep their shape."""


def chance(draw: Draw, percent: int) -> bool:
    """True with ``percent`` % probability; shrinks toward True (the value 0)."""
    return bool(draw(_percent()) < percent)


def pick(draw: Draw, weights: Sequence[int]) -> int:
    """An index drawn with the given integer weights (shrinks toward the first)."""
    total = sum(weights)
    if total <= 0:
        return 0
    point = int(draw(_BYTE))
    if total > 256:
        point = point * 256 + int(draw(_BYTE))
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


def offered_schemas(request: ModelRequest) -> dict[str, Mapping[str, Any]]:
    """Each offered tool's parameter schema, by name."""
    return {definition.name: definition.parameters for definition in request.tools}


def _key(schema: Mapping[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, default=str)


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


@functools.lru_cache(maxsize=512)
def _validator(key: str) -> Any:
    schema = json.loads(key)
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        return cls(schema)
    except Exception:
        return None


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


_NUMERIC = re.compile(r"-?\d{1,15}(\.\d{1,15})?")


def _fits(value: Scalar, kinds: frozenset[str]) -> str | None:
    """The kind a seen value can fill (or ``None``); a numeric word fills numbers too."""
    if isinstance(value, bool):
        return "boolean" if "boolean" in kinds else None
    order: tuple[str, ...]
    if isinstance(value, int):
        order = ("integer", "number", "string")
    elif isinstance(value, float):
        order = ("number", "string")
    elif _NUMERIC.fullmatch(value):
        order = ("string", "integer", "number") if "." not in value else ("string", "number")
    else:
        order = ("string",)
    return next((kind for kind in order if kind in kinds), None)


def _cast(value: Scalar, kind: str) -> Cast | None:
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


def affinity(name: str, key: str | None) -> int:
    """How well a value under ``key`` fits an argument called ``name``: 32 for the same
    name, ``CLOSE`` for one ending the other (``id`` for ``order_id``), 4 for a key
    holding the argument's stem, else 1. A model copies ids by their names: the weights
    make a value under the argument's own name the usual choice among dozens seen."""
    if key is None:
        return 1
    name, key = name.lower(), key.lower()
    if name == key:
        return 32
    if name.endswith(key) or key.endswith(name) or (name.endswith("_id") and key == "id"):
        return CLOSE
    stem = name.removesuffix("_id").removesuffix("id")
    return 4 if stem and stem in key else 1


class ArgumentMaker:
    """Draws one call's arguments for a tool schema, from the pool or the schema."""

    def __init__(
        self,
        draw: Draw,
        *,
        copy_percent: int = 80,
        boundary_percent: int = 25,
        optional_percent: int = 35,
    ) -> None:
        self.draw = draw
        self.copy_percent = copy_percent
        self.boundary_percent = boundary_percent
        self.optional_percent = optional_percent

    def arguments(self, schema: Mapping[str, Any], seen: SeenValues) -> dict[str, Any]:
        """Arguments for ``schema`` (an object schema): values or ``Copied`` values."""
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return {}
        required = set(schema.get("required") or ())
        out: dict[str, Any] = {}
        for name, prop in properties.items():
            if not isinstance(prop, Mapping):
                continue
            if name not in required and not chance(self.draw, self.optional_percent):
                continue
            out[name] = self.value(name, prop, seen)
        return out

    def value(self, name: str, prop: Mapping[str, Any], seen: SeenValues) -> Any:
        """One argument's value."""
        kinds = _kinds(prop)
        if "enum" not in kinds and seen.values and chance(self.draw, self.copy_percent):
            if "array" in kinds and not kinds & {"string", "integer", "number"}:
                items = prop.get("items")
                if isinstance(items, Mapping):
                    first = self._copy(name, items, _kinds(items), seen)
                    if first is not None:
                        return [first]
            else:
                copied = self._copy(name, prop, kinds, seen)
                if copied is not None:
                    return copied
        return self.draw(_schema_strategy(_key(prop)))

    def _copy(
        self, name: str, prop: Mapping[str, Any], kinds: frozenset[str], seen: SeenValues
    ) -> Copied | None:
        validator = _validator(_key(prop))
        latest = seen.latest_call
        candidates: list[tuple[Seen, str]] = []
        weights: list[int] = []
        for item in reversed(seen.values):  # the most recent first
            kind = _fits(item.value, kinds)
            if kind is None:
                continue
            candidates.append((item, kind))
            weight = affinity(name, item.key) * (3 if item.ref.source == latest else 1)
            weights.append(weight)
            if len(candidates) >= _MAX_CANDIDATES:
                break
        if not candidates:
            return None
        item, kind = candidates[pick(self.draw, weights)]
        add = 0
        if kind in ("integer", "number") and chance(self.draw, self.boundary_percent):
            add = 1 if chance(self.draw, 50) else -1
        ref = dataclasses.replace(item.ref, cast=_cast(item.value, kind), add=add)
        value = ref.convert(item.value)  # what the replaying model computes, the same way
        if validator is not None and not validator.is_valid(value):
            return None
        return Copied(value, ref)
