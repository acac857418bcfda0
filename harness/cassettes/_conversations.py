"""How a cassette's LLM requests group into conversations: the one place that decides.

A cassette may hold several conversations (a sub-agent's requests interleaved with its
parent's, the same request recorded twice, one agent asking two providers). A request
continues a conversation when that conversation's last request's messages are a strict
prefix of its own; otherwise it starts a new one. ``conversations_of`` is the grouping
that ``harness cassette show`` (text and ``--json``), ``scenario_data`` and
``RecordedSession`` use (issue 23 refines it for multi-turn sessions: replace its body).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness.cassettes._load import Cassette, Interaction, load_cassette
from harness.cassettes._match import request_differences
from harness.cassettes._model import llm_turns, recorded_request
from harness.cassettes._trace import client_searches, trace_from_requests
from harness.formats import ParsedRequest
from harness.loop import ModelResponse, Trace
from harness.messages import AssistantMessage, SystemMessage, ToolMessage

__all__ = ["Conversation", "conversations", "conversations_of"]


def _turn(message: AssistantMessage) -> tuple[str, ...]:
    """What identifies a model turn in a later history: its call ids (else its text)."""
    if message.tool_calls:
        return tuple(c.id for c in message.tool_calls)
    return (message.content or "",)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Conversation:
    """The LLM turns of one conversation in a cassette."""

    interactions: tuple[Interaction, ...]
    requests: tuple[ParsedRequest, ...]
    responses: tuple[ModelResponse | None, ...]
    formats: tuple[str, ...] = ()
    """The codec name of each request (``openai-chat``, ``openai-responses``,
    ``anthropic-messages``)."""

    @property
    def numbers(self) -> tuple[int, ...]:
        """1-based interaction numbers in the file."""
        return tuple(i.index + 1 for i in self.interactions)

    def inserted_turns(self) -> tuple[int, ...]:
        """1-based numbers of the requests whose history holds an assistant turn that no
        recorded response made and whose calls' results reveal tools: a search the client
        ran itself and wrote into the history as if the model had."""
        out = []
        for k in range(1, len(self.requests)):
            before, after = self.requests[k - 1], self.requests[k]
            added = after.messages[len(before.messages) :]
            answered = self.responses[k - 1]
            made = _turn(answered.message) if answered is not None else None
            revealing = {m.tool_call_id for m in added if isinstance(m, ToolMessage) and m.tools}
            for message in added:
                if (
                    isinstance(message, AssistantMessage)
                    and _turn(message) != made
                    and any(c.id in revealing for c in message.tool_calls)
                ):
                    out.append(k + 1)
                    break
        return tuple(out)

    def client_searches(self) -> tuple[str, ...]:
        """Tools whose results revealed tools (a custom search tool: the wire marks it by
        nothing else)."""
        return client_searches(self.requests)

    def undeclared_reveals(self) -> tuple[str, ...]:
        """Tools made callable by a result or an addition that no request declares."""
        declared = {t.name for r in self.requests for t in r.tools}
        found: dict[str, None] = {}
        for request in self.requests:
            for message in request.messages:
                if isinstance(message, (ToolMessage, SystemMessage)):
                    for tool in message.tools:
                        if tool.name not in declared:
                            found.setdefault(tool.name, None)
        return tuple(found)

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


def conversations_of(source: str | Path | Cassette) -> list[Conversation]:
    """The cassette's conversations, in the order each one starts."""
    cassette = source if isinstance(source, Cassette) else load_cassette(source)
    groups: list[list[tuple[Interaction, ParsedRequest, ModelResponse | None, str]]] = []
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
                group.append((interaction, request, response, codec.name))
                break
        else:
            groups.append([(interaction, request, response, codec.name)])
    return [
        Conversation(
            interactions=tuple(g[0] for g in group),
            requests=tuple(g[1] for g in group),
            responses=tuple(g[2] for g in group),
            formats=tuple(g[3] for g in group),
        )
        for group in groups
    ]


conversations = conversations_of
"""The public name (``harness.cassettes.conversations``)."""
