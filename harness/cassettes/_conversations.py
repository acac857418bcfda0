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

from harness._errors import UsageError
from harness.cassettes._load import Cassette, Interaction, load_cassette
from harness.cassettes._match import request_differences
from harness.cassettes._model import llm_turns
from harness.cassettes._trace import trace_from_requests
from harness.formats import ParsedRequest
from harness.loop import ModelResponse, Trace

__all__ = ["Conversation", "conversations", "conversations_of"]


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
        try:
            request = codec.parse_request(interaction.request.json() or {})
        except ValueError as exc:
            raise UsageError(
                f"cassette {cassette.name!r}: interaction {interaction.index + 1} is not a "
                f"{codec.name} request the harness reads: {exc}"
            ) from None
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
