"""From a recording to something runnable: conversations, stub tools, scenarios.

A cassette may hold several conversations (a sub-agent's requests interleaved
with its parent's, the same request recorded twice). ``conversations`` splits the
LLM turns by history: a request continues a conversation when that conversation's
last request's messages are a strict prefix of its own. ``RecordedSession`` gives
what is needed to replay one conversation through the loop: its starting
messages, stub tools (with the recorded schemas, answering the recorded results
in order) and a strategy that changes the offered tools as the recording did.
``scenario_data`` writes the same as an editable scenario file.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness._errors import CassetteError, UsageError
from harness.cassettes._load import Cassette, Interaction, load_cassette
from harness.cassettes._match import request_differences
from harness.cassettes._model import llm_turns, recorded_request
from harness.cassettes._trace import trace_from_requests
from harness.formats import ParsedRequest, ToolDefinition
from harness.formats.openai_chat import messages_to_dicts
from harness.loop import (
    InjectionContext,
    InjectionStrategy,
    ModelResponse,
    ToolsetChange,
    Trace,
)
from harness.messages import AssistantMessage, Message, ToolMessage
from harness.tools import CallContext, PreparedCall, Tool, ToolResult

__all__ = [
    "Conversation",
    "RecordedSession",
    "RecordedTools",
    "conversations",
    "recorded_tools",
    "scenario_data",
]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Conversation:
    """The LLM turns of one conversation in a cassette."""

    interactions: tuple[Interaction, ...]
    requests: tuple[ParsedRequest, ...]
    responses: tuple[ModelResponse | None, ...]

    @property
    def numbers(self) -> tuple[int, ...]:
        """1-based interaction numbers in the file."""
        return tuple(i.index + 1 for i in self.interactions)

    def trace(self) -> Trace:
        """The conversation's wire trace."""
        return trace_from_requests(self.requests, self.responses)


def _continues(before: ParsedRequest, after: ParsedRequest) -> bool:
    if len(after.messages) <= len(before.messages):
        return False
    head = ParsedRequest(model=None, messages=after.messages[: len(before.messages)], tools=())
    return not request_differences(
        ParsedRequest(model=None, messages=before.messages, tools=()), head
    )


def conversations(source: str | Path | Cassette) -> list[Conversation]:
    """The cassette's conversations, in the order each one starts."""
    cassette = source if isinstance(source, Cassette) else load_cassette(source)
    groups: list[list[tuple[Interaction, ParsedRequest, ModelResponse | None]]] = []
    for interaction, codec in llm_turns(cassette):
        request = recorded_request(cassette, interaction, codec)
        try:
            response: ModelResponse | None = codec.decode_response(
                interaction.status, interaction.response.headers, interaction.response.body
            )
        except Exception:  # error status or unreadable body: the turn has no answer
            response = None
        for group in reversed(groups):
            if _continues(group[-1][1], request):
                group.append((interaction, request, response))
                break
        else:
            groups.append([(interaction, request, response)])
    return [
        Conversation(
            interactions=tuple(g[0] for g in group),
            requests=tuple(g[1] for g in group),
            responses=tuple(g[2] for g in group),
        )
        for group in groups
    ]


def _results_by_tool(conversation: Conversation) -> dict[str, list[str]]:
    """Recorded tool results per tool name, in call order."""
    names: dict[str, str] = {}
    results: dict[str, list[str]] = {}
    seen: set[str] = set()
    for request in conversation.requests:
        for message in request.messages:
            if isinstance(message, AssistantMessage):
                for call in message.tool_calls:
                    names[call.id] = call.name
            elif isinstance(message, ToolMessage) and message.tool_call_id not in seen:
                seen.add(message.tool_call_id)
                name = names.get(message.tool_call_id)
                if name is not None:
                    results.setdefault(name, []).append(str(message.content))
    return results


