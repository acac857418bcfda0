"""Stand-in tools: offered like the real tool, but every call answers with a fixed message."""

from __future__ import annotations

import dataclasses
from typing import Any

from harness.tools import CallContext, PreparedCall, Tool, ToolResult

__all__ = ["StubTool", "stub_of"]


def _never_called(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - prepare short-circuits
    raise RuntimeError("a stub tool's handler is never called")


@dataclasses.dataclass(frozen=True, eq=False)
class StubTool(Tool):
    """A tool with the name, description and schema of another, that never runs.

    Any call (whatever its arguments) gets ``message`` as an error result of kind
    ``error_kind``. Used for chaining placeholders and locked playbook tools.
    """

    message: str = ""
    """What every call answers."""
    error_kind: str = "not_available"
    """The error kind recorded in the trace."""

    def prepare(self, arguments: str, context: CallContext) -> PreparedCall | ToolResult:
        return ToolResult.error(self.message, kind=self.error_kind)


def stub_of(tool: Tool, message: str, *, kind: str = "not_available", **metadata: Any) -> StubTool:
    """A ``StubTool`` offered exactly like ``tool`` (same name, description and schema)."""
    return StubTool(
        name=tool.name,
        description=tool.description,
        parameters=tool.parameters,
        handler=_never_called,
        notes=tool.notes,
        metadata={**tool.metadata, **metadata},
        message=message,
        error_kind=kind,
    )
