"""Provider ``tool_choice`` dicts, read by the neutral model until 0.3.0 (deprecated).

Before 0.2.0, ``ToolChoice.of`` (and so ``ModelSettings``, ``LoopOptions`` and
``ToolChoiceSchedule``) read the ``tool_choice`` dicts of the provider APIs. Those shapes
are each format's to read (``tool_choice_from_param`` of ``harness.formats.openai_chat``,
``openai_responses``, ``anthropic_messages``); for one minor version the old reading
stays here, apart from the neutral model, with a ``DeprecationWarning`` that shows the
``ToolChoice`` to write instead. This module goes in 0.3.0.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

__all__ = ["REMOVAL", "SINCE", "provider_choice_data"]

SINCE, REMOVAL = "0.2.0", "0.3.0"

_WORDS = {"auto": "auto", "none": "none", "required": "required", "any": "required"}


def _name(entry: Any) -> str | None:
    if not isinstance(entry, Mapping):
        return None
    function = entry.get("function")
    name = function.get("name") if isinstance(function, Mapping) else entry.get("name")
    return name if isinstance(name, str) and name else None


def _data(value: Mapping[str, Any]) -> dict[str, Any] | None:
    """The neutral plain data (``ToolChoice.from_data``) of a provider dict, or ``None``."""
    kind = value.get("type")
    if kind in ("function", "tool"):
        name = _name(value)
        return None if name is None else {"mode": "tool", "name": name}
    if kind in _WORDS and set(value) == {"type"}:
        return {"mode": _WORDS[str(kind)]}
    if kind == "allowed_tools":
        inner = value.get("allowed_tools", value)
        mode = inner.get("mode", "auto") if isinstance(inner, Mapping) else None
        tools = inner.get("tools") if isinstance(inner, Mapping) else None
        names = [_name(t) for t in tools] if isinstance(tools, list) else []
        if mode in ("auto", "required") and names and all(names):
            return {"mode": mode, "allowed": names}
    return None


def _spelling(data: Mapping[str, Any]) -> str:
    if data.get("allowed") is not None:
        return f"ToolChoice.allowed_tools({data['allowed']!r}, mode={data['mode']!r})"
    if data["mode"] == "tool":
        return f"ToolChoice.tool({data['name']!r})"
    return f"ToolChoice.{data['mode']}()"


def provider_choice_data(value: Mapping[str, Any]) -> dict[str, Any] | None:
    """The neutral plain data of a provider ``tool_choice`` dict the harness read before
    0.2.0, with a ``DeprecationWarning`` naming the ``ToolChoice`` to write; ``None`` for
    a dict it never read."""
    data = _data(value)
    if data is not None:
        warnings.warn(
            f"tool_choice {dict(value)!r} is a provider's dict: reading it as a tool choice "
            f"is deprecated since {SINCE} and will be removed in {REMOVAL}: write "
            f"harness.{_spelling(data)}, or read the dict with its format's reader "
            "(harness.formats.openai_chat.tool_choice_from_param and the like)",
            DeprecationWarning,
            stacklevel=4,
        )
    return data
