"""Running scenario files with sessions: each session's turns through a ``Session``, the
sessions in their places, every model request logged in order, each turn judged.

``run_sessions`` is what ``run_scenario`` calls for a file with ``turns``, ``sessions``,
``continuation`` or ``tool_choice`` (harness/scenarios/_session_files.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from harness._errors import HarnessError, ScenarioError
from harness.formats.openai_chat import messages_from_dicts
from harness.loop import (
    InjectionContext,
    InjectionStrategy,
    Model,
    ModelRequest,
    ModelResponse,
    RunResult,
    Session,
    Trace,
)
from harness.messages import Message
from harness.models import ScriptedModel, steps_from_data
from harness.scenarios._loader import Scenario, call_factory, resolve_import, standing_for
from harness.scenarios._runner import (
    NOTES,
    ScenarioOutcome,
    _check_output,
    _error_name_matches,
)
from harness.scenarios._session_files import (
    continuation_from_data,
    schedule_from_data,
    session_turns,
)
from harness.scenarios._spec import ScenarioSpec, TurnSpec
from harness.scenarios._timeline import Divergence, TimelineRow, check_timeline, timeline_rows

__all__ = ["NOTES", "SessionOutcome", "run_sessions"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class SessionOutcome:
    """The verdict on one session of a scenario file."""

    name: str
    passed: bool
    problem: str | None
    """Why it failed (the first problem), ``None`` when it passed."""
    turns: int
    """User turns sent."""
    model_requests: int
    """Requests its model answered (or was asked for)."""
    trace: Trace | None
    rows: list[TimelineRow]
    divergence: Divergence | None = None
    notes: tuple[str, ...] = ()
    """What the run reports besides its verdict (tool results that differ from a
    recording's: ``harness.cassettes.RecordedResults``)."""


class _Logged(Model):
    """A session's model, logging the session's name for every request it is asked."""

    def __init__(self, inner: Model, name: str, log: list[str]) -> None:
        self.inner = inner
        self.name = inner.name
        self.capabilities = inner.capabilities
        self._session = name
        self._log = log
        self.requests = 0

    def request(self, request: ModelRequest) -> ModelResponse:
        self._log.append(self._session)
        self.requests += 1
        return self.inner.request(request)

    async def arequest(self, request: ModelRequest) -> ModelResponse:
        self._log.append(self._session)
        self.requests += 1
        return await self.inner.arequest(request)

    def end_run(self, *, completed: bool) -> None:
        self.inner.end_run(completed=completed)


class _During(InjectionStrategy):
    """Runs other sessions right after a call's result (before the next request)."""

    def __init__(self, tool: str, call: int, start: Callable[[], None]) -> None:
        self.tool, self.call, self.start = tool, call, start

    @property
    def name(self) -> str:
        return "during"

    def on_tool_result(self, context: InjectionContext) -> None:
        if context.call is None or context.call.name != self.tool:
            return None
        state = context.state_for(self)
        state["calls"] = state.get("calls", 0) + 1
        if state["calls"] == self.call:
            self.start()
        return None


def _prompt(turn: TurnSpec) -> str | list[Message]:
    if turn.messages is not None:
        return messages_from_dicts(turn.messages)
    return turn.prompt or ""


class _Run:
    """One file's run: its sessions, the request log, the outcomes."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        spec = scenario.spec
        self.sessions: list[ScenarioSpec] = list(spec.sessions) if spec.sessions else [spec]
        self.log: list[str] = []
        self.outcomes: dict[str, SessionOutcome] = {}

    def _placed(self, kind: str, host: str) -> list[ScenarioSpec]:
        return [
            s
            for s in self.sessions
            if getattr(s, kind) is not None and getattr(s, kind).session == host
        ]

    def run(self) -> None:
        for spec in self.sessions:
            if spec.during is None and spec.after is None:
                self.session(spec)
        for spec in self.sessions:  # a session whose place never came
            if spec.name not in self.outcomes:
                place = spec.during or spec.after
                shown = place.model_dump(exclude_none=True) if place is not None else {}
                self.outcomes[spec.name] = SessionOutcome(
                    name=spec.name,
                    passed=False,
                    problem=f"never ran: its place {shown} never came",
                    turns=0,
                    model_requests=0,
                    trace=None,
                    rows=[],
                )

    def _strategies(self, spec: ScenarioSpec, part: Scenario) -> list[InjectionStrategy]:
        strategies = part.build_strategies()
        if spec.tool_choice is not None:
            strategies.append(schedule_from_data(spec.tool_choice, part._where()))
        for nested in self._placed("during", spec.name):
            place = nested.during
            assert place is not None and place.tool is not None
            strategies.append(_During(place.tool, place.call, self._starter(nested)))
        return strategies

    def _starter(self, spec: ScenarioSpec) -> Callable[[], None]:
        return lambda: self.session(spec)

    def _continuation(self, spec: ScenarioSpec, part: Scenario) -> Any:
        value = spec.continuation
        if isinstance(value, str) and ":" in value:  # an import path: a policy or a factory
            found = resolve_import(value, where=part._where(), root=part.root)
            return call_factory(found) if callable(found) and isinstance(found, type) else found
        return continuation_from_data(value, part._where())

    def session(self, spec: ScenarioSpec) -> None:
        """Run one session's turns (and the sessions placed in it), judge each turn."""
        part = Scenario(spec=spec, path=self.scenario.path)
        turns = session_turns(spec)
        lenient = spec.model.lenient if spec.model is not None else False
        ends: list[int] = []
        steps: list[Any] = []
        try:
            for turn in turns:
                steps.extend(steps_from_data(turn.steps or []))
                ends.append(len(steps))
        except HarnessError as exc:
            raise ScenarioError(f"{part._where()}model steps: {exc}") from None
        script = ScriptedModel(steps, lenient=lenient, name=f"scripted:{spec.name}")
        played = standing_for(script, spec.model.capabilities if spec.model is not None else None)
        model = _Logged(played, spec.name, self.log)
        options = dataclasses.replace(
            part.build_options(), continuation=self._continuation(spec, part)
        )
        start = messages_from_dicts(spec.messages) if spec.turns and spec.messages else []
        session = Session(
            model,
            tools=part.build_tools(),
            strategies=self._strategies(spec, part),
            system=spec.system if not start and spec.messages is None else None,
            messages=start,
            options=options,
        )
        problem, divergence, sent = None, None, 0
        for number, turn in enumerate(turns, start=1):
            sent = number
            result, error = None, None
            try:
                result = session.send(_prompt(turn))
            except HarnessError as exc:
                error = exc
            problem, divergence = self._judge(turn, number, session, result, error)
            if problem is None:
                problem = self._steps_used(script, number, ends)
            if problem is None:
                for nested in self._placed("after", spec.name):
                    if nested.after is not None and nested.after.turn == number:
                        self.session(nested)
            if problem is not None or error is not None:
                if problem is None and number < len(turns):
                    problem = f"turn {number} failed as expected; turns after it were not sent"
                break
        if problem is None:
            try:
                session.close()
            except HarnessError as exc:
                problem = str(exc)
        self.outcomes[spec.name] = SessionOutcome(
            name=spec.name,
            passed=problem is None,
            problem=problem,
            turns=sent,
            model_requests=model.requests,
            trace=session.trace,
            rows=[
                dataclasses.replace(row, session=spec.name if self.scenario.spec.sessions else None)
                for row in timeline_rows(session.trace)
            ],
            divergence=divergence,
            notes=tuple(str(n) for n in session.state.get(NOTES, ())),
        )

    @staticmethod
    def _steps_used(script: ScriptedModel, number: int, ends: Sequence[int]) -> str | None:
        end = ends[number - 1]
        if script.position == end:
            return None
        begin = ends[number - 2] if number > 1 else 0
        if script.position < end:
            return (
                f"turn {number} ended after {script.position - begin} of its {end - begin} "
                "steps: the model answered before the turn's script expected (or remove the "
                "extra steps)"
            )
        return (
            f"turn {number} used {script.position - end} step(s) of the next turn: it made "
            "more requests than its own steps"
        )

    @staticmethod
    def _judge(
        turn: TurnSpec,
        number: int,
        session: Session,
        result: RunResult | None,
        error: BaseException | None,
    ) -> tuple[str | None, Divergence | None]:
        expect = turn.expect
        where = f"turn {number}: "
        if error is not None and (
            expect.error is None or not _error_name_matches(error, expect.error)
        ):
            return f"{where}unexpected error {type(error).__name__}: {error}", None
        if error is None and expect.error is not None:
            return f"{where}expected error {expect.error}, but the turn finished", None
        if expect.timeline is not None:
            rows = timeline_rows(session.trace.turn(number))
            divergence = check_timeline(expect.timeline, rows)
            if divergence is not None:
                return f"{where}first divergence at {divergence}", divergence
        if result is not None:
            problem = _check_output(expect.output, expect.output_contains, result.output)
            if problem:
                return where + problem, None
        return None, None


def run_sessions(scenario: Scenario) -> ScenarioOutcome:
    """Run a scenario file with sessions; one outcome for the file (``sessions`` holds each
    session's)."""
    run = _Run(scenario)
    run.run()
    outcomes = [run.outcomes[s.name] for s in run.sessions]
    problems = [
        (f"session {o.name!r}: {o.problem}" if len(outcomes) > 1 else o.problem)
        for o in outcomes
        if o.problem
    ]
    wanted = scenario.spec.expect.requests
    if wanted is not None and run.log != wanted:
        problems.append(
            f"expected the model requests of sessions {wanted}, in order; made {run.log}"
        )
    first = outcomes[0]
    rows = [row for o in outcomes for row in o.rows]
    return ScenarioOutcome(
        scenario=scenario,
        passed=not problems,
        rows=rows,
        problem=problems[0] if problems else None,
        divergence=next((o.divergence for o in outcomes if o.divergence), None),
        trace=first.trace,
        model_requests=len(run.log),
        turns=sum(o.turns for o in outcomes),
        sessions=outcomes,
        notes=[note for o in outcomes for note in o.notes],
    )
