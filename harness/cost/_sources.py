"""Requests as prompts for the cache model: neutral runs (each message encoded once) and
recorded bodies (a cassette's requests, exactly as they were sent)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from harness.cost._analysis import Block, Interner, Prompt
from harness.cost._record import RecordedRun
from harness.formats._prompt import MESSAGES, SYSTEM, TOOLS, PromptPiece
from harness.injection import RunRestarted
from harness.loop import ChangeRecord, ModelRequest, Trace, Usage
from harness.messages import Message
from harness.tools._definitions import ToolDefinition

__all__ = ["BodyPrompts", "NeutralPrompts", "format_module"]


def format_module(name: str) -> ModuleType:
    """The ``harness.formats`` module of a format name (``openai-chat``, ...)."""
    from harness.formats import wire_formats

    modules: dict[str, Any] = {m.NAME: m for m in wire_formats()}
    module: ModuleType = modules[name]
    return module


def _changes_by_request(trace: Trace | None) -> dict[int, tuple[ChangeRecord, ...]]:
    """For request ``k`` of a run: the changes made after a call of iteration ``k - 1``
    and by the turn hooks before request ``k`` (what can make it differ from ``k - 1``)."""
    if trace is None:
        return {}
    out: dict[int, tuple[ChangeRecord, ...]] = {}
    iterations = trace.iterations
    for position, record in enumerate(iterations):
        after_calls = (
            tuple(c for c in iterations[position - 1].changes if c.after_call is not None)
            if position
            else ()
        )
        hooks = tuple(c for c in record.changes if c.after_call is None and not c.initial)
        out[record.index] = after_calls + hooks
    return out


def _restart_reason(trace: Trace | None) -> str | None:
    if trace is None:
        return None
    restarts = [e for e in trace.events if isinstance(e, RunRestarted)]
    if not restarts:
        return None
    return "sections: " + ", ".join(restarts[-1].section_keys)  # what was opened


class _RunState:
    """What a run's previous request already encoded (its history only grows)."""

    __slots__ = ("count", "first_user", "last", "messages", "system")

    def __init__(self) -> None:
        self.count = 0
        self.last: Message | None = None
        self.system: list[Block] = []
        self.messages: list[Block] = []
        self.first_user: Block | None = None
        """The first block of the run's conversation (not the system prompt): its key
        across runs."""


class NeutralPrompts:
    """Prompts of neutral requests in one format: each message and tool list encoded once."""

    def __init__(self, format_name: str, interner: Interner) -> None:
        self.module = format_module(format_name)
        self.interner = interner
        self._messages: dict[int, tuple[Message, list[Block], list[Block]]] = {}
        self._tools: dict[Any, tuple[Sequence[ToolDefinition], list[Block], tuple[int, ...]]] = {}

    def _blocks(self, pieces: Sequence[PromptPiece]) -> list[Block]:
        return [self.interner.block(p) for p in pieces]

    def _message(self, message: Message) -> tuple[list[Block], list[Block]]:
        """``(system blocks, conversation blocks)`` of one message."""
        known = self._messages.get(id(message))
        if known is not None and known[0] is message:
            return known[1], known[2]
        pieces = self.module.prompt_message(message)
        if self.module.SYSTEM_FIRST:  # rendered before the conversation wherever it is
            system = self._blocks([p for p in pieces if p.section == SYSTEM])
            rest = self._blocks([p for p in pieces if p.section != SYSTEM])
        else:
            system, rest = [], self._blocks(pieces)
        self._messages[id(message)] = (message, system, rest)
        return system, rest

    def _tool_blocks(self, tools: Sequence[ToolDefinition]) -> tuple[list[Block], tuple[int, ...]]:
        known = self._tools.get(id(tools))
        if known is not None and known[0] is tools:
            return known[1], known[2]
        key = tuple(map(id, tools))
        known = self._tools.get(key)
        if known is None or len(known[0]) != len(tools):
            pieces = self.module.prompt_tools(tools)
            marks = tuple(i for i, p in enumerate(pieces) if p.breakpoint)
            known = (tuple(tools), self._blocks(pieces), marks)
            self._tools[key] = known
        self._tools[id(tools)] = (tools, known[1], known[2])
        return known[1], known[2]

    def _history(self, state: _RunState, messages: Sequence[Message]) -> None:
        """Bring ``state`` up to ``messages`` (only the new ones when the history grew)."""
        if not (
            state.count <= len(messages)
            and (state.count == 0 or messages[state.count - 1] is state.last)
        ):
            state.count, state.system, state.messages, state.first_user = 0, [], [], None
        for position in range(state.count, len(messages)):
            system, rest = self._message(messages[position])
            if state.first_user is None:
                state.first_user = next((b for b in rest if b.section == MESSAGES), None)
            state.system.extend(system)
            state.messages.extend(rest)
        state.count = len(messages)
        state.last = messages[-1] if len(messages) else None

    def prompts(self, runs: Sequence[RecordedRun]) -> list[Prompt]:
        """One prompt per request, run after run."""
        out: list[Prompt] = []
        for number, run in enumerate(runs, 1):
            state = _RunState()
            changes = _changes_by_request(run.trace)
            reason = _restart_reason(run.trace)
            for request in run.requests:
                out.append(self._prompt(request, state, number, changes, reason))
        return out

    def _prompt(
        self,
        request: ModelRequest,
        state: _RunState,
        run: int,
        changes: Mapping[int, tuple[ChangeRecord, ...]],
        reason: str | None,
    ) -> Prompt:
        tools, marks = self._tool_blocks(request.tools)
        self._history(state, request.messages)
        choice = self._blocks(self.module.prompt_choice(request.settings, request.tools))
        return Prompt(
            blocks=[*tools, *state.system, *choice, *state.messages],
            breakpoints=marks,
            tool_count=len(tools),
            run=run,
            iteration=request.iteration,
            conversation=state.first_user,
            changes=changes.get(request.iteration, ()),
            restart_reason=reason,
        )


class BodyPrompts:
    """Prompts of request bodies as sent (a recording), one conversation per first message."""

    def __init__(self, format_name: str, interner: Interner) -> None:
        self.module = format_module(format_name)
        self.interner = interner
        self._runs: dict[int, int] = {}

    def prompt(self, body: Mapping[str, Any], *, recorded: Usage | None = None) -> Prompt:
        """The prompt of one body; requests that start their conversation with the same
        message are one conversation (a run), in order."""
        pieces = self.module.prompt_pieces(body)
        blocks = [self.interner.block(p) for p in pieces]
        tools = sum(1 for p in pieces if p.section == TOOLS)
        first = next((b for b in blocks if b.section == MESSAGES), None)
        run = self._runs.setdefault(id(first), len(self._runs) + 1)
        return Prompt(
            blocks=blocks,
            breakpoints=tuple(i for i, p in enumerate(pieces) if p.breakpoint),
            tool_count=tools,
            run=run,
            conversation=first,
            recorded=recorded,
        )
