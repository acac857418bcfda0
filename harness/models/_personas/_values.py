"""Seeded JSON values from a JSON Schema, for persona tool arguments.

A small generator instead of hypothesis: personas run inside tests (also inside
``@given`` tests), must be deterministic for a ``random.Random`` and must not
touch hypothesis' global state. Strings come from faker, seeded per value, and
are picked by format and property name (``email``, ``city``, ``date``...).
"""

from __future__ import annotations

import datetime
import random
import uuid
from collections.abc import Mapping
from typing import Any

from harness._extras import require
from harness.tools._jsonschema import tool_validator
from harness.tools._patterns import PatternTimeout, pattern_search, time_budget

__all__ = ["SchemaValues", "wrong_type_value"]

_MAX_DEPTH = 5
_TRIES = 8
_PATTERN_BUDGET = 0.5
"""Seconds one value's look-around pattern checks may take in all (a persona then sends
its best effort, which the tool rejects as invalid arguments)."""

_NAME_PROVIDERS = (
    ("email", "email"),
    ("city", "city"),
    ("country", "country"),
    ("address", "street_address"),
    ("phone", "phone_number"),
    ("company", "company"),
    ("url", "url"),
    ("name", "name"),
    ("title", "sentence"),
    ("query", "word"),
    ("text", "sentence"),
    ("description", "sentence"),
)
_FORMATS = {
    "email": "email",
    "uri": "url",
    "url": "url",
    "hostname": "hostname",
    "ipv4": "ipv4",
    "ipv6": "ipv6",
}


class SchemaValues:
    """Generates schema-valid JSON values deterministically from a ``random.Random``."""

    def __init__(self) -> None:
        self._faker: Any = None

    def _fake(self, rng: random.Random) -> Any:
        if self._faker is None:
            faker = require("faker", "persona models (schema-valid argument values)")
            self._faker = faker.Faker("en_US")
        self._faker.seed_instance(rng.getrandbits(32))
        return self._faker

    def generate(self, schema: Mapping[str, Any], rng: random.Random) -> Any:
        """A value for ``schema``; retried a few times until it validates.

        Schemas the generator cannot satisfy (e.g. an unusual ``pattern``) give a
        best-effort value that the tool will reject as invalid arguments.
        """
        validator = tool_validator(schema)
        value: Any = None
        with time_budget(_PATTERN_BUDGET):
            for _ in range(_TRIES):
                value = self._value(schema, schema, rng, "", 0)
                if _valid(validator, value):
                    return value
        return value

    # -- one value ---------------------------------------------------------------------

    def _value(
        self, schema: Any, root: Mapping[str, Any], rng: random.Random, hint: str, depth: int
    ) -> Any:
        if not isinstance(schema, Mapping):
            return None if schema is False else rng.choice(["x", 1, True])
        schema = _resolve(schema, root)
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return rng.choice(list(schema["enum"]))
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if options:
                return self._value(_pick(options, rng), root, rng, hint, depth)
        if schema.get("allOf"):
            merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                merged.update(_resolve(part, root) if isinstance(part, Mapping) else {})
            return self._value(merged, root, rng, hint, depth)
        kind = schema.get("type")
        if isinstance(kind, list):
            non_null = [k for k in kind if k != "null"]
            kind = rng.choice(non_null) if non_null and rng.random() < 0.9 else rng.choice(kind)
        if kind is None:
            kind = (
                "object" if "properties" in schema else "array" if "items" in schema else "string"
            )
        if kind == "object":
            return self._object(schema, root, rng, depth)
        if kind == "array":
            return self._array(schema, root, rng, hint, depth)
        if kind == "integer":
            return _integer(schema, rng)
        if kind == "number":
            return _number(schema, rng)
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "null":
            return None
        return self._string(schema, rng, hint)

    def _object(
        self, schema: Mapping[str, Any], root: Mapping[str, Any], rng: random.Random, depth: int
    ) -> dict[str, Any]:
        properties = schema.get("properties") or {}
        required = set(schema.get("required") or ())
        out: dict[str, Any] = {}
        for name, sub in properties.items():
            if name in required or (depth < _MAX_DEPTH and rng.random() < 0.5):
                out[name] = self._value(sub, root, rng, name, depth + 1)
        return out

    def _array(
        self,
        schema: Mapping[str, Any],
        root: Mapping[str, Any],
        rng: random.Random,
        hint: str,
        depth: int,
    ) -> list[Any]:
        low = int(schema.get("minItems", 0))
        high = int(schema.get("maxItems", low + 3))
        if depth >= _MAX_DEPTH:
            high = low
        count = rng.randint(low, max(low, high))
        prefix = list(schema.get("prefixItems") or ())
        items = schema.get("items", {})
        out: list[Any] = []
        for index in range(count):
            sub = prefix[index] if index < len(prefix) else items
            value = self._value(sub, root, rng, hint, depth + 1)
            if schema.get("uniqueItems") and value in out:
                continue
            out.append(value)
        return out

    def _string(self, schema: Mapping[str, Any], rng: random.Random, hint: str) -> str:
        fmt = schema.get("format")
        low = int(schema.get("minLength", 0))
        high = int(schema.get("maxLength", max(low, 40)))
        pattern = schema.get("pattern")
        for _ in range(_TRIES):
            text = self._text(fmt, hint, rng)
            if fmt is None and len(text) > high:
                text = text[:high]
            if len(text) < low:
                text += "x" * (low - len(text))
            if pattern is None or _matches(pattern, text):
                return text
        return text

    def _text(self, fmt: str | None, hint: str, rng: random.Random) -> str:
        if fmt == "date-time":
            return _moment(rng).isoformat()
        if fmt == "date":
            return _moment(rng).date().isoformat()
        if fmt == "time":
            return _moment(rng).time().isoformat()
        if fmt == "uuid":
            return str(uuid.UUID(int=rng.getrandbits(128), version=4))
        fake = self._fake(rng)
        if fmt in _FORMATS:
            return str(getattr(fake, _FORMATS[fmt])())
        lowered = hint.lower()
        for key, provider in _NAME_PROVIDERS:
            if key in lowered:
                return str(getattr(fake, provider)())
        if lowered == "id" or lowered.endswith("_id"):
            return str(fake.bothify("??-####")).lower()
        return str(fake.word())


