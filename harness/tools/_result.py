"""Tool results: what the model reads, what the user sees, and the Python value kept."""

from __future__ import annotations

import dataclasses
from typing import Any

import pydantic_core
from pydantic import BaseModel

__all__ = ["ToolResult", "serialize_for_model"]


def _fallback(value: Any) -> Any:
    """JSON stand-in for objects pydantic cannot serialise: public attributes or ``str``."""
    attrs = getattr(value, "__dict__", None)
    if isinstance(attrs, dict):
        return {k: v for k, v in attrs.items() if not k.startswith("_")}
    return str(value)


def serialize_for_model(value: Any) -> str:
    """Text for the model: strings pass through unchanged, anything else becomes JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, BaseModel):
        return value.model_dump_json(fallback=_fallback)  # e.g. a provider in a field
    return pydantic_core.to_json(value, fallback=_fallback).decode()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """The outcome of one tool call.

    A tool may return a ``ToolResult`` itself to set the flags; any other return
    value becomes ``ToolResult.ok(value)``.
    """

    content: str
    """Text the model reads in the tool message."""
    value: Any = None
    """The original Python return value, handed to injection strategies."""
    user_content: str | None = None
    """Optional text meant for the user rather than the model."""
    silent: bool = False
    """When true, observers and reports treat the call as background work (not shown to users)."""
    is_error: bool = False
    """True when the call failed; ``content`` explains the failure to the model."""
    error_kind: str | None = None
    """Why it failed: ``invalid_arguments``, ``exception``, ``timeout``, ``unknown_tool``, ..."""
    exception: BaseException | None = None
    """The exception raised by the tool, kept for the trace (never shown to the model)."""
    change: Any = None
    """A toolset change the tool declares itself (``harness.loop.ToolsetChange``, or a function
    ``(InjectionContext) -> ToolsetChange | None`` computed when applied), e.g. a facade."""
    child_traces: tuple[Any, ...] = ()
    """Traces of nested runs this call made (agentic tools); the loop appends them to
    ``Trace.children``."""

    @classmethod
    def ok(cls, value: Any, *, user_content: str | None = None, silent: bool = False) -> ToolResult:
        """A successful result whose model content is ``value`` serialised."""
        return cls(
            content=serialize_for_model(value),
            value=value,
            user_content=user_content,
            silent=silent,
        )

    @classmethod
    def error(
        cls, message: str, *, kind: str = "error", exception: BaseException | None = None
    ) -> ToolResult:
        """A failed result with ``message`` for the model."""
        return cls(content=message, is_error=True, error_kind=kind, exception=exception)

    def with_content(self, content: str) -> ToolResult:
        """A copy with different model content."""
        return dataclasses.replace(self, content=content)
