"""Test-only strategies with planted bugs, named by import path (``planted:...``) in campaigns."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

from harness.loop import InjectionContext, InjectionStrategy, LoopCore, ToolsetChange
from harness.tools import Tool, ToolResult


class InjectsOfferedTool(InjectionStrategy):
    """Bug: after a call, 'injects' a tool that is offered already (offered before injected)."""

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        if not context.offered:
            return None
        tool = context.tools[context.offered[0]]
        return ToolsetChange(add=(tool,), reason="planted bug: re-inject an offered tool")


class Sound(InjectionStrategy):
    """Changes nothing: a correct (if useless) strategy."""


def offered_before_injected() -> list[InjectionStrategy]:
    """The planted bug."""
    return [InjectsOfferedTool()]


def sound() -> list[InjectionStrategy]:
    """A correct strategy."""
    return [Sound()]


def broken_factory() -> list[InjectionStrategy]:
    """A user strategy that raises when built."""
    raise RuntimeError("cannot connect to the strategy's backend")


class _Interrupt:
    calls = 0


def interrupting() -> list[InjectionStrategy]:
    """The planted bug, and a Ctrl-C after ``PLANTED_INTERRUPT_AFTER`` builds."""
    _Interrupt.calls += 1
    if _Interrupt.calls > int(os.environ.get("PLANTED_INTERRUPT_AFTER", "1000000")):
        raise KeyboardInterrupt
    return [InjectsOfferedTool()]


class DropsSecondToolMessage(LoopCore):
    """Bug in a loop core: with two or more calls in one turn, the second call's tool
    message never reaches the history (strategies cannot touch the history, so this
    history bug is planted in the core; tests swap it in for ``LoopCore``)."""

    def receive_results(self, results: Sequence[tuple[ToolResult, int]]) -> None:
        before = len(self.messages)
        super().receive_results(results)
        if len(self.messages) - before >= 2:
            del self.messages[before + 1]


class CrashesBeforeTurn(InjectionStrategy):
    """Bug: ``before_turn`` raises once a tool has been called (a crashing strategy)."""

    def before_turn(self, context: InjectionContext) -> ToolsetChange | None:
        if context.iteration > 1 and context.called:
            raise RuntimeError("planted: the strategy's backend went away")
        return None


def crashing_before_turn() -> list[InjectionStrategy]:
    """A strategy that crashes in ``before_turn`` after the first call."""
    return [CrashesBeforeTurn()]


class InjectsHangingTool(InjectionStrategy):
    """Bug: after the first call, injects a tool that never returns."""

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        if "wait_forever" in context.tools:
            return None

        def wait_forever(arguments: dict[str, object]) -> str:
            threading.Event().wait()  # never set
            return "unreachable"

        schema = {"type": "object", "properties": {}, "additionalProperties": False}
        tool = Tool.from_schema("wait_forever", "Waits.", schema, wait_forever)
        return ToolsetChange(add=(tool,), reason="planted: a tool that never returns")


def hanging_tool() -> list[InjectionStrategy]:
    """A strategy injecting a tool that never returns."""
    return [InjectsHangingTool()]


def exits_zero() -> list[InjectionStrategy]:
    """A strategy factory that ends the process, successfully."""
    raise SystemExit(0)


def not_strategies() -> int:
    """A factory returning something that is not a strategy."""
    return 5


class InjectsAsyncTool(InjectionStrategy):
    """Injects an async tool whose work never reports back (a slow background job)."""

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        if "start_export" in context.tools:
            return None

        def start_export(arguments: dict[str, object]) -> ToolResult:
            return ToolResult.started("export started")

        schema = {"type": "object", "properties": {}, "additionalProperties": False}
        tool = Tool.from_schema("start_export", "Start an export.", schema, start_export)
        return ToolsetChange(add=(tool,), reason="planted: an async tool")


def async_tool() -> list[InjectionStrategy]:
    """A strategy injecting an async tool that never completes."""
    return [InjectsAsyncTool()]
