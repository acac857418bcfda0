"""How a cassette's LLM requests group into conversations: the one place that decides.

A cassette may hold several conversations, sometimes interleaved: a sub-agent's requests
inside its parent's, an MCP sampling request made while a tool runs, the same request
recorded twice. Requests are grouped by history, not by order: a request continues a
conversation when that conversation's last request's messages are a strict prefix of
its own, system prompts aside (a handoff keeps the history and changes the instructions
and tools: one conversation with a system-prompt change). When several conversations
qualify, the evidence decides, strongest first:

1. the message that follows the prefix is that conversation's last answer (the same
   call ids, a subset of them when the client kept only some calls, or the same text):
   an MCP sampling request repeats its parent's history but not its parent's answer;
2. the same system prompt;
3. the longest prefix (the most specific history).

Between two requests of a conversation the client sends back the model's answer, the
tool results, and may write more (``Conversation.gap``): user messages, tools it adds
mid-conversation, a new system prompt, messages of its own (an assistant message, a
search it ran itself).

Two conversations that qualify alike cannot be told apart: a ``CassetteError`` names the
request and the interactions of both (record them in separate cassettes, or make their
histories differ). ``conversations_of`` is what ``harness cassette show`` (text and
``--json``), ``scenario_data``, ``RecordedSession`` and the tests use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from harness._errors import CassetteError
from harness.cassettes._load import Cassette, Interaction, load_cassette
from harness.cassettes._match import request_differences
from harness.cassettes._model import llm_turns, recorded_request
from harness.cassettes._trace import client_searches, trace_from_requests
from harness.formats import ParsedRequest
from harness.loop import ModelResponse, Trace
from harness.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from harness.tools._definitions import ToolDefinition

__all__ = ["Conversation", "Gap", "conversations_of", "kept_answer"]


def _turn(message: AssistantMessage) -> tuple[str, ...]:
    """What identifies a model turn in a later history: its call ids (else its text)."""
    if message.tool_calls:
        return tuple(c.id for c in message.tool_calls)
    return (message.content or "",)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Gap:
    """What the client sent between two requests of a conversation, after the history
    they share."""

    kept: AssistantMessage | None
    """The model's answer as the client kept it (``None``: it kept none)."""
    results: tuple[ToolMessage, ...] = ()
    """The results of the kept calls, right after them."""
    users: tuple[UserMessage, ...] = ()
    """User messages before anything the client wrote (after results: nudges; after a text
    answer: the next user turn)."""
    added: tuple[ToolDefinition, ...] = ()
    """Tools the client added mid-conversation (``SystemMessage.tools``)."""
    written: tuple[Message, ...] = ()
    """Everything else the client wrote, in order: a new system prompt first, then an
    assistant message of its own, a search it ran itself and its result, more user
    messages after those."""


def _system_texts(messages: Sequence[Message]) -> list[str]:
    return [m.content for m in messages if type(m) is SystemMessage and not m.tools]


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

    def gap(self, k: int) -> Gap:
        """What the client sent between request ``k`` and request ``k + 1`` (0-based)."""
        before, after = self.requests[k], self.requests[k + 1]
        kept, rest = kept_answer(after.messages[len(before.messages) :])
        ids = {c.id for c in kept.tool_calls} if kept is not None else set()
        count = 0
        while count < len(rest) and isinstance(rest[count], ToolMessage):
            if rest[count].tool_call_id not in ids:  # type: ignore[union-attr]
                break
            count += 1
        results = tuple(m for m in rest[:count] if isinstance(m, ToolMessage))
        users: list[UserMessage] = []
        added: list[ToolDefinition] = []
        written: list[Message] = []
        system = _system_texts(after.messages[: len(before.messages)])
        if system != _system_texts(before.messages):  # a handoff's new instructions
            written.append(SystemMessage(content="\n\n".join(system)))
        own = len(written)  # users count as users until the client writes something else
        for message in rest[count:]:
            if type(message) is SystemMessage and message.tools and not message.content:
                added.extend(message.tools)
            elif isinstance(message, UserMessage) and len(written) == own:
                users.append(message)
            else:
                written.append(message)
        return Gap(
            kept=kept,
            results=results,
            users=tuple(users),
            added=tuple(added),
            written=tuple(written),
        )

    def inserted_turns(self) -> tuple[int, ...]:
        """1-based numbers of the requests whose history holds an assistant turn that no
        recorded response made: a search the client ran itself, an assistant message it
        wrote (the replay writes them too: ``Gap.written``)."""
        return tuple(
            k + 2
            for k in range(len(self.requests) - 1)
            if any(isinstance(m, AssistantMessage) for m in self.gap(k).written)
        )

    def client_searches(self) -> tuple[str, ...]:
        """Tools whose results revealed tools (a custom search tool: the wire marks it by
        nothing else)."""
        return client_searches(self.requests)

    def undeclared_reveals(self) -> tuple[str, ...]:
        """Tools made callable by a result or an addition that no request declares (the
        client's own: the replay adds them the same way)."""
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

    def kept_answer(self, k: int) -> AssistantMessage | None:
        """The assistant message of request ``k``'s answer as the next request's history
        kept it (a client may keep fewer calls than the model made), else the recorded
        response's; ``None`` when there is neither."""
        if k + 1 < len(self.requests):
            added = self.requests[k + 1].messages[len(self.requests[k].messages) :]
            kept = kept_answer(added)[0]
            if kept is not None:
                return kept
        response = self.responses[k]
        return response.message if response is not None else None


