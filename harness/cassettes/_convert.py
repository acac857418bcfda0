"""From a recording to something runnable: stub tools and the recorded toolset changes.

``RecordedSession`` gives what is needed to replay one conversation
(harness/cassettes/_conversations.py) through the loop: its starting messages, stub
tools (with the recorded schemas, answering the recorded results in order) and a
strategy that changes the offered tools as the recording did: edits of ``tools``, the
tools the client added mid-conversation (by addition, as it did) and the messages it
wrote between requests. ``scenario_data``
(harness/cassettes/_to_scenario.py) writes the same as an editable scenario file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from harness._errors import UsageError
from harness.cassettes._conversations import Conversation, Gap
from harness.loop import InjectionContext, InjectionStrategy, ToolsetChange
from harness.messages import AssistantMessage, Message, SystemMessage, ToolMessage
from harness.tools import CallContext, PreparedCall, Tool, ToolDefinition, ToolResult

__all__ = ["RecordedSession", "RecordedTools", "recorded_tools", "results_by_call"]


Recorded = str | dict[str, Any]
"""One recorded result: its text, or ``{"content": text, "reveals": [names]}`` for a
result that revealed deferred tools (a client search's ``tool_reference`` blocks)."""


def results_by_call(conversation: Conversation) -> dict[str, str]:
    """Recorded tool results by call id (the first answer of each call)."""
    out: dict[str, str] = {}
    for request in conversation.requests:
        for message in request.messages:
            if isinstance(message, ToolMessage):
                out.setdefault(message.tool_call_id, str(message.content))
    return out


def _results_by_tool(conversation: Conversation) -> dict[str, list[Recorded]]:
    """Recorded tool results per tool name, in call order."""
    names: dict[str, str] = {}
    results: dict[str, list[Recorded]] = {}
    first = conversation.requests[0].messages if conversation.requests else ()
    # results already in the starting history answer no call of the replay, nor do the
    # results of calls the client wrote itself (the replay writes those too)
    seen: set[str] = {m.tool_call_id for m in first if isinstance(m, ToolMessage)}
    for k in range(len(conversation.requests) - 1):
        for message in conversation.gap(k).written:
            if isinstance(message, AssistantMessage):
                seen.update(c.id for c in message.tool_calls)
    for request in conversation.requests:
        for message in request.messages:
            if isinstance(message, AssistantMessage):
                for call in message.tool_calls:
                    names[call.id] = call.name
            elif isinstance(message, ToolMessage) and message.tool_call_id not in seen:
                seen.add(message.tool_call_id)
                name = names.get(message.tool_call_id)
                if name is not None:
                    text = str(message.content)
                    item: Recorded = (
                        {"content": text, "reveals": [t.name for t in message.tools]}
                        if message.tools
                        else text
                    )
                    results.setdefault(name, []).append(item)
    return results


def _never_called(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - prepare answers
    raise RuntimeError("a recorded tool's handler is never called")


@dataclasses.dataclass(frozen=True, eq=False)
class RecordedTool(Tool):
    """A stand-in for a recorded tool: offered with the recorded name, description and
    schema; each call answers the next recorded result, whatever its arguments (the
    recording already holds what the model was told, argument errors included)."""

    results: list[Recorded] = dataclasses.field(default_factory=list, repr=False)
    """Recorded results still to give, in call order."""
    revealable: Mapping[str, ToolDefinition] = dataclasses.field(
        default_factory=dict, repr=False, compare=False
    )
    """The definitions a recorded result may reveal, by name."""

    def prepare(self, arguments: str, context: CallContext) -> PreparedCall | ToolResult:
        if not self.results:
            return ToolResult(content=f"(no recorded result left for {self.name})")
        item = self.results.pop(0)
        if isinstance(item, str):
            return ToolResult(content=item, value=item)
        text = str(item.get("content", ""))
        reveals = tuple(
            self.revealable.get(n) or ToolDefinition(name=n) for n in item.get("reveals", ())
        )
        return ToolResult(content=text, value=text, reveals=reveals)


def _stub(
    tool: ToolDefinition, results: Sequence[Recorded], revealable: Mapping[str, ToolDefinition]
) -> Tool:
    parameters = dict(tool.parameters) or {"type": "object", "properties": {}}
    parameters.setdefault("type", "object")
    return RecordedTool(
        name=tool.name,
        description=tool.description or "",
        parameters=parameters,
        handler=_never_called,
        results=list(results),
        revealable=revealable,
        defer_loading=tool.defer_loading,
        namespace=tool.namespace,
        search=tool.search,
    )


def recorded_tools(
    tools: Sequence[Mapping[str, Any]], results: Mapping[str, Sequence[Recorded]] | None = None
) -> list[Tool]:
    """Stub tools from plain data (``ToolDefinition.to_data``), each answering its
    recorded results in order (a result ``{"content": ..., "reveals": [names]}`` reveals
    those tools, as a client search's did)."""
    results = results or {}
    definitions = [ToolDefinition.from_data(t) for t in tools]
    revealable = {d.name: d for d in definitions}
    return [_stub(d, list(results.get(d.name, ())), revealable) for d in definitions]


class RecordedTools(InjectionStrategy):
    """Changes the offered tools as the recording did: after the tool results of turn
    ``k``, the tools of recorded request ``k + 1`` are offered (a safety net before each
    turn catches changes that no tool result preceded).

    ``added`` (one list of names per request) are the tools the client added
    mid-conversation before that request: delivered the same way, by an addition (a
    deferred tool already declared is revealed by it). ``writes`` (one list of message
    dicts per request, Chat Completions dicts as ``message_to_dict`` writes them) are the
    messages the client wrote before that request: a new system prompt, an assistant
    message of its own, a search it ran itself.
    """

    def __init__(
        self,
        offered: Sequence[Sequence[str]],
        tools: Sequence[Mapping[str, Any]] = (),
        results: Mapping[str, Sequence[Recorded]] | None = None,
        *,
        stubs: Mapping[str, Tool] | None = None,
        added: Sequence[Sequence[str]] = (),
        writes: Sequence[Sequence[Mapping[str, Any]] | Sequence[Message]] = (),
    ) -> None:
        self.offered = [tuple(names) for names in offered]
        self.tools = dict(stubs) if stubs is not None else {}
        for tool in recorded_tools(tools, results):
            self.tools.setdefault(tool.name, tool)
        self.added = [tuple(names) for names in added]
        self.writes = [tuple(_message(m) for m in batch) for batch in writes]
        wanted = {n for names in (*self.offered, *self.added) for n in names}
        missing = sorted(wanted - set(self.tools))
        if missing:
            raise UsageError(
                f"RecordedTools: no definition for offered or added tool(s) {missing}; give "
                "each one's definition in tools=[...]"
            )

    @property
    def name(self) -> str:
        return "recorded"

    def _towards(self, context: InjectionContext, index: int) -> list[ToolsetChange]:
        if index >= len(self.offered):
            return []
        added = self.added[index] if index < len(self.added) else ()
        keep = {n for names in self.added[: index + 1] for n in names}  # added: undeclared
        wanted = self.offered[index]
        offered = context.offered
        out: list[ToolsetChange] = []
        writes = self.writes[index] if index < len(self.writes) else ()
        if writes:
            out.append(
                ToolsetChange(
                    messages=writes, reason="written by the client as recorded", strategy=self.name
                )
            )
        add = tuple(self.tools[n] for n in wanted if n not in offered and n not in added)
        remove = tuple(n for n in offered if n not in wanted and n not in keep)
        if add or remove:
            out.append(
                ToolsetChange(
                    add=add, remove=remove, reason="offered as in the recording", strategy=self.name
                )
            )
        if added:
            tools = context.tools
            out.append(
                ToolsetChange(
                    add=tuple(self.tools[n] for n in added if n not in tools),
                    reveal=tuple(n for n in added if n in tools),
                    via="addition",
                    reason="added by the client as recorded",
                    strategy=self.name,
                )
            )
        return out

    def on_tool_result(self, context: InjectionContext) -> list[ToolsetChange]:
        state = context.state_for(self)
        if state.get("applied") == context.iteration:
            return []
        state["applied"] = context.iteration
        return self._towards(context, context.iteration)

    def before_turn(self, context: InjectionContext) -> list[ToolsetChange]:
        if context.iteration == 1:
            return []
        state = context.state_for(self)
        if state.get("applied") == context.iteration - 1:
            return []  # a tool result of the last turn applied it
        state["applied"] = context.iteration - 1
        return self._towards(context, context.iteration - 1)


def _message(item: Mapping[str, Any] | Message) -> Message:
    if isinstance(item, Mapping):
        from harness.formats.openai_chat import message_from_dict

        return message_from_dict(item)
    return item


def _added_by(messages: Sequence[Message]) -> list[ToolDefinition]:
    return [t for m in messages if isinstance(m, SystemMessage) for t in m.tools]


@dataclasses.dataclass(frozen=True, kw_only=True)
class RecordedSession:
    """What it takes to replay one recorded conversation through the harness loop."""

    conversation: Conversation
    messages: tuple[Message, ...]
    """The starting history (the first request's messages)."""
    tools: tuple[Tool, ...]
    """Stub tools offered on the first request (those its history adds included: an
    addition offers them, they are not declared again)."""
    strategy: RecordedTools
    """Offers the later requests' tools as recorded, adds what the client added and
    writes what it wrote."""
    definitions: tuple[dict[str, Any], ...]
    results: Mapping[str, Sequence[Recorded]]
    added: tuple[tuple[str, ...], ...] = ()
    """Per request, the tools the client added before it (mid-conversation)."""
    writes: tuple[tuple[Message, ...], ...] = ()
    """Per request, the messages the client wrote before it."""

    @classmethod
    def of(cls, conversation: Conversation) -> RecordedSession:
        """Build the session of ``conversation``."""
        definitions: dict[str, dict[str, Any]] = {}
        searches = set(conversation.client_searches())
        gaps = [conversation.gap(k) for k in range(len(conversation.requests) - 1)]
        first = conversation.requests[0]
        found: list[ToolDefinition] = [t for r in conversation.requests for t in r.tools]
        found += _added_by(first.messages)
        found += [t for gap in gaps for t in gap.added]
        for tool in found:
            if tool.name in searches and tool.search is None:
                # a custom search: its results hold references
                tool = dataclasses.replace(tool, search="client")
            definitions.setdefault(tool.name, tool.to_data())
        results = _results_by_tool(conversation)
        stubs = {t.name: t for t in recorded_tools(list(definitions.values()), results)}
        start = list(first.tool_names)
        initial = tuple(dict.fromkeys(t.name for t in _added_by(first.messages)))
        start += [n for n in initial if n not in start]
        # request 1's own additions are in its history: listed, so they stay offered
        added = (initial, *(tuple(dict.fromkeys(t.name for t in gap.added)) for gap in gaps))
        writes = ((), *(_writes(gap) for gap in gaps))
        return cls(
            conversation=conversation,
            messages=tuple(first.messages),
            tools=tuple(stubs[n] for n in start),
            strategy=RecordedTools(
                [r.tool_names for r in conversation.requests],
                stubs=stubs,
                added=added,
                writes=writes,
            ),
            definitions=tuple(definitions.values()),
            results=results,
            added=added,
            writes=writes,
        )


def _writes(gap: Gap) -> tuple[Message, ...]:
    """What the replay writes for a gap: the client's own messages (its user messages are
    the next turn, or nudges: the scenario's turns and continuation carry those)."""
    return gap.written