def _never_called(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - prepare answers
    raise RuntimeError("a recorded tool's handler is never called")


@dataclasses.dataclass(frozen=True, eq=False)
class RecordedTool(Tool):
    """A stand-in for a recorded tool: offered with the recorded name, description and
    schema; each call answers the next recorded result, whatever its arguments (the
    recording already holds what the model was told, argument errors included)."""

    results: list[str] = dataclasses.field(default_factory=list, repr=False)
    """Recorded results still to give, in call order."""

    def prepare(self, arguments: str, context: CallContext) -> PreparedCall | ToolResult:
        if not self.results:
            return ToolResult(content=f"(no recorded result left for {self.name})")
        text = self.results.pop(0)
        return ToolResult(content=text, value=text)


def _stub(tool: ToolDefinition, results: Sequence[str]) -> Tool:
    parameters = dict(tool.parameters) or {"type": "object", "properties": {}}
    parameters.setdefault("type", "object")
    return RecordedTool(
        name=tool.name,
        description=tool.description or "",
        parameters=parameters,
        handler=_never_called,
        results=list(results),
    )


def recorded_tools(
    tools: Sequence[Mapping[str, Any]], results: Mapping[str, Sequence[str]] | None = None
) -> list[Tool]:
    """Stub tools from plain data (``name``, ``description``, ``parameters``), each answering
    its recorded results in order."""
    results = results or {}
    return [
        _stub(
            ToolDefinition(
                name=str(t["name"]),
                parameters=dict(t.get("parameters") or {}),
                description=str(t.get("description") or ""),
            ),
            list(results.get(str(t["name"]), ())),
        )
        for t in tools
    ]


class RecordedTools(InjectionStrategy):
    """Changes the offered tools as the recording did: after the tool results of turn
    ``k``, the tools of recorded request ``k + 1`` are offered (a safety net before each
    turn catches changes that no tool result preceded)."""

    def __init__(
        self,
        offered: Sequence[Sequence[str]],
        tools: Sequence[Mapping[str, Any]] = (),
        results: Mapping[str, Sequence[str]] | None = None,
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
    results: Mapping[str, Sequence[str]]

    @classmethod
    def of(cls, conversation: Conversation) -> RecordedSession:
        """Build the session of ``conversation``."""
        definitions: dict[str, dict[str, Any]] = {}
        for request in conversation.requests:
            for tool in request.tools:
                definitions.setdefault(
                    tool.name,
                    {
                        "name": tool.name,
                        "description": tool.description or "",
                        "parameters": dict(tool.parameters) or {"type": "object", "properties": {}},
                    },
                )
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


def _step(response: ModelResponse | None) -> dict[str, Any]:
    if response is None:
        return {"reply": ""}
    calls = response.message.tool_calls
    if not calls:
        return {"reply": response.message.content or ""}

    def one(call: Any) -> dict[str, Any]:
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError:
            return {"call": call.name, "arguments": call.arguments, "id": call.id}
        return {"call": call.name, "args": args, "id": call.id}

    if len(calls) == 1:
        return one(calls[0])
    return {"calls": [one(c) for c in calls]}


def scenario_data(
    source: str | Path | Cassette, *, name: str | None = None, conversation: int = 0
) -> dict[str, Any]:
    """An editable scenario (scripted steps and the expected timeline) from a recording.

    The recorded tools become stubs that answer the recorded results, and a
    ``RecordedTools`` strategy offers tools request by request as recorded.
    """
    cassette = source if isinstance(source, Cassette) else load_cassette(source)
    found = conversations(cassette)
    if not found:
        raise CassetteError(
            f"cassette {cassette.name!r} holds no LLM request to convert",
            path="" if cassette.path is None else str(cassette.path),
        )
    if not 0 <= conversation < len(found):
        raise UsageError(
            f"cassette {cassette.name!r} holds {len(found)} conversation(s); "
            f"conversation={conversation} does not exist"
        )
    chosen = found[conversation]
    session = RecordedSession.of(chosen)
    trace = chosen.trace()
    timeline: list[dict[str, Any]] = []
    for it in trace:
        step: dict[str, Any] = {"offered": len(it.offered)}
        if it.calls:
            step["calls"] = [c.name for c in it.calls]
        else:
            step["answer"] = True
        if it.injected:
            step["injected"] = list(it.injected)
        if it.removed:
            step["removed"] = list(it.removed)
        timeline.append(step)
    steps = [_step(r) for r in chosen.responses]
    last = chosen.responses[-1]
    note = ""
    if last is not None and last.message.tool_calls:
        # the recorded agent stopped on a tool call (an output tool): the harness loop
        # answers the call and asks once more, so the script ends with a reply
        steps.append({"reply": ""})
        timeline.append({"offered": len(chosen.requests[-1].tools), "answer": True})
        note = " The recording ends on a tool call (an output tool); a final reply was added."
    stem = Path(cassette.name).stem if cassette.path else "cassette"
    data: dict[str, Any] = {
        "name": name or stem,
        "description": (
            f"Converted from cassette {Path(cassette.name).name} (interactions "
            f"{', '.join(map(str, chosen.numbers))}): recorded tools are stubs that return "
            "the recorded results; edit freely." + note
        ),
        "messages": messages_to_dicts(session.messages),
        "tools": [
            {
                "harness.cassettes:recorded_tools": {
                    "tools": [
                        d for d in session.definitions if d["name"] in chosen.requests[0].tool_names
                    ],
                    "results": {k: list(v) for k, v in session.results.items()},
                }
            }
        ],
        "strategies": [
            {
                "harness.cassettes:RecordedTools": {
                    "offered": [list(r.tool_names) for r in chosen.requests],
                    "tools": list(session.definitions),
                    "results": {k: list(v) for k, v in session.results.items()},
                }
            }
        ],
        "model": {"steps": steps},
        "expect": {"timeline": timeline},
    }
    return data
