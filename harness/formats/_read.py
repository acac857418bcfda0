"""Reading a provider's response body defensively: every field checked, named when wrong.

A provider (or a proxy in front of it) can answer with a list, an error body, or tool
calls whose ``arguments`` is an object or ``null``. The SDKs read such bodies leniently
(``model_construct``), so the format decoders check each field they use and raise a
``MalformedResponse`` (``code="malformed_response"``) naming the field's path. Every
format's client side reads responses with these helpers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness._errors import MalformedResponse
from harness._validation import is_int
from harness.messages import ToolCall

__all__ = [
    "MALFORMED",
    "checked_call",
    "describe",
    "error_body_message",
    "field",
    "is_object",
    "malformed",
    "not_json",
    "optional_int",
    "optional_str",
]

MALFORMED = "malformed_response"
"""The ``ProviderError.code`` of a response the harness cannot read."""

_JSON_TYPES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    list: "an array",
    tuple: "an array",
    dict: "an object",
    type(None): "null",
}


def describe(value: Any) -> str:
    """The JSON type of ``value`` as an error message says it ("an object", "null")."""
    if isinstance(value, Mapping):
        return "an object"
    return _JSON_TYPES.get(type(value), type(value).__name__)


def malformed(what: str, path: str, expected: str, value: Any) -> MalformedResponse:
    """The error for a field of the wrong type."""
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return MalformedResponse(
        f"malformed {what}: {path} must be {expected}, got {describe(value)} ({shown})"
    )


def is_object(value: Any) -> bool:
    """A JSON object: a mapping or an SDK model (attributes), not a scalar or a list."""
    if isinstance(value, Mapping):
        return True
    return value is not None and not isinstance(value, (str, bytes, int, float, list, tuple))


def field(obj: Any, name: str) -> Any:
    """``obj[name]`` for a mapping, ``obj.name`` for an SDK model; ``None`` when absent."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def optional_str(obj: Any, name: str, path: str, what: str) -> str | None:
    """A string field that may be null or absent."""
    value = field(obj, name)
    if value is not None and not isinstance(value, str):
        raise malformed(what, f"{path}.{name}", "a string or null", value)
    return value


def optional_int(obj: Any, name: str, path: str, what: str) -> int:
    """A token count: an int >= 0, or 0 when null or absent (``10.9``, ``-500``, ``1e999``
    and ``"abc"`` are a ``MalformedResponse`` naming the field)."""
    value = field(obj, name)
    if value is None:
        return 0
    if not is_int(value, minimum=0):
        raise malformed(what, f"{path}.{name}", "an integer >= 0", value)
    return value


def checked_call(
    what: str, paths: tuple[str, str, str], call_id: Any, name: Any, arguments: Any
) -> ToolCall:
    """A tool call whose id, name and arguments (JSON text) are all strings; else the
    ``malformed_response`` error naming the field (``paths`` give each field's path)."""
    expected_kinds = ("a string", "a string", "a string (JSON text)")
    for path, value, expected in zip(
        paths, (call_id, name, arguments), expected_kinds, strict=True
    ):
        if not isinstance(value, str):
            raise malformed(what, path, expected, value)
    return ToolCall(id=call_id, name=name, arguments=arguments)


def error_body_message(body: Any) -> str | None:
    """The message of an API error body (``{"error": {...}}``), if ``body`` is one."""
    error = field(body, "error") if is_object(body) else None
    if error is None:
        return None
    if isinstance(error, str):
        return error
    message = field(error, "message")
    code = field(error, "code") or field(error, "type")
    text = message if isinstance(message, str) else repr(error)[:200]
    return f"{text} (code={code!r})" if isinstance(code, str) else text


def not_json(exc: ValueError) -> MalformedResponse:
    """The error for a response body (or stream event) that is not JSON (empty or truncated)."""
    return MalformedResponse(f"malformed response: the body is not valid JSON ({exc})")
