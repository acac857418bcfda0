"""Token usage per model, and how a nested run's usage is accounted to its parent.

The core adds every response's usage to ``RunResult.usage`` (the total) and to
``Trace.usage`` under the model name the response reported (``ModelResponse.model_name``,
or :data:`UNKNOWN_MODEL`). When a tool call returns nested traces (agentic and
subagent tools: ``ToolResult.child_traces``), each child's per-model usage is added to
the parent's ``Trace.usage`` and its total to the parent's ``RunResult.usage``, once,
when the call's result arrives. A child's own usage already includes its children, so
any depth of nesting is counted exactly once at every level.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from harness.loop._model import Usage

__all__ = ["UNKNOWN_MODEL", "add_usage", "sum_usage", "total_usage"]

UNKNOWN_MODEL = "unknown"
"""The ``Trace.usage`` key for responses that did not say which model answered."""


def add_usage(by_model: dict[str, Usage], model: str | None, usage: Usage) -> None:
    """Add ``usage`` to ``by_model[model]`` (``UNKNOWN_MODEL`` when ``model`` is empty)."""
    key = model or UNKNOWN_MODEL
    known = by_model.get(key)
    by_model[key] = usage if known is None else known + usage


def total_usage(by_model: Mapping[str, Usage]) -> Usage:
    """The sum of a per-model usage mapping."""
    return sum_usage(by_model.values())


def sum_usage(items: Iterable[Usage]) -> Usage:
    """The sum of ``items`` (an empty ``Usage`` for none)."""
    total = Usage()
    for item in items:
        total = total + item
    return total
