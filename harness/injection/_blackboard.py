"""Blackboard tools: the model lists and reads the run's shared state.

The shared state (``CallContext.state``, ``RunResult.state``) is the run's blackboard:
tools, strategies and subagents (``subagent_tool``) put objects there. Two tools let
the model see them:

- ``blackboard_list(type=None)``: every entry's key, type name and a short preview,
  optionally only entries of one type (the class name or one of its bases, any case);
- ``blackboard_read(key)``: one entry's value as JSON (or text), cut at ``max_chars``.

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

import contextlib
import json
from collections.abc import Mapping
from typing import Annotated, Any

from harness._errors import UsageError
from harness._secrets import REDACTED, Secret, is_credential_field, scrub_text
from harness._validation import close_matches, format_names, int_problem
from harness.injection._agentic import RESERVED_PREFIX
from harness.injection._facade import facade
from harness.tools import CallContext, Tool, ToolResult, serialize_for_model

__all__ = ["blackboard_entries", "blackboard_tools", "safe_value_text"]

_PREVIEW = 80


def _visible(state: Mapping[str, Any]) -> dict[str, Any]:
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


def safe_value_text(key: str, value: Any, *, max_chars: int | None = None) -> str:
    """``value`` as text the model may read (see the module docstring for what is hidden)."""
    if is_credential_field(key) or isinstance(value, Secret):
        return REDACTED
    try:
        text = serialize_for_model(_redact_secrets(value))
    except Exception:  # a value pydantic cannot serialise, even with the fallbacks
        return f"<{type(value).__name__} object (not serialisable)>"
    if not isinstance(value, str):
        with contextlib.suppress(ValueError):  # not JSON: plain text from a fallback
            text = json.dumps(
                _redact_fields(json.loads(text)), ensure_ascii=False, separators=(",", ":")
            )
    text = scrub_text(text)
    if max_chars is not None and len(text) > max_chars:
        text = f"{text[:max_chars]}... [truncated: {len(text)} characters in all]"
    return text


def _type_names(value: Any) -> list[str]:
    return [c.__name__ for c in type(value).__mro__]


def _types_present(state: Mapping[str, Any]) -> list[str]:
    return sorted({type(value).__name__ for value in _visible(state).values()})


def blackboard_entries(
    state: Mapping[str, Any], *, type_name: str | None = None
) -> list[dict[str, Any]]:
    """What ``blackboard_list`` shows: key, type and preview of each visible entry."""
    wanted = type_name.lower() if type_name else None
    return [
        {
            "key": key,
            "type": type(value).__name__,
            "preview": safe_value_text(key, value, max_chars=_PREVIEW),
        }
        for key, value in _visible(state).items()
        if wanted is None or wanted in (n.lower() for n in _type_names(value))
    ]


def blackboard_tools(
    *, max_chars: int = 4000, unfold: bool = False, facade_name: str = "blackboard"
) -> list[Tool]:
    """``blackboard_list`` and ``blackboard_read``, or (``unfold=True``) one facade that
    offers them when called. ``max_chars`` caps what one read returns."""
    problem = int_problem(max_chars, name="max_chars", minimum=1)
    if problem is not None:
        raise UsageError(problem)

    def blackboard_list(
        context: CallContext,
        type: Annotated[str | None, "Only entries of this type (class name)"] = None,
    ) -> ToolResult | list[dict[str, Any]]:
        """List the shared objects of this run: key, type and a short preview of each."""
        entries = blackboard_entries(context.state, type_name=type)
        if type and not entries:
            present = _types_present(context.state)
            hint = close_matches(type, present)
            maybe = f" (did you mean {hint[0]!r}?)" if hint else ""
            return ToolResult.error(
                f"No blackboard entry of type {type!r}{maybe}. Types present: "
                f"{format_names(present)}.",
                kind="unknown_type",
            )
        return entries

    def blackboard_read(
        context: CallContext, key: Annotated[str, "The key of the entry"]
    ) -> ToolResult:
        """Read one shared object of this run by its key."""
        visible = _visible(context.state)
        if key not in visible:
            found = close_matches(key, visible, n=3)
            maybe = f" Did you mean {format_names(found)}?" if found else ""
            return ToolResult.error(
                f"No blackboard entry {key!r}.{maybe} Keys: {format_names(visible)}. "
                "Call blackboard_list to see them all.",
                kind="unknown_key",
            )
        value = visible[key]
        return ToolResult(content=safe_value_text(key, value, max_chars=max_chars), value=value)

    tools = [Tool.from_function(blackboard_list), Tool.from_function(blackboard_read)]
    if not unfold:
        return tools
    return [
        facade(
            facade_name,
            "See the objects this run shares (the blackboard): list them, read one by key.",
            tools,
        )
    ]
