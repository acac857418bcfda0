"""From a recording to something runnable: stub tools and the recorded toolset changes.

``RecordedSession`` gives what is needed to replay one conversation
(harness/cassettes/_conversations.py) through the loop: its starting messages, stub
tools (with the recorded schemas, answering the recorded results in order) and a
strategy that changes the offered tools as the recording did. ``scenario_data``
(harness/cassettes/_to_scenario.py) writes the same as an editable scenario file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from harness._errors import UsageError
from harness.cassettes._conversations import Conversation
from harness.loop import InjectionContext, InjectionStrategy, ToolsetChange
from harness.messages import AssistantMessage, Message, ToolMessage
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
    # results already in the starting history answer no call of the replay
    seen: set[str] = {m.tool_call_id for m in first if isinstance(m, ToolMessage)}
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
    turn catches changes that no tool result preceded)."""

    def __init__(
        self,
        offered: Sequence[Sequence[str]],
        tools: Sequence[Mapping[str, Any]] = (),
        results: Mapping[str, Sequence[Recorded]] | None = None,
        *,
        stubs: Mapping[str, Tool] | None = None,
    ) -> None:
        self.offered = [tuple(names) for names in offered]
        self.tools = dict(stubs) if stubs is not None else {}
        for tool in recorded_tools(tools, results):
            self.tools.setdefault(tool.name, tool)
        missing = sorted({n for names in self.offered for n in names} - set(self.tools))
        if missing:
            raise UsageError(f"RecordedTools: no definition for offered tool(s) {missing}")

    @property
    def name(self) -> str:
        return "recorded"

    def _towards(self, context: InjectionContext, index: int) -> ToolsetChange | None:
        if index >= len(self.offered):
            return None
        wanted = self.offered[index]
        add = tuple(self.tools[n] for n in wanted if n not in context.offered)
        remove = tuple(n for n in context.offered if n not in wanted)
        if not add and not remove:
            return None
        return ToolsetChange(
            add=add, remove=remove, reason="offered as in the recording", strategy=self.name
        )

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        state = context.state_for(self)
        if state.get("applied") == context.iteration:
            return None
        state["applied"] = context.iteration
        return self._towards(context, context.iteration)

    def before_turn(self, context: InjectionContext) -> ToolsetChange | None:
        if context.iteration == 1:
            return None
        return self._towards(context, context.iteration - 1)


@dataclasses.dataclass(frozen=True, kw_only=True)
class RecordedSession:
    """What it takes to replay one recorded conversation through the harness loop."""

    conversation: Conversation
    messages: tuple[Message, ...]
    """The starting history (the first request's messages)."""
    tools: tuple[Tool, ...]
    """Stub tools offered on the first request."""
    strategy: RecordedTools
    """Offers the later requests' tools as recorded."""
    definitions: tuple[dict[str, Any], ...]
    results: Mapping[str, Sequence[Recorded]]

    @classmethod
    def of(cls, conversation: Conversation) -> RecordedSession:
        """Build the session of ``conversation``."""
        inserted = conversation.inserted_turns()
        if inserted:
            raise UsageError(
                f"the recorded client inserted assistant turns the model did not make "
                f"(request(s) {', '.join(map(str, inserted))}: a synthetic tool call in the "
                "history, e.g. a search the client ran to reveal tools); the harness loop "
                "only sends what the model said, so this conversation cannot be replayed "
                "through it (show and the SDK replay still read it)"
            )
        undeclared = conversation.undeclared_reveals()
        if undeclared:
            raise UsageError(
                f"the recorded client made tools callable that no request declares "
                f"({', '.join(undeclared)}: an OpenAI additional_tools item, say); the "
                "harness loop offers only declared tools (deferred ones included), so this "
                "conversation cannot be replayed through it (show and the SDK replay still "
                "read it)"
            )
        definitions: dict[str, dict[str, Any]] = {}
        searches = set(conversation.client_searches())
        for request in conversation.requests:
            for tool in request.tools:
                if tool.name in searches and tool.search is None:
                    # a custom search: its results hold references
                    tool = dataclasses.replace(tool, search="client")
                definitions.setdefault(tool.name, tool.to_data())
        results = _results_by_tool(conversation)
        first = conversation.requests[0]
        stubs = {t.name: t for t in recorded_tools(list(definitions.values()), results)}
        return cls(
            conversation=conversation,
            messages=tuple(first.messages),
            tools=tuple(stubs[n] for n in first.tool_names),
            strategy=RecordedTools([r.tool_names for r in conversation.requests], stubs=stubs),
            definitions=tuple(definitions.values()),
            results=results,
        )
