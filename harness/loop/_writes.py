"""What the client writes into the history between requests, and the tools it adds there.

A strategy's change may deliver tools by the provider's mid-conversation addition
(``ToolsetChange(via="addition")``) and may write messages (``ToolsetChange.messages``: a
handoff's new system prompt, crewAI's "give your final answer"). Both wait until the
iteration's tool results are all in the history, then ``flush`` appends them before the
next request: the written messages, then one ``SystemMessage`` whose ``tools`` carry the
added definitions (each format writes it in its API's shape).

A tool added that way is in the toolset (the loop runs its calls) but not declared in
``tools``: ``declared`` leaves it out of the request's definitions. The same holds for a
tool of the starting toolset that the starting history already adds (a recording that
begins after an addition); a deferred tool stays declared, and the addition reveals it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from harness._errors import StrategyError
from harness.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from harness.tools import Tool, Toolset
from harness.tools._definitions import ToolDefinition

__all__ = ["HistoryWrites", "check_written"]


def check_written(messages: Sequence[Message], strategy: str) -> None:
    """Refuse written messages that would leave the history malformed: each call of a
    written assistant message needs a written tool message answering it."""
    for message in messages:
        if not isinstance(message, (SystemMessage, UserMessage, AssistantMessage, ToolMessage)):
            raise StrategyError(
                f"strategy {strategy!r} wrote {message!r} into the history; write harness "
                "messages (SystemMessage, UserMessage, AssistantMessage, ToolMessage)"
            )
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    for message in messages:
        if isinstance(message, AssistantMessage):
            missing = [c.id for c in message.tool_calls if c.id not in answered]
            if missing:
                raise StrategyError(
                    f"strategy {strategy!r} wrote an assistant message whose calls "
                    f"{missing} are not answered by written tool messages; write a "
                    "ToolMessage for each call after it"
                )


class HistoryWrites:
    """The messages and additions queued for the next request, and the tools the history
    added without declaring them (one per run, held by the core)."""

    __slots__ = ("_cache", "_queued", "undeclared")

    def __init__(self, history: Sequence[Message], toolset: Toolset) -> None:
        self._queued: list[Message] = []
        self.undeclared: set[str] = set()
        """Tools in the toolset that an addition made callable, not declared in ``tools``."""
        self._cache: tuple[Sequence[ToolDefinition], int, tuple[ToolDefinition, ...]] | None = None
        for message in history:
            if type(message) is SystemMessage and message.tools:
                self._undeclare(toolset, (t.name for t in message.tools))

    @property
    def pending(self) -> bool:
        """Something waits to be written before the next request."""
        return bool(self._queued)

    def _undeclare(self, toolset: Toolset, names: Iterable[str]) -> None:
        for name in names:
            tool = toolset.get(name)
            if tool is not None and not tool.defer_loading:
                self.undeclared.add(name)

    def write(self, messages: Sequence[Message]) -> None:
        """Queue ``messages`` (checked by the caller) for the next request."""
        self._queued.extend(messages)

    def add(self, toolset: Toolset, added: Sequence[Tool], revealed: Sequence[str]) -> None:
        """Queue an addition of ``added`` (already in ``toolset``) and of the deferred
        tools ``revealed``: one system message carrying their definitions."""
        view = toolset.view()
        definitions = [t.definition() for t in added]
        definitions += [view[n].definition() for n in revealed if n in view]
        if not definitions:
            return
        self._undeclare(toolset, (t.name for t in added))
        last = self._queued[-1] if self._queued else None
        if type(last) is SystemMessage and last.tools and not last.content:
            # several additions before one request: one message, as a client would send
            definitions = [*last.tools, *definitions]
            self._queued.pop()
        self._queued.append(SystemMessage(content="", tools=tuple(definitions)))

    def flush(self, history: list[Message]) -> bool:
        """Append what is queued to ``history``; True when it makes tools callable."""
        queued, self._queued = self._queued, []
        history.extend(queued)
        return any(isinstance(m, (SystemMessage, ToolMessage)) and m.tools for m in queued)

    def declared(self, toolset: Toolset) -> tuple[ToolDefinition, ...]:
        """The definitions to declare in ``tools``: the toolset's, less those an addition
        carries (the same tuple while neither changes)."""
        definitions = toolset.definitions()
        undeclared = self.undeclared
        if not undeclared:
            return definitions
        cache = self._cache
        if cache is not None and cache[0] is definitions and cache[1] == len(undeclared):
            return cache[2]
        declared = tuple(d for d in definitions if d.name not in undeclared)
        self._cache = (definitions, len(undeclared), declared)
        return declared
