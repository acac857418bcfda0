"""What the model may see of the run's shared state (the blackboard), shown safely.

The shared state (``CallContext.state``, ``RunResult.state``) is the run's blackboard:
tools, strategies and subagents (``subagent_tool``) put objects there. This module
holds the views the blackboard tools (``_blackboard_tools.py``) and your own code use:
the visible entries, an entry's text, its shape and the counts by type.

Values are shown safely: a value that cannot be serialised is named by its type;
known secrets (``Secret`` values, configured API keys, preset parameters) are replaced
by ``[hidden]`` wherever they appear; entries and fields whose *name* says credential
(``api_key``, ``secretKey``, ``auth``, ``session_id``...: the rule of
``harness._credentials``) are hidden whole, at any depth; what lies deeper than 50
levels is not shown. Keys starting with
``harness.`` belong to the harness's own strategies and are not listed or read. A
missing key is an error result naming the closest keys.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from harness._secrets import REDACTED, Secret, is_credential_field, scrub_text
from harness.injection._agentic import RESERVED_PREFIX
from harness.tools import serialize_for_model

__all__ = [
    "BlackboardFormatter",
    "blackboard_counts",
    "blackboard_entries",
    "describe_value",
    "safe_value_text",
]

BlackboardFormatter = Callable[[str, Any], "str | None"]
"""Your text for an entry the model reads: ``(key, value) -> text``, or ``None`` for the
default (JSON). What it returns is still scrubbed of known secrets."""

_PREVIEW = 80


def visible_entries(state: Mapping[str, Any]) -> dict[str, Any]:
    """The entries the model may see (``harness.`` keys left out), in insertion order."""
    return {
        str(k): v
        for k, v in list(state.items())
        if not (isinstance(k, str) and k.startswith(RESERVED_PREFIX))
    }


def _redact_fields(data: Any) -> Any:
    """JSON data with every credential-named field's value hidden."""
    if isinstance(data, dict):
        return {
            k: REDACTED if is_credential_field(k) else _redact_fields(v) for k, v in data.items()
        }
    if isinstance(data, list):
        return [_redact_fields(v) for v in data]
    return data


_MAX_SHOWN_DEPTH = 50
_TOO_DEEP = f"[nested deeper than {_MAX_SHOWN_DEPTH} levels: not shown]"


