"""Test-only strategies with planted bugs, named by import path (``planted:...``) in campaigns."""

from __future__ import annotations

import os

from harness.loop import InjectionContext, InjectionStrategy, ToolsetChange


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
