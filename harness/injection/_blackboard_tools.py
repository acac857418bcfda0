"""Blackboard tools: the model looks at the run's shared state.

Seed 003's blackboard tools, over the views of ``_blackboard.py``:

- ``blackboard_list(type=None)``: every entry's key, type name and a short preview,
  optionally only entries of one type (the class name or one of its bases, any case);
- ``blackboard_read(key)``: one entry's value as JSON (or text), cut at ``max_chars``;
- ``blackboard_last(type=None)``: the entry added last (of a type), with its key;
- ``blackboard_describe(key)``: an entry's shape (type, bases, fields), not its values;
- ``blackboard_count(type=None)``: how many entries, in all and by type.

A ``formatter`` gives your own text for the values the model reads; whatever it
returns is still scrubbed of known secrets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from harness._errors import UsageError
from harness._names import close_matches, format_names
from harness._validation import int_problem
from harness.injection._blackboard import (
    BlackboardFormatter,
    blackboard_counts,
    blackboard_entries,
    describe_value,
    has_type,
    safe_value_text,
    types_present,
    visible_entries,
)
from harness.injection._facade import facade
from harness.tools import CallContext, Tool, ToolResult

__all__ = ["blackboard_tools"]

TypeFilter = Annotated[str | None, "Only entries of this type (class name)"]


def _unknown_type(state: Mapping[str, Any], type_name: str) -> ToolResult:
    present = types_present(state)
    hint = close_matches(type_name, present)
    maybe = f" (did you mean {hint[0]!r}?)" if hint else ""
    return ToolResult.error(
        f"No blackboard entry of type {type_name!r}{maybe}. Types present: "
        f"{format_names(present)}.",
        kind="unknown_type",
    )


def _unknown_key(visible: Mapping[str, Any], key: str) -> ToolResult:
    found = close_matches(key, visible, n=3)
    maybe = f" Did you mean {format_names(found)}?" if found else ""
    return ToolResult.error(
        f"No blackboard entry {key!r}.{maybe} Keys: {format_names(visible)}. "
        "Call blackboard_list to see them all.",
        kind="unknown_key",
    )


def blackboard_tools(
    *,
    max_chars: int = 4000,
    unfold: bool = False,
    facade_name: str = "blackboard",
    formatter: BlackboardFormatter | None = None,
) -> list[Tool]:
    """``blackboard_list``, ``blackboard_read``, ``blackboard_last``,
    ``blackboard_describe`` and ``blackboard_count``, or (``unfold=True``) one facade that
    offers them when called. ``max_chars`` caps what one read returns; ``formatter``
    (``(key, value) -> text or None``) writes the values the model reads."""
    problem = int_problem(max_chars, name="max_chars", minimum=1)
    if problem is not None:
        raise UsageError(problem)
    if formatter is not None and not callable(formatter):
        raise UsageError(
            f"formatter must be a function (key, value) -> str or None, got {formatter!r}"
        )

    def blackboard_list(
        context: CallContext, type: TypeFilter = None
    ) -> ToolResult | list[dict[str, Any]]:
        """List the shared objects of this run: key, type and a short preview of each."""
        entries = blackboard_entries(context.state, type_name=type, formatter=formatter)
        if type and not entries:
            return _unknown_type(context.state, type)
        return entries

    def blackboard_read(
        context: CallContext, key: Annotated[str, "The key of the entry"]
    ) -> ToolResult:
        """Read one shared object of this run by its key."""
        visible = visible_entries(context.state)
        if key not in visible:
            return _unknown_key(visible, key)
        value = visible[key]
        text = safe_value_text(key, value, max_chars=max_chars, formatter=formatter)
        return ToolResult(content=text, value=value)

    def blackboard_last(context: CallContext, type: TypeFilter = None) -> ToolResult:
        """Read the shared object added last to this run (optionally the last of a type)."""
        visible = visible_entries(context.state)
        matching = [key for key, value in visible.items() if has_type(value, type or None)]
        if not matching:
            if type:
                return _unknown_type(context.state, type)
            return ToolResult.error("The blackboard is empty.", kind="empty")
        key = matching[-1]
        value = visible[key]
        text = safe_value_text(key, value, max_chars=max_chars, formatter=formatter)
        return ToolResult(content=f"{key!r} ({value.__class__.__name__}):\n{text}", value=value)

    def blackboard_describe(
        context: CallContext, key: Annotated[str, "The key of the entry"]
    ) -> ToolResult | dict[str, Any]:
        """Describe one shared object of this run: its type and fields, not its values."""
        visible = visible_entries(context.state)
        if key not in visible:
            return _unknown_key(visible, key)
        return describe_value(key, visible[key])

    def blackboard_count(
        context: CallContext, type: TypeFilter = None
    ) -> ToolResult | dict[str, Any]:
        """Count the shared objects of this run, in all and by type (or of one type)."""
        if not type:
            return blackboard_counts(context.state)
        count = sum(has_type(v, type) for v in visible_entries(context.state).values())
        if not count:
            return _unknown_type(context.state, type)
        return {"type": type, "count": count}

    tools = [
        Tool.from_function(f)
        for f in (
            blackboard_list,
            blackboard_read,
            blackboard_last,
            blackboard_describe,
            blackboard_count,
        )
    ]
    if not unfold:
        return tools
    return [
        facade(
            facade_name,
            "See the objects this run shares (the blackboard): list, read, describe or "
            "count them, or read the last one.",
            tools,
        )
    ]
