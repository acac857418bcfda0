"""What a persona remembers about the current run, updated from each request."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from harness.loop import ModelRequest
from harness.messages import ToolCall, ToolMessage

__all__ = ["RunState"]


@dataclasses.dataclass(kw_only=True)
class RunState:
    """A persona's memory of one run (reset when a new run starts)."""

    offered: tuple[str, ...] = ()
    """Tools offered on the current request."""
    schemas: dict[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    """Argument schemas of the offered tools."""
    ever_offered: set[str] = dataclasses.field(default_factory=set)
    """Every tool name offered so far in the run."""
    called: dict[str, int] = dataclasses.field(default_factory=dict)
    """How often the persona sent a call to each name."""
    last_arguments: dict[str, str] = dataclasses.field(default_factory=dict)
    """The raw arguments last sent to each name."""
    injected_by: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    """For each called tool, the tools that appeared right after its turn."""
    removed: list[str] = dataclasses.field(default_factory=list)
    """Called tools that are no longer offered (facades that unfolded, removed tools)."""
    ids: list[str] = dataclasses.field(default_factory=list)
    """Every call id the persona sent."""
    last_turn: tuple[str, ...] = ()
    """Names called on the previous turn."""
    turns: int = 0
    """Requests answered so far in the run."""
    results: dict[str, str] = dataclasses.field(default_factory=dict)
    """The last result text the model read for each tool name."""
    seen_messages: int = 0
    """History length already read."""

    def observe(self, request: ModelRequest) -> None:
        """Update from a new request: new and removed tools, their schemas, results."""
        names = tuple(request.tool_names)
        current = set(names)
        if self.turns:
            before = set(self.offered)
            new = [n for n in names if n not in before]
            for name in self.last_turn:
                if new:
                    found = self.injected_by.setdefault(name, [])
                    found.extend(n for n in new if n not in found)
        self.removed = [n for n in self.removed if n not in current]
        self.removed.extend(
            n
            for n in self.called
            if n not in current and n in self.ever_offered and n not in self.removed
        )
        self.offered = names
        self.ever_offered.update(names)
        self.schemas = {}
        for definition in request.tools:
            self.schemas[definition.name] = definition.parameters
        for message in request.messages[self.seen_messages :]:
            if isinstance(message, ToolMessage) and message.name:
                self.results[message.name] = message.content
        self.seen_messages = len(request.messages)

    def sent(self, calls: tuple[ToolCall, ...]) -> None:
        """Remember the calls sent on this turn."""
        for call in calls:
            self.called[call.name] = self.called.get(call.name, 0) + 1
            self.last_arguments[call.name] = call.arguments
            self.ids.append(call.id)
        self.last_turn = tuple(c.name for c in calls)
        self.turns += 1
