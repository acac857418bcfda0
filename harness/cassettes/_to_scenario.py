"""A cassette as one scenario file that replays every recorded request, in order.

Each conversation of the cassette (harness/cassettes/_conversations.py) becomes a
session: its user turns (a user message after a text answer starts the next turn; a text
answer the client follows with no user message is continued, ``continue_after``), the
scripted steps of each turn (the answers as the client kept them in its history), the
tool choice of each request (a schedule, checked by ``expect_tool_choice`` steps), the
user messages a client adds after every tool result (``continuation:
{nudge_after_results: ...}``), and what else it sent between requests (``Gap``): the
tools it added mid-conversation, delivered by addition, and the messages it wrote (a new
system prompt at a handoff, an assistant message of its own, a search it ran), written
again by ``RecordedTools``; and the expected timeline of each turn. A conversation that
ran inside another one is placed there: ``during`` a tool call (an MCP sampling request
made while the tool ran) or ``after`` a turn; the file's ``expect.requests`` names the
session of every recorded request in order, so ``harness run`` checks the order too.

The recorded tools become stubs that answer the recorded results, and ``RecordedTools``
offers tools request by request as recorded; with ``tools=`` (and ``strategies=``) the
user's own tools and strategies run instead, and ``RecordedResults`` reports every result
that differs from the recorded one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness._errors import CassetteError
from harness.cassettes._conversations import Conversation, Gap, conversations_of
from harness.cassettes._convert import RecordedSession, results_by_call
from harness.cassettes._load import Cassette, load_cassette
from harness.formats.openai_chat import messages_to_dicts
from harness.loop import (
    InjectionContext,
    InjectionStrategy,
    ModelResponse,
    StrategyWarning,
    ToolsetChange,
)
from harness.messages import AssistantMessage, Message
from harness.models._capabilities import FORMAT_NAMES, format_capabilities
from harness.models._scripted._expect_choice import tool_choice_data

__all__ = ["RecordedResults", "scenario_data", "scenario_of_conversations"]

DIFFERENCES = "harness.recorded_result_differences"
"""The blackboard key where ``RecordedResults`` lists the results that differ (the scenario
runner reports them: harness/scenarios/_runner.py ``NOTES``)."""


class RecordedResults(InjectionStrategy):
    """Compares each tool result with the recorded one (by call id): a difference is a
    ``StrategyWarning`` and a line in ``state["harness.recorded_result_differences"]``,
    which ``harness run`` prints under the scenario."""

    def __init__(self, results: Mapping[str, str]) -> None:
        self.results = dict(results)

    @property
    def name(self) -> str:
        return "recorded_results"

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        call, result = context.call, context.result
        if call is None or result is None or call.id not in self.results:
            return None
        recorded = self.results[call.id]
        if " ".join(recorded.split()) == " ".join(result.content.split()):
            return None
        note = (
            f"{call.name} (call {call.id}, request {context.iteration}): recorded "
            f"{_short(recorded)}, now {_short(result.content)}"
        )
        context.state.setdefault(DIFFERENCES, []).append(note)
        warning = StrategyWarning(iteration=context.iteration, strategy=self.name, message=note)
        return ToolsetChange(events=(warning,), strategy=self.name)


def _plain(data: Any) -> Any:
    """A copy sharing no object with another part of the file (YAML writes no anchors)."""
    return json.loads(json.dumps(data))


def _short(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _call_data(call: Any) -> dict[str, Any]:
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError:
        return {"call": call.name, "arguments": call.arguments, "id": call.id}
    if not isinstance(args, dict):
        return {"call": call.name, "arguments": call.arguments, "id": call.id}
    return {"call": call.name, "args": args, "id": call.id}


def _step(message: AssistantMessage | None) -> dict[str, Any]:
    if message is None:
        return {"reply": ""}
    if not message.tool_calls:
        return {"reply": message.content or ""}
    if len(message.tool_calls) == 1:
        return _call_data(message.tool_calls[0])
    return {"calls": [_call_data(c) for c in message.tool_calls]}


def _search_steps(response: ModelResponse | None) -> list[dict[str, Any]]:
    """The provider-run searches of a recorded answer, as ``search`` steps (the scripted
    model joins each to the next step's response, as the provider did)."""
    return [
        {
            "search": json.loads(s.arguments) if s.arguments.strip() else {},
            "found": list(s.found),
            "id": s.id,
        }
        for s in (response.message.searches if response is not None else ())
        if s.tool
    ]


def _fail(cassette: Cassette, conversation: Conversation, k: int, problem: str) -> CassetteError:
    return CassetteError(
        f"cassette {cassette.name!r}: interaction {conversation.numbers[k]} cannot be "
        f"replayed by a scenario: {problem}",
        path="" if cassette.path is None else str(cassette.path),
    )


class _Turns:
    """A conversation split into user turns: which requests, what the user said."""

    def __init__(self, cassette: Cassette, conversation: Conversation) -> None:
        self.starts = [0]
        """The first request of each turn."""
        self.prompts: list[list[Message]] = [list(conversation.requests[0].messages)]
        self.nudges: list[str] = []
        self.continued: set[int] = set()
        """Requests whose text answer did not end the turn (a ReAct thought, or an answer
        after which the client asked again with no user message)."""
        self.react: set[int] = set()
        """Those answered under ``tool_choice: none`` (the ReAct policy takes them)."""
        self.react_nudge: str | None = None
        self.writes: dict[int, list[Message]] = {}
        """Messages to write before request ``k`` beyond the recording's own writes (user
        messages after some tool results but not after others)."""
        requests = conversation.requests
        after_calls: list[tuple[int, Gap]] = []
        for k in range(1, len(requests)):
            before = requests[k - 1]
            gap = conversation.gap(k - 1)
            kept = gap.kept
            if kept is None:
                raise _fail(
                    cassette,
                    conversation,
                    k,
                    "the client sent no answer of the model back between two requests (the "
                    "loop always keeps the model's answer in the history); the nearest a "
                    "scenario expresses is a new conversation: convert it with "
                    "--conversation, or record the two requests in separate cassettes",
                )
            if kept.tool_calls:
                after_calls.append((k, gap))
                continue
            choice = before.tool_choice
            if choice is not None and choice.mode == "none":  # a ReAct thought
                self.continued.add(k - 1)
                self.react.add(k - 1)
                nudge = " ".join(str(u.content) for u in gap.users) or None
                self.react_nudge = self.react_nudge or nudge
                continue
            if not gap.users:  # the client asked again (after adding tools, say)
                self.continued.add(k - 1)
                continue
            self.starts.append(k)
            self.prompts.append(list(gap.users))
        if all(gap.users for _, gap in after_calls):
            self.nudges = [" ".join(str(u.content) for u in gap.users) for _, gap in after_calls]
        else:  # not after every result: written as the client wrote them
            for k, gap in after_calls:
                if gap.users:
                    self.writes[k] = list(gap.users)

    def turn_of(self, k: int) -> int:
        """The 1-based turn of request ``k``."""
        return sum(1 for start in self.starts if start <= k)

    def requests_of(self, turn: int, total: int) -> range:
        end = self.starts[turn] if turn < len(self.starts) else total
        return range(self.starts[turn - 1], end)


def _timeline(conversation: Conversation, turns: _Turns, turn: int) -> list[dict[str, Any]]:
    trace = conversation.trace()
    rows = []
    for k in turns.requests_of(turn, len(conversation.requests)):
        it = trace.iterations[k]
        row: dict[str, Any] = {"offered": len(it.offered)}
        kept = conversation.kept_answer(k)  # the calls the client kept (and answered)
        if kept is not None and kept.tool_calls:
            row["calls"] = [c.name for c in kept.tool_calls]
        elif k in turns.continued:
            row["continued"] = True
        else:
            row["answer"] = True
        # a change after tool results is the replay's after that iteration's results; one
        # after a text answer, before the next request (the next iteration's)
        changes = [c for c in it.changes if _after_results(conversation, k)]
        if k > 0 and not _after_results(conversation, k - 1):
            changes += trace.iterations[k - 1].changes
        injected = [n for c in changes for n in c.added]
        added = [n for c in changes if c.via == "addition" for n in c.added]
        removed = [n for c in changes for n in c.removed]
        if injected:
            row["injected"] = injected
        if added:
            row["added"] = added
        if removed:
            row["removed"] = removed
        rows.append(row)
    return rows


def _after_results(conversation: Conversation, k: int) -> bool:
    """The replay makes the changes between request ``k`` and the next after tool results
    (else before the next request)."""
    kept = conversation.kept_answer(k)
    return kept is not None and bool(kept.tool_calls)


def _session(
    cassette: Cassette,
    conversation: Conversation,
    name: str,
    *,
    tools: str | None,
    strategies: Sequence[str],
) -> tuple[dict[str, Any], str]:
    """One conversation as a session (a scenario of its own) and a note for the file."""
    turns = _Turns(cassette, conversation)
    count = len(conversation.requests)
    steps = [
        [*_search_steps(conversation.responses[k]), _step(conversation.kept_answer(k))]
        for k in range(count)
    ]
    choices = [r.tool_choice for r in conversation.requests]
    scheduled = any(c is not None for c in choices)
    note = ""
    last = conversation.responses[-1]
    extra = last is not None and bool(last.message.tool_calls)
    if extra:  # the recording stops on a tool call (an output tool): the loop asks again
        note = " The recording ends on a tool call (an output tool); a final reply was added."
    session: dict[str, Any] = {
        "name": name,
        **_session_tools(conversation, turns, tools, strategies),
    }
    continuation = _continuation(turns)
    if continuation:
        session["continuation"] = continuation if len(continuation) > 1 else continuation[0]
    per_turn: list[list[Any]] = []
    turn_data = []
    for number in range(1, len(turns.starts) + 1):
        span = list(turns.requests_of(number, count))
        turn_steps: list[dict[str, Any]] = []
        for k in span:
            if scheduled:
                turn_steps.append({"expect_tool_choice": tool_choice_data(choices[k])})
            turn_steps.extend(steps[k])
        per_turn.append([tool_choice_data(choices[k]) for k in span])
        timeline = _timeline(conversation, turns, number)
        if extra and number == len(turns.starts):
            turn_steps.append({"reply": ""})
            timeline.append({"answer": True})
        turn_data.append(
            {
                "messages": messages_to_dicts(turns.prompts[number - 1]),
                "steps": turn_steps,
                "expect": {"timeline": timeline},
            }
        )
    if scheduled:
        session["tool_choice"] = (
            {"schedule": per_turn[0], "then": "default"}
            if len(per_turn) == 1
            else {"turns": [{"schedule": s, "then": "default"} for s in per_turn]}
        )
    stands_for = _provider_of_additions(conversation)
    played = {"capabilities": stands_for} if stands_for else {}
    if len(turn_data) == 1 and not scheduled and not continuation:
        only = turn_data[0]
        session.update(messages=only["messages"], model={"steps": only["steps"], **played})
        session["expect"] = only["expect"]
    else:
        if played:
            session["model"] = {"steps": [], **played}
        session["turns"] = turn_data
    return session, note


def _session_tools(
    conversation: Conversation, turns: _Turns, tools: str | None, strategies: Sequence[str]
) -> dict[str, Any]:
    """A session's ``tools`` and ``strategies``: the recorded tools replayed, or the user's
    tools with the recorded results."""
    if tools is not None:
        return {
            "tools": [tools],
            "strategies": [
                *strategies,
                {"harness.cassettes:RecordedResults": {"results": results_by_call(conversation)}},
            ],
        }
    count = len(conversation.requests)
    recorded = RecordedSession.of(conversation)
    first = {t.name for t in recorded.tools}
    results = {k: list(v) for k, v in recorded.results.items()}
    writes = [
        messages_to_dicts([*turns.writes.get(k, ()), *recorded.writes[k]]) for k in range(count)
    ]
    replay: dict[str, Any] = {
        "offered": [list(r.tool_names) for r in conversation.requests],
        "tools": list(recorded.definitions),
        "results": results,
    }
    if any(recorded.added):
        replay["added"] = [list(names) for names in recorded.added]
    if any(writes):
        replay["writes"] = writes
    offered_first = [d for d in recorded.definitions if d["name"] in first]
    return {
        "tools": [
            {
                "harness.cassettes:recorded_tools": _plain(
                    {"tools": offered_first, "results": results}
                )
            }
        ],
        "strategies": [{"harness.cassettes:RecordedTools": _plain(replay)}],
    }


def _continuation(turns: _Turns) -> list[Any]:
    """How the recorded client went on without a user message (ReAct nudges, asking again)."""
    continuation: list[Any] = []
    if turns.react:
        continuation.append(
            {"react": {"nudge": turns.react_nudge}} if turns.react_nudge else "react"
        )
    asked_again = sorted(turns.continued - turns.react)
    if asked_again:  # answers after which the client asked again with no user message
        continuation.append({"continue_after": [k + 1 for k in asked_again]})
    if turns.nudges:
        texts = turns.nudges
        continuation.append({"nudge_after_results": texts[0] if len(set(texts)) == 1 else texts})
    return continuation


def _provider_of_additions(conversation: Conversation) -> str | None:
    """The recorded format whose client added tools mid-conversation, when one did: the
    scripted model stands for it, so the replay delivers those tools by addition too."""
    trace = conversation.trace()
    if not any(c.via == "addition" for it in trace for c in it.changes):
        return None
    return next(
        (
            f
            for f in conversation.formats
            if f in FORMAT_NAMES and format_capabilities(f).tool_additions
        ),
        None,
    )


def _placement(
    found: Sequence[Conversation], names: Sequence[str], index: int, turns: Sequence[_Turns]
) -> dict[str, Any] | None:
    """Where conversation ``index`` ran inside another one (``None``: on its own)."""
    start = found[index].interactions[0].index
    best: tuple[int, int, int] | None = None  # (host's interaction before, host, request k)
    for h, host in enumerate(found):
        if h == index:
            continue
        positions = [i.index for i in host.interactions]
        for k in range(len(positions) - 1):
            if positions[k] < start < positions[k + 1] and (best is None or positions[k] > best[0]):
                best = (positions[k], h, k)
    if best is None:
        return None
    _, h, k = best
    host = found[h]
    if found[index].interactions[-1].index > host.interactions[k + 1].index:
        raise CassetteError(
            f"conversations interleave request by request (interactions "
            f"{', '.join(map(str, found[index].numbers))} and "
            f"{', '.join(map(str, host.numbers))}): a scenario replays a conversation that "
            "runs inside another's tool call or between its turns, not two at once"
        )
    kept = host.kept_answer(k)
    if kept is not None and kept.tool_calls:
        tool = kept.tool_calls[-1].name
        calls = sum(
            1
            for j in range(k + 1)
            for c in (host.kept_answer(j) or AssistantMessage()).tool_calls
            if c.name == tool
        )
        return {"during": {"session": names[h], "tool": tool, "call": calls}}
    return {"after": {"session": names[h], "turn": turns[h].turn_of(k)}}


def scenario_data(
    source: str | Path | Cassette,
    *,
    name: str | None = None,
    conversation: int | None = None,
    tools: str | None = None,
    strategies: Sequence[str] = (),
) -> dict[str, Any]:
    """One scenario file replaying every conversation of a recording, every recorded
    request in order (``conversation``: only that one, 0-based).

    The recorded tools become stubs answering the recorded results; ``tools``
    (``"module:factory()"``) and ``strategies`` bind the user's own instead, and every
    result that differs from the recorded one is reported.
    """
    cassette = source if isinstance(source, Cassette) else load_cassette(source)
    return scenario_of_conversations(
        cassette,
        conversations_of(cassette),
        name=name,
        conversation=conversation,
        tools=tools,
        strategies=strategies,
    )


def scenario_of_conversations(
    cassette: Cassette,
    found: list[Conversation],
    *,
    name: str | None = None,
    conversation: int | None = None,
    tools: str | None = None,
    strategies: Sequence[str] = (),
    origin: str = "cassette",
) -> dict[str, Any]:
    """``scenario_data`` of conversations already found (an OpenTelemetry trace's, read
    into the same ``Conversation`` records); ``origin`` names the source in the file's
    description and errors."""
    path = "" if cassette.path is None else str(cassette.path)
    if not found:
        raise CassetteError(
            f"{origin} {cassette.name!r} holds no LLM request to convert", path=path
        )
    if conversation is not None:
        if not 0 <= conversation < len(found):
            raise CassetteError(
                f"{origin} {cassette.name!r} holds {len(found)} conversation(s); "
                f"conversation {conversation + 1} does not exist",
                path=path,
            )
        found = [found[conversation]]
    stem = Path(cassette.name).stem if cassette.path else origin.split()[-1]
    title = name or stem
    names = [title] if len(found) == 1 else [f"conversation_{n}" for n in range(1, len(found) + 1)]
    sessions, notes = [], []
    for conv, session_name in zip(found, names, strict=True):
        session, note = _session(cassette, conv, session_name, tools=tools, strategies=strategies)
        sessions.append(session)
        notes.append(note)
    kind = (
        "your tools and strategies, results compared with the recorded ones"
        if tools
        else ("recorded tools are stubs that return the recorded results")
    )
    numbers = ", ".join(str(n) for n in sorted(n for c in found for n in c.numbers))
    description = (
        f"Converted from {origin} {Path(cassette.name).name} (interactions {numbers}; "
        f"{len(found)} conversation(s)): {kind}; every recorded request is replayed in "
        "order. Edit freely." + "".join(dict.fromkeys(notes))
    )
    if len(found) == 1:
        return {"name": title, "description": description, **_plain(sessions[0])}
    turns = [_Turns(cassette, c) for c in found]
    for index, session in enumerate(sessions):
        place = _placement(found, names, index, turns)
        if place is not None:
            session.update(place)
    order = sorted((i.index, names[n]) for n, conv in enumerate(found) for i in conv.interactions)
    return {
        "name": title,
        "description": description,
        "expect": {"requests": [session for _, session in order]},
        "sessions": _plain(sessions),
    }