def kept_answer(added: Sequence[Message]) -> tuple[AssistantMessage | None, list[Message]]:
    """The answer a client kept among the messages it ``added`` after a request (the
    leading assistant messages: the one with tool calls, else the last; some clients write
    an empty one before it), and the messages after them."""
    leading: list[AssistantMessage] = []
    for message in added:
        if not isinstance(message, AssistantMessage):
            break
        leading.append(message)
    if not leading:
        return None, list(added)
    with_calls = [m for m in leading if m.tool_calls]
    return (with_calls[-1] if with_calls else leading[-1]), list(added[len(leading) :])


def _same(before: Sequence[Message], head: Sequence[Message]) -> bool:
    return not request_differences(
        ParsedRequest(model=None, messages=tuple(before), tools=()),
        ParsedRequest(model=None, messages=tuple(head), tools=()),
    )


def _plain_system(message: Message) -> bool:
    return type(message) is SystemMessage and not message.tools


def _prefix(before: ParsedRequest, after: ParsedRequest) -> int:
    """2: ``before``'s messages are a strict prefix of ``after``'s; 1: they are, system
    prompts aside (a handoff: new instructions); 0: they are not."""
    if len(after.messages) <= len(before.messages):
        return 0
    head = after.messages[: len(before.messages)]
    if _same(before.messages, head):
        return 2
    if any(map(_plain_system, head)) and _same(
        [m for m in before.messages if not _plain_system(m)],
        [m for m in head if not _plain_system(m)],
    ):
        return 1
    return 0


def answered_by(response: ModelResponse | None, message: Message) -> bool:
    """True when ``message`` (in a later history) is ``response``'s answer: the same call
    ids (or a subset: the client kept only some calls), else the same text."""
    if response is None or not isinstance(message, AssistantMessage):
        return False
    made = response.message
    if made.tool_calls or message.tool_calls:
        ids = {c.id for c in made.tool_calls}
        kept = [c.id for c in message.tool_calls]
        return bool(kept) and set(kept) <= ids
    return (made.content or "").strip() == (message.content or "").strip()


_Group = list[tuple[Interaction, ParsedRequest, ModelResponse | None, str]]


def _evidence(group: _Group, request: ParsedRequest) -> tuple[int, int, int] | None:
    """How strongly ``request`` continues ``group`` (``None``: it does not)."""
    last, response = group[-1][1], group[-1][2]
    prefix = _prefix(last, request)
    if not prefix:
        return None
    follows = request.messages[len(last.messages)]
    return (1 if answered_by(response, follows) else 0, prefix, len(last.messages))


def _numbers(group: _Group) -> str:
    return ", ".join(str(g[0].index + 1) for g in group)


def conversations_of(source: str | Path | Cassette) -> list[Conversation]:
    """The cassette's conversations, in the order each one starts (see the module)."""
    cassette = source if isinstance(source, Cassette) else load_cassette(source)
    groups: list[_Group] = []
    for interaction, codec in llm_turns(cassette):
        request = recorded_request(cassette, interaction, codec)
        try:
            response: ModelResponse | None = codec.decode_response(
                interaction.status, interaction.response.headers, interaction.response.body
            )
        except Exception:  # error status or unreadable body: the turn has no answer
            response = None
        scored = [(e, g) for g in groups if (e := _evidence(g, request)) is not None]
        entry = (interaction, request, response, codec.name)
        if not scored:
            groups.append([entry])
            continue
        best = max(e for e, _ in scored)
        chosen = [g for e, g in scored if e == best]
        if len(chosen) > 1:
            shown = "; ".join(f"interactions {_numbers(g)}" for g in chosen)
            raise CassetteError(
                f"cassette {cassette.name!r}: the conversations cannot be told apart: "
                f"interaction {interaction.index + 1} continues {len(chosen)} conversations "
                f"alike ({shown}): the same history and the same answer. Record them in "
                "separate cassettes, or make their histories differ",
                path="" if cassette.path is None else str(cassette.path),
                index=interaction.index,
            )
        chosen[0].append(entry)
    return [
        Conversation(
            interactions=tuple(g[0] for g in group),
            requests=tuple(g[1] for g in group),
            responses=tuple(g[2] for g in group),
            formats=tuple(g[3] for g in group),
        )
        for group in groups
    ]
