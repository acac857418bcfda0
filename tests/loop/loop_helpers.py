"""Small tools, strategies and checks shared by the loop tests."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from harness.loop import Event, InjectionContext, InjectionStrategy, ToolsetChange
from harness.messages import AssistantMessage, Message, ToolMessage
from harness.tools import Tool, llm_tool


@llm_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@llm_tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


@llm_tool
def boom(reason: str = "broken") -> str:
    """Always fails."""
    raise ValueError(reason)


@llm_tool
def extra() -> str:
    """A tool that is injected later."""
    return "extra done"


class Recorder:
    """An observer that keeps every event."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    @property
    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]


class InjectAfter(InjectionStrategy):
    """Adds ``tools`` after the first successful call of ``trigger``; logs every consultation."""

    def __init__(self, trigger: str, tools: Sequence[Tool]) -> None:
        self.trigger = trigger
        self.tools = tuple(tools)
        self.seen: list[tuple[int, str, str]] = []
        self.contexts: list[InjectionContext] = []

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        assert context.call is not None and context.result is not None
        self.seen.append((context.iteration, context.call.id, context.call.name))
        self.contexts.append(context)
        if context.call.name == self.trigger and not context.result.is_error:
            fresh = tuple(t for t in self.tools if t.name not in context.tools)
            if fresh:
                return ToolsetChange(add=fresh, reason=f"{self.trigger} was called")
        return None


def assert_history_well_formed(messages: Sequence[Message]) -> None:
    """Every tool call is answered exactly once, right after its assistant message, in order."""
    answered: list[str] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        if isinstance(message, AssistantMessage) and message.tool_calls:
            ids = [c.id for c in message.tool_calls]
            assert len(set(ids)) == len(ids), f"duplicate ids in one turn: {ids}"
            replies = messages[i + 1 : i + 1 + len(ids)]
            assert all(isinstance(r, ToolMessage) for r in replies), replies
            assert [r.tool_call_id for r in replies if isinstance(r, ToolMessage)] == ids
            names = [c.name for c in message.tool_calls]
            assert [r.name for r in replies if isinstance(r, ToolMessage)] == names
            answered.extend(ids)
            i += 1 + len(ids)
            continue
        assert not isinstance(message, ToolMessage), f"orphan tool message at {i}: {message}"
        i += 1
    assert len(set(answered)) == len(answered), f"a call id was answered twice: {answered}"


def tool_messages(messages: Sequence[Message]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def kinds(events: Sequence[Any]) -> list[str]:
    return [e.kind for e in events]


def drive(driver: str, model: Any, prompt: Any, **kwargs: Any) -> Any:
    """Run with the sync (``"sync"``) or async (``"async"``) driver."""
    from harness.loop import arun, run

    if driver == "sync":
        return run(model, prompt, **kwargs)
    return asyncio.run(arun(model, prompt, **kwargs))
