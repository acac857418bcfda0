"""Call context -> MCP request ``_meta``: what of the run's hidden context crosses the boundary.

A converter is any function ``(CallContext) -> Mapping | None``. The ready-made ones:
``pass_through()`` (the default: every JSON value), ``no_meta()``, ``allow_keys(...)``
and ``deny_keys(...)``. Values that are not JSON (numbers, text, booleans, null, lists
and dicts of those) never cross, whatever the converter says.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from harness._errors import UsageError
from harness.tools import CallContext

__all__ = ["MetaConverter", "allow_keys", "deny_keys", "meta_for", "no_meta", "pass_through"]

MetaConverter = Callable[[CallContext], Mapping[str, Any] | None]
"""Turns a call's context into the ``_meta`` of the MCP ``tools/call`` request."""

_RESERVED = "io.modelcontextprotocol/"


def _is_json(value: Any) -> bool:
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_json(v) for v in value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


def _json_items(context: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in context.items() if _is_json(v)}


def pass_through() -> MetaConverter:
    """Every JSON value of the context crosses (the default)."""

    def convert(context: CallContext) -> Mapping[str, Any]:
        return _json_items(context)

    convert.__name__ = "pass_through"
    return convert


def no_meta() -> MetaConverter:
    """Nothing crosses: requests carry no ``_meta`` of ours."""

    def convert(context: CallContext) -> None:
        return None

    convert.__name__ = "no_meta"
    return convert


def _keys(kind: str, keys: tuple[str, ...]) -> frozenset[str]:
    bad = [k for k in keys if not isinstance(k, str) or not k]
    if bad or not keys:
        raise UsageError(f"{kind}() takes one or more context key names, got {keys!r}")
    return frozenset(keys)


def allow_keys(*keys: str) -> MetaConverter:
    """Only the named context keys cross (secrets stay home unless named here)."""
    allowed = _keys("allow_keys", keys)

    def convert(context: CallContext) -> Mapping[str, Any]:
        return {k: v for k, v in _json_items(context).items() if k in allowed}

    convert.__name__ = f"allow_keys{tuple(sorted(allowed))}"
    return convert


def deny_keys(*keys: str) -> MetaConverter:
    """Every context key crosses except the named ones."""
    denied = _keys("deny_keys", keys)

    def convert(context: CallContext) -> Mapping[str, Any]:
        return {k: v for k, v in _json_items(context).items() if k not in denied}

    convert.__name__ = f"deny_keys{tuple(sorted(denied))}"
    return convert


def meta_for(converter: MetaConverter, context: CallContext) -> dict[str, Any] | None:
    """Run ``converter`` and check what it made: a mapping of JSON values, or ``None``.

    Non-JSON values and keys in the protocol's reserved ``io.modelcontextprotocol/``
    namespace are dropped; an empty result sends no ``_meta``.
    """
    got = converter(context)
    if got is None:
        return None
    if not isinstance(got, Mapping):
        raise UsageError(
            f"the _meta converter {getattr(converter, '__name__', converter)!r} returned "
            f"{type(got).__name__}; return a mapping of JSON values or None"
        )
    meta = {str(k): v for k, v in got.items() if _is_json(v) and not str(k).startswith(_RESERVED)}
    return meta or None
