"""Call context -> MCP request ``_meta``: what of the run's hidden context crosses the boundary.

A converter is any function ``(CallContext) -> Mapping | None``. The ready-made ones:
``pass_through()`` (the default: every JSON value but credentials), ``no_meta()``,
``allow_keys(...)`` and ``deny_keys(...)``.

Whatever the converter says, these never cross (``meta_for``): values that are not JSON
(numbers, text, booleans, null, lists and dicts of those), ``Secret`` values at any
depth, the harness's own context values (``harness_agent_depth``) and keys in the
protocol's reserved namespace. ``pass_through`` and ``deny_keys`` also leave out every
entry whose name says credential, at any depth (``api_key``, ``API_KEY``, ``apiKey``,
``{"auth": {...}}``: the rule of ``harness._credentials``); ``deny_keys`` names match
case-insensitively at any depth. To send a credential on purpose, name it in
``allow_keys`` and give it as a plain ``str``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from harness._credentials import is_credential_name
from harness._errors import UsageError
from harness._secrets import Secret
from harness.injection._agentic import DEPTH_KEY
from harness.tools import CallContext

__all__ = ["MetaConverter", "allow_keys", "deny_keys", "meta_for", "no_meta", "pass_through"]

MetaConverter = Callable[[CallContext], Mapping[str, Any] | None]
"""Turns a call's context into the ``_meta`` of the MCP ``tools/call`` request."""

_RESERVED = "io.modelcontextprotocol/"
_INTERNAL = frozenset({DEPTH_KEY})
"""Context values the harness sets for itself: never sent."""


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


def _without(value: Any, denied: frozenset[str]) -> Any:
    """``value`` without the entries named credential or in ``denied`` (lower-case), at
    any depth."""
    if isinstance(value, Mapping):
        return {
            k: _without(v, denied)
            for k, v in value.items()
            if not (is_credential_name(str(k)) or str(k).lower() in denied)
        }
    if isinstance(value, (list, tuple)):
        return type(value)(_without(v, denied) for v in value)
    return value


def pass_through() -> MetaConverter:
    """Every JSON value of the context crosses (the default), but entries whose name
    says credential (at any depth)."""

    def convert(context: CallContext) -> Mapping[str, Any]:
        return dict(_without(_json_items(context), frozenset()))

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
    """Every context key crosses except the named ones (any case, at any depth) and
    those whose name says credential."""
    denied = _keys("deny_keys", keys)
    lowered = frozenset(k.lower() for k in denied)

    def convert(context: CallContext) -> Mapping[str, Any]:
        return dict(_without(_json_items(context), lowered))

    convert.__name__ = f"deny_keys{tuple(sorted(denied))}"
    return convert


def meta_for(converter: MetaConverter, context: CallContext) -> dict[str, Any] | None:
    """Run ``converter`` and check what it made: a mapping of JSON values, or ``None``.

    Non-JSON values, ``Secret`` values (at any depth), the harness's own context values
    and keys in the protocol's reserved ``io.modelcontextprotocol/`` namespace are
    dropped; an empty result sends no ``_meta``.
    """
    got = converter(context)
    if got is None:
        return None
    if not isinstance(got, Mapping):
        raise UsageError(
            f"the _meta converter {getattr(converter, '__name__', converter)!r} returned "
            f"{type(got).__name__}; return a mapping of JSON values or None"
        )
    meta = {
        str(k): _without_secrets(v)
        for k, v in got.items()
        if not (str(k).startswith(_RESERVED) or str(k) in _INTERNAL or isinstance(v, Secret))
        and _is_json(_without_secrets(v))
    }
    return meta or None


def _without_secrets(value: Any) -> Any:
    """``value`` with every ``Secret`` inside it left out (list items, dict entries)."""
    if isinstance(value, Mapping):
        return {k: _without_secrets(v) for k, v in value.items() if not isinstance(v, Secret)}
    if isinstance(value, (list, tuple)):
        return type(value)(_without_secrets(v) for v in value if not isinstance(v, Secret))
    return value