def _redact_secrets(value: Any, depth: int = 0) -> Any:
    """``value`` with ``Secret`` strings and credential-named entries in plain containers
    hidden (even short ones); what lies deeper than ``_MAX_SHOWN_DEPTH`` is not shown."""
    if isinstance(value, Secret):
        return REDACTED
    if isinstance(value, (dict, list, tuple, set, frozenset)) and depth >= _MAX_SHOWN_DEPTH:
        return _TOO_DEEP
    if isinstance(value, dict):
        return {
            k: REDACTED if is_credential_field(str(k)) else _redact_secrets(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_redact_secrets(v, depth + 1) for v in value]
    return value


def safe_value_text(
    key: str,
    value: Any,
    *,
    max_chars: int | None = None,
    formatter: BlackboardFormatter | None = None,
) -> str:
    """``value`` as text the model may read (see the module docstring for what is hidden);
    ``formatter`` gives your own text for it (``None`` from it: the default JSON)."""
    if is_credential_field(key) or isinstance(value, Secret):
        return REDACTED
    custom = formatter(key, value) if formatter is not None else None
    if custom is not None:
        return _cut(scrub_text(str(custom)), max_chars)
    try:
        text = serialize_for_model(_redact_secrets(value))
    except Exception:  # a value pydantic cannot serialise, even with the fallbacks
        return f"<{type(value).__name__} object (not serialisable)>"
    if not isinstance(value, str):
        with contextlib.suppress(ValueError):  # not JSON: plain text from a fallback
            text = json.dumps(
                _redact_fields(json.loads(text)), ensure_ascii=False, separators=(",", ":")
            )
    return _cut(scrub_text(text), max_chars)


def _cut(text: str, max_chars: int | None) -> str:
    if max_chars is not None and len(text) > max_chars:
        return f"{text[:max_chars]}... [truncated: {len(text)} characters in all]"
    return text


def _type_names(value: Any) -> list[str]:
    return [c.__name__ for c in type(value).__mro__]


def has_type(value: Any, type_name: str | None) -> bool:
    """Whether ``value``'s class or one of its bases is called ``type_name`` (any case);
    every value has type ``None``."""
    if type_name is None:
        return True
    wanted = type_name.lower()
    return any(name.lower() == wanted for name in _type_names(value))


def types_present(state: Mapping[str, Any]) -> list[str]:
    return sorted({type(value).__name__ for value in visible_entries(state).values()})


def blackboard_entries(
    state: Mapping[str, Any],
    *,
    type_name: str | None = None,
    formatter: BlackboardFormatter | None = None,
) -> list[dict[str, Any]]:
    """What ``blackboard_list`` shows: key, type and preview of each visible entry."""
    return [
        {
            "key": key,
            "type": type(value).__name__,
            "preview": safe_value_text(key, value, max_chars=_PREVIEW, formatter=formatter),
        }
        for key, value in visible_entries(state).items()
        if has_type(value, type_name or None)
    ]


def blackboard_counts(state: Mapping[str, Any]) -> dict[str, Any]:
    """What ``blackboard_count`` shows: how many visible entries, in all and by type."""
    by_type = collections.Counter(type(v).__name__ for v in visible_entries(state).values())
    return {"total": sum(by_type.values()), "by_type": dict(sorted(by_type.items()))}


def describe_value(key: str, value: Any) -> dict[str, Any]:
    """What ``blackboard_describe`` shows: an entry's shape, never its values.

    Its type and base classes, the first line of its class's docstring, and its fields
    with their types (dataclasses, pydantic models, attrs classes, plain objects), or
    its length for a string or a collection.
    """
    cls = type(value)
    shape: dict[str, Any] = {
        "key": key,
        "type": cls.__name__,
        "bases": [name for name in _type_names(value)[1:] if name != "object"],
    }
    doc = _own_doc(cls)
    if doc:
        shape["doc"] = doc
    fields = _fields(value)
    if fields is not None:
        shape["fields"] = fields
    elif isinstance(value, (str, bytes, Mapping, list, tuple, set, frozenset)):
        shape["length"] = len(value)
    return shape


def _own_doc(cls: type) -> str | None:
    """The first line of the docstring the class's author wrote (not a builtin's, nor the
    signature ``dataclasses`` writes when there is none)."""
    doc = inspect.getdoc(cls) if cls.__module__ != "builtins" else None
    if not doc or (dataclasses.is_dataclass(cls) and doc.startswith(f"{cls.__name__}(")):
        return None
    return doc.splitlines()[0]


def _fields(value: Any) -> dict[str, str] | None:
    """Field names and their types, for an object that has named fields."""
    cls = type(value)
    if dataclasses.is_dataclass(value):
        return {f.name: _type_text(f.type) for f in dataclasses.fields(value)}
    if isinstance(value, BaseModel):
        return {name: _type_text(f.annotation) for name, f in cls.model_fields.items()}
    attrs = getattr(cls, "__attrs_attrs__", None)
    if attrs is not None:
        return {a.name: _type_text(a.type) for a in attrs}
    if isinstance(value, (str, bytes, Mapping, list, tuple, set, frozenset, int, float)):
        return None
    try:
        names = vars(value)
    except Exception:  # no __dict__ (slots, builtins) or one that cannot be read
        return None
    return {k: type(v).__name__ for k, v in names.items() if not k.startswith("_")}


def _type_text(annotation: Any) -> str:
    if isinstance(annotation, str):
        return annotation
    if isinstance(annotation, type):
        return annotation.__name__
    return repr(annotation).replace("typing.", "")