def _valid(validator: Any, value: Any) -> bool:
    try:
        return bool(validator.is_valid(value))
    except PatternTimeout:
        return False


def _matches(pattern: str, text: str) -> bool:
    """``pattern`` found in ``text``, on the engine that cannot hang (a bad pattern: no)."""
    try:
        return pattern_search(pattern, text)
    except (PatternTimeout, ValueError):
        return False


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    seen = 0
    while "$ref" in schema and seen < 32:
        ref = schema["$ref"]
        target: Any = root
        if isinstance(ref, str) and ref.startswith("#"):
            for part in ref.lstrip("#").strip("/").split("/"):
                if part:
                    target = target.get(part, {}) if isinstance(target, Mapping) else {}
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**(target if isinstance(target, Mapping) else {}), **rest}
        seen += 1
    return schema


def _pick(options: list[Any], rng: random.Random) -> Any:
    non_null = [o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")]
    if non_null and rng.random() < 0.9:
        return rng.choice(non_null)
    return rng.choice(options)


def _bounds(schema: Mapping[str, Any], default_low: float, default_high: float) -> tuple[Any, Any]:
    low = schema.get("minimum", default_low)
    high = schema.get("maximum", default_high)
    if "exclusiveMinimum" in schema:
        low = schema["exclusiveMinimum"]
    if "exclusiveMaximum" in schema:
        high = schema["exclusiveMaximum"]
    if "minimum" in schema and "maximum" not in schema and "exclusiveMaximum" not in schema:
        high = low + (default_high - default_low)
    if "maximum" in schema and "minimum" not in schema and "exclusiveMinimum" not in schema:
        low = high - (default_high - default_low)
    return low, high


def _integer(schema: Mapping[str, Any], rng: random.Random) -> int:
    low, high = _bounds(schema, 0, 100)
    lo = int(low) + (1 if "exclusiveMinimum" in schema else 0)
    hi = int(high) - (1 if "exclusiveMaximum" in schema else 0)
    value = rng.randint(lo, max(lo, hi))
    step = schema.get("multipleOf")
    if isinstance(step, int) and step > 0:
        value = (value // step) * step
        if value < lo:
            value += step
    return value


def _number(schema: Mapping[str, Any], rng: random.Random) -> float:
    low, high = _bounds(schema, 0.0, 100.0)
    value = round(rng.uniform(float(low), float(high)), 2)
    if "exclusiveMinimum" in schema and value <= low:
        value = float(low) + (float(high) - float(low)) / 2
    if "exclusiveMaximum" in schema and value >= high:
        value = float(low) + (float(high) - float(low)) / 2
    return value


def _moment(rng: random.Random) -> datetime.datetime:
    start = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
    return start + datetime.timedelta(seconds=rng.randrange(5 * 365 * 24 * 3600))


def wrong_type_value(schema: Any) -> Any:
    """A value whose JSON type ``schema`` does not accept (a weak model's mistake)."""
    kinds: set[str] = set()
    if isinstance(schema, Mapping):
        kind = schema.get("type")
        kinds.update(kind if isinstance(kind, list) else [kind] if kind else [])
        for option in schema.get("anyOf", ()) or schema.get("oneOf", ()):
            if isinstance(option, Mapping) and isinstance(option.get("type"), str):
                kinds.add(option["type"])
    for candidate in (12345, "not-a-number", {"unexpected": True}, ["a", "b"], "maybe"):
        if not _accepts(kinds, candidate):
            return candidate
    return {"unexpected": True}  # a schema accepting every candidate type: nothing is wrong


def _accepts(kinds: set[str], value: Any) -> bool:
    if not kinds:
        return isinstance(value, str)
    if isinstance(value, bool):
        return "boolean" in kinds
    if isinstance(value, int):
        return bool(kinds & {"integer", "number"})
    if isinstance(value, str):
        return "string" in kinds
    if isinstance(value, dict):
        return "object" in kinds
    return "array" in kinds
