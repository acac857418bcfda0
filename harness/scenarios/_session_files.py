"""Scenario files with sessions: ``turns``, a continuation policy, ``tool_choice`` schedules
and several sessions in one file; checked at load, read into harness objects.

```yaml
name: seed_flow_two_turns
tools: [fixtures.customers:search_customer]
strategies: [entity_discovery]
continuation: react                  # or {until_tool: final_answer, nudge: "..."}, a list...
tool_choice: [none, required]        # or {schedule: [...], then: repeat}
turns:
  - prompt: Find John Smith.
    steps: [{call: search_customer, args: {name: John Smith}}, {reply: Found him.}]
    expect: {timeline: [{calls: [search_customer]}, {answer: true}]}
  - prompt: What's his average spend?
    steps: [{call: customer_*_get_average_spend}, {reply: "42"}]
    expect: {output: "42"}
```

A ``sessions:`` file lists such scenarios (each with a ``name``); a session with
``during: {session: agent, tool: joker, call: 1}`` runs right after that call's result in
the other session, one with ``after: {session: agent, turn: 1}`` right after that turn;
the others run in file order. The file's ``expect: {requests: [...]}`` names the session
of every model request, in order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness._errors import HarnessError, ScenarioError, ScriptError
from harness.loop import (
    Continuation,
    ContinuationContext,
    ContinueUntilTool,
    ContinueWhile,
    NudgeAfterResults,
    ReAct,
    ToolChoiceSchedule,
)
from harness.models._scripted._expect_choice import tool_choice_from_data
from harness.scenarios._spec import ScenarioSpec, TurnSpec

__all__ = [
    "check_sessions",
    "continuation_from_data",
    "has_sessions",
    "schedule_from_data",
    "session_turns",
]

_TURN_ONLY = ("output", "output_contains", "timeline", "user_outputs", "completions")


def has_sessions(spec: ScenarioSpec) -> bool:
    """True when the file uses what only the session runner knows."""
    return any(
        value is not None
        for value in (spec.turns, spec.sessions, spec.continuation, spec.tool_choice)
    )


def session_turns(spec: ScenarioSpec) -> list[TurnSpec]:
    """The user turns of a session: its ``turns``, or one turn made of ``prompt`` (or
    ``messages``), ``model.steps`` and ``expect``."""
    if spec.turns is not None:
        return list(spec.turns)
    return [
        TurnSpec(
            prompt=spec.prompt,
            messages=spec.messages,
            steps=spec.model.steps if spec.model is not None else None,
            expect=spec.expect,
        )
    ]


def continuation_from_data(value: Any, where: str) -> Continuation | list[Continuation] | None:
    """A ``continuation:`` entry as policies (an import path is resolved by the runner)."""
    if value is None:
        return None
    if isinstance(value, list):
        out: list[Continuation] = []
        for item in value:
            got = continuation_from_data(item, where)
            out.extend(got if isinstance(got, list) else [got] if got is not None else [])
        return out
    if value == "react":
        return ReAct()
    if isinstance(value, Mapping) and len(value) >= 1:
        try:
            if set(value) == {"react"}:
                options = value["react"] or {}
                return ReAct(nudge=options.get("nudge") if isinstance(options, Mapping) else None)
            if "until_tool" in value and set(value) <= {"until_tool", "nudge"}:
                return ContinueUntilTool(str(value["until_tool"]), nudge=value.get("nudge"))
            if set(value) == {"nudge_after_results"}:
                texts = value["nudge_after_results"]
                return NudgeAfterResults(texts if isinstance(texts, list) else str(texts))
            if set(value) == {"continue_after"}:
                return _continue_after(value["continue_after"], where)
        except HarnessError as exc:
            raise ScenarioError(f"{where}continuation {value!r}: {exc}") from None
    raise ScenarioError(
        f"{where}continuation {value!r} is not a policy; write react, {{react: {{nudge: TEXT}}}}, "
        "{until_tool: NAME, nudge: TEXT}, {nudge_after_results: TEXT}, "
        "{continue_after: [REQUEST, ...]}, or a list of these"
    )


def _continue_after(value: Any, where: str) -> Continuation:
    """``{continue_after: [2, 5]}``: the text answers of those requests (1-based, counted
    over the session) do not end the turn; the loop asks again with no user message (a
    client that added tools, or wrote a message of its own, before asking again)."""
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in value)
    ):
        raise ScenarioError(
            f"{where}continuation continue_after must be a non-empty list of request "
            f"numbers (1-based), got {value!r}"
        )
    requests = frozenset(value)
    return ContinueWhile(_AskedAgain(requests))


class _AskedAgain:
    """The predicate of ``continue_after`` (named, so the policy reads well in errors)."""

    def __init__(self, requests: frozenset[int]) -> None:
        self.requests = requests

    def __call__(self, context: ContinuationContext) -> bool:
        return context.iteration in self.requests

    def __repr__(self) -> str:
        return f"continue_after {sorted(self.requests)}"


def schedule_from_data(value: Any, where: str) -> ToolChoiceSchedule:
    """A ``tool_choice:`` entry as a ``ToolChoiceSchedule``: a list, ``{schedule: [...],
    then: ...}``, or ``{turns: [schedule, ...]}`` (one per user turn, the last repeating)."""
    then: Any = "last"
    entries = value
    if isinstance(value, Mapping) and set(value) == {"turns"}:  # one schedule per user turn
        turns = value["turns"]
        if not isinstance(turns, list) or not turns:
            raise ScenarioError(f"{where}tool_choice turns must be a list of schedules")
        per_turn = [schedule_from_data(t, where) for t in turns]
        return ToolChoiceSchedule(
            lambda context: per_turn[min(context.turn, len(per_turn)) - 1].tool_choice(context)
        )
    if isinstance(value, Mapping):
        if "schedule" not in value or not set(value) <= {"schedule", "then"}:
            raise ScenarioError(
                f"{where}tool_choice takes a list or {{schedule: [...], then: last|repeat|default}}"
                f", got {dict(value)!r}"
            )
        entries, then = value["schedule"], value.get("then", "last")
    if not isinstance(entries, list) or not entries:
        raise ScenarioError(
            f"{where}tool_choice must be a non-empty list of choices (auto, none, required, a "
            f"tool name or glob, {{allowed: [...], mode: ...}}), got {entries!r}"
        )
    try:
        choices = [
            tool_choice_from_data(e, f"tool_choice entry {i + 1}") if isinstance(e, Mapping) else e
            for i, e in enumerate(entries)
        ]
        return ToolChoiceSchedule(choices, then=then)
    except (HarnessError, ScriptError) as exc:
        raise ScenarioError(f"{where}{exc}") from None


def _where(spec: ScenarioSpec, where: str) -> str:
    return f"{where}: session {spec.name!r}: " if spec.name else f"{where}: "


def _refuse_single_run_keys(spec: ScenarioSpec, here: str) -> None:
    """Keys only single-run scenarios read yet: refused, not silently ignored."""
    expects = [spec.expect, *(turn.expect for turn in spec.turns or ())]
    given = ["agent"] if spec.agent else []
    if any(expect.properties for expect in expects):
        given.append("expect properties")
    if given:
        raise ScenarioError(
            f"{here}{' and '.join(given)} {'is' if len(given) == 1 else 'are'} read by "
            "single-run scenarios only, not yet with turns, sessions, continuation or "
            "tool_choice: give tools and strategies, or split the file"
        )


def _check_one(spec: ScenarioSpec, where: str) -> None:
    here = _where(spec, where)
    _refuse_single_run_keys(spec, here)
    continuation_from_data(spec.continuation, here)
    if spec.tool_choice is not None:
        schedule_from_data(spec.tool_choice, here)
    if spec.turns is None:
        if spec.model is None:
            raise ScenarioError(f"{here}give the scripted model (model: {{steps: [...]}}) or turns")
        return
    if not spec.turns:
        raise ScenarioError(f"{here}turns is empty; give at least one turn")
    if spec.prompt is not None:
        raise ScenarioError(
            f"{here}with turns, each turn has its prompt; remove the top-level prompt "
            "(messages: may give the history before the first turn)"
        )
    if spec.model is not None and spec.model.steps:
        raise ScenarioError(f"{here}with turns, give the steps under each turn, not model.steps")
    misplaced = [k for k in _TURN_ONLY if getattr(spec.expect, k) not in (None, [])]
    if misplaced:
        raise ScenarioError(f"{here}with turns, put expect {misplaced} under the turn it checks")
    for number, turn in enumerate(spec.turns, start=1):
        if not turn.steps:
            raise ScenarioError(
                f"{here}turn {number} has no steps: give the scripted model's steps for that "
                "turn (e.g. steps: [{reply: ...}])"
            )
        if (turn.prompt is None) == (turn.messages is None):
            raise ScenarioError(f"{here}turn {number}: give either prompt or messages")


def check_sessions(spec: ScenarioSpec, where: str) -> None:
    """What a scenario file's sessions, turns, continuation and schedules must satisfy;
    a ``ScenarioError`` naming the file, the session and the turn otherwise."""
    if spec.sessions is None:
        if spec.model is None and spec.turns is None:
            raise ScenarioError(
                f"{where} is invalid: model: give the scripted model (model: {{steps: [...]}}), "
                "or turns with their steps"
            )
        if spec.during is not None or spec.after is not None:
            raise ScenarioError(f"{where}: during/after place a session of a sessions: list")
        if has_sessions(spec):
            _check_one(spec, where)
        return
    _refuse_single_run_keys(spec, f"{where}: ")
    sessions: Sequence[ScenarioSpec] = spec.sessions
    if not sessions:
        raise ScenarioError(f"{where}: sessions is empty; give at least one session")
    names = [s.name for s in sessions]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ScenarioError(f"{where}: session names must differ; given twice: {twice}")
    for session in sessions:
        here = _where(session, where)
        if session.sessions is not None:
            raise ScenarioError(f"{here}sessions do not nest; place it with during/after")
        if session.during is not None and session.after is not None:
            raise ScenarioError(f"{here}give during or after, not both")
        place = session.during or session.after
        if place is not None:
            if place.session not in names or place.session == session.name:
                raise ScenarioError(
                    f"{here}placed in unknown session {place.session!r}; sessions: {names}"
                )
            if session.during is not None and not session.during.tool:
                raise ScenarioError(f"{here}during needs the tool whose result it follows")
            if session.after is not None and not session.after.turn:
                raise ScenarioError(f"{here}after needs the turn it follows")
        _check_one(session, where)
