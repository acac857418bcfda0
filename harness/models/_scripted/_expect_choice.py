"""``expect_tool_choice``: a scripted step that checks the next request's ``tool_choice``."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from harness._errors import ScriptError, UsageError
from harness.loop._tool_choice import show_choice
from harness.tools import ToolChoice

__all__ = ["ExpectToolChoice", "expect_tool_choice", "tool_choice_data", "tool_choice_from_data"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExpectToolChoice:
    """Check the ``tool_choice`` of the next request; produces no response."""

    choice: ToolChoice | None
    """The expected choice (``None``: the request leaves the provider's default)."""

    def describe(self) -> str:
        """Short text for error messages."""
        return f"expect tool_choice {show_choice(self.choice)}"

    def problem(self, actual: ToolChoice | None) -> str | None:
        """Why ``actual`` is not the expected choice (``None`` when it is)."""
        if actual == self.choice:
            return None
        return f"expected {show_choice(self.choice)}, the request has {show_choice(actual)}"


def tool_choice_from_data(value: Any, where: str = "expect_tool_choice") -> ToolChoice | None:
    """A choice from plain data: ``auto`` / ``none`` / ``required`` / a tool name, ``null``
    (no tool_choice), or ``{allowed: [names], mode: auto | required}`` (``ToolChoice.of``)."""
    try:
        return ToolChoice.of(value)
    except UsageError as exc:
        raise ScriptError(f"{where}: {exc}") from None


def tool_choice_data(choice: ToolChoice | None) -> Any:
    """``choice`` as a scenario file writes it, the short form ``tool_choice_from_data``
    reads back: a word, a tool name, ``{allowed: [names], mode: ...}`` or ``None``."""
    if choice is None:
        return None
    if choice.allowed is not None:
        return {"allowed": list(choice.allowed), "mode": choice.mode}
    return choice.name if choice.mode == "tool" else choice.mode


def expect_tool_choice(choice: ToolChoice | str | Mapping[str, Any] | None) -> ExpectToolChoice:
    """An assertion on the ``tool_choice`` of the next request: ``"none"``, ``"required"``,
    ``"auto"``, a tool name, a ``harness.ToolChoice``, or ``None`` for no tool choice."""
    return ExpectToolChoice(choice=tool_choice_from_data(choice))
