"""The core's phases: the tables, and a stateful test driving the core in random call orders
through every move of ``TRANSITIONS``."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, get_args

import pytest
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from harness import (
    HarnessError,
    MaxIterationsExceeded,
    OutputValidationError,
    ToolNotFound,
    UsageError,
)
from harness.loop import (
    LoopCore,
    LoopOptions,
    LoopPhase,
    ModelResponse,
    StrategyChain,
    return_direct,
)
from harness.loop._continuation import ContinueWhile
from harness.loop._phases import ALLOWED, TRANSITIONS, Call, PhaseMachine, Trigger, refusal
from harness.messages import AssistantMessage, ToolCall, UserMessage
from harness.tools import Tool, ToolResult, Toolset

_SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}
CALLS: tuple[Call, ...] = get_args(Call)


def _tool(name: str) -> Tool:
    return Tool.from_schema(name, f"tool {name}", _SCHEMA, lambda args: name)


DOCS = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def _docs_phase_table() -> list[list[str]]:
    """The rows of the phase table in docs/architecture.md, blank cells filled from above."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("### Phases") :]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    header, rows = lines[0], lines[2:]  # lines[1] is the | --- | line
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "phase",
        "allowed call",
        "on",
        "moves to",
        "when",
    ]
    table: list[list[str]] = []
    for line in rows:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 5, line
        if table:
            cells = [cell or above for cell, above in zip(cells, table[-1], strict=True)]
        table.append(cells)
    return table


def _code(cell: str) -> str:
    """The first ``code`` span of a cell, or the cell."""
    found = re.search(r"`([^`]*)`", cell)
    return found.group(1) if found else cell


def test_the_docs_phase_table_is_the_code() -> None:
    """docs/architecture.md's table has exactly the rows of ALLOWED and TRANSITIONS."""
    by_value = {phase.value: phase for phase in LoopPhase}
    moves = set()
    calls: dict[LoopPhase, set[str]] = {}
    for phase, call, trigger, after, _ in _docs_phase_table():
        start = by_value[_code(phase)]
        calls.setdefault(start, set()).add(_code(call).split("(")[0] if "`" in call else call)
        moves.add((start, _code(trigger), by_value[_code(after)]))
    assert moves == {(phase, trigger, after) for (phase, trigger), after in TRANSITIONS.items()}
    assert calls == {
        phase: set(allowed) if allowed else {"(none)"} for phase, allowed in ALLOWED.items()
    }


def test_every_phase_has_a_row_and_every_call_is_allowed_somewhere() -> None:
    assert set(ALLOWED) == set(LoopPhase)
    assert {call for calls in ALLOWED.values() for call in calls} == set(CALLS)
    assert ALLOWED[LoopPhase.FAILED] == ()


@pytest.mark.parametrize("phase", list(LoopPhase))
def test_the_refusal_names_the_call_the_phase_and_what_to_do(phase: LoopPhase) -> None:
    message = refusal("begin_iteration", phase)
    assert message.startswith(f"can't begin_iteration() while the run is {phase.value}; ")
    for allowed in ALLOWED[phase]:
        assert f"{allowed}()" in message
    if not ALLOWED[phase]:
        assert "start a new run with a new LoopCore" in message


@pytest.mark.parametrize("phase", list(LoopPhase))
def test_only_a_finished_run_also_suggests_a_new_core(phase: LoopPhase) -> None:
    message = refusal("begin_iteration", phase)
    if phase is LoopPhase.FINISHED:
        assert message.endswith(
            "; call result() next, or begin_turn() for a session's next user turn, "
            "or start a new run with a new LoopCore"
        )
    elif phase is LoopPhase.FAILED:
        assert message.endswith(
            "; no call is allowed any more; start a new run with a new LoopCore"
        )
    else:
        assert "new LoopCore" not in message


def test_the_machine_moves_only_through_the_table() -> None:
    machine = PhaseMachine()
    assert machine.phase is LoopPhase.READY and machine.error is None
    machine.move("requested")
    assert machine.phase is LoopPhase.AWAITING_RESPONSE
    with pytest.raises(HarnessError, match="no move from 'awaiting a response' on 'results'"):
        machine.move("results")
    assert machine.phase is LoopPhase.AWAITING_RESPONSE  # a move the table lacks changes nothing


def test_the_machine_keeps_the_first_error_and_a_finished_run_stays_finished() -> None:
    machine = PhaseMachine()
    first, second = ValueError("first"), KeyError("second")
    assert machine.fail(first) is True
    assert machine.fail(second) is False
    assert machine.phase is LoopPhase.FAILED and machine.error is first
    finished = PhaseMachine()
    for trigger in ("requested", "answer"):
        finished.move(trigger)  # type: ignore[arg-type]
    assert finished.fail(first) is False
    assert finished.phase is LoopPhase.FINISHED and finished.error is None


@pytest.mark.parametrize(
    ("triggers", "says"),
    [
        ((), "while the run is ready; call begin_iteration() next"),
        (("requested",), "awaiting a response (iteration 4 sent its request)"),
        (("requested", "tool_calls"), "(2 tool call(s) of iteration 4 are pending)"),
        (("requested", "completions_running"), "(the model answered while async tool calls"),
        (("error",), "(it ended with ValueError: bad)"),
    ],
)
def test_the_machine_words_a_refusal_with_why_the_run_is_where_it_is(
    triggers: tuple[Trigger, ...], says: str
) -> None:
    machine = PhaseMachine()
    for trigger in triggers:
        if trigger == "error":
            machine.fail(ValueError("bad"))
        else:
            machine.move(trigger)
    refused = machine.refusal("result", iteration=4, pending=2)
    assert isinstance(refused, UsageError)
    assert str(refused).startswith(f"can't result() while the run is {machine.phase.value}")
    assert says in str(refused)


def test_the_old_name_phase_warns_and_is_loop_phase() -> None:
    import harness.loop

    with pytest.warns(
        DeprecationWarning, match=r"harness\.loop\.Phase is deprecated since 0\.2\.0"
    ):
        old = harness.loop.Phase
    assert old is LoopPhase
    with pytest.warns(DeprecationWarning, match=r"use harness\.loop\.LoopPhase instead"):
        from harness.loop import Phase
    assert Phase.FAILED is LoopPhase.FAILED
    assert "Phase" not in harness.loop.__all__
    with pytest.raises(AttributeError, match="has no attribute 'Phasee'"):
        _ = harness.loop.Phasee  # type: ignore[attr-defined]


class Boom(Exception):
    """What the armed observer raises."""


class DriverError(Exception):
    """What a driver aborts the run with (the model's request failed)."""


Move = tuple[LoopPhase, Trigger, LoopPhase]


class ObservedMachine(PhaseMachine):
    """A ``PhaseMachine`` that records every move: (before, trigger, after)."""

    def __init__(self) -> None:
        super().__init__()
        self.moves: list[Move] = []

    def move(self, trigger: Trigger) -> None:
        before = self.phase
        super().move(trigger)
        self.moves.append((before, trigger, self.phase))


class ObservedCore(LoopCore):
    """A ``LoopCore`` whose phase machine records every move."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.machine = ObservedMachine()
        self._phases = self.machine

    @property
    def moves(self) -> list[Move]:
        return self.machine.moves


REACHED: set[tuple[LoopPhase, Trigger]] = set()
"""Every ``(phase, trigger)`` a ``CoreMachine`` saw the core move on."""

_RETRIES = 1
DEADLINES = {"job": 0.0, "long_job": 3600.0}
"""The async tools and their deadlines: ``job`` is past it when the run settles,
``long_job`` still within it."""
TOOL_POOLS = [
    ["t0", "t1"],
    ["job"],
    ["long_job"],
    ["job", "long_job"],
    ["t0", "direct"],
    ["t1", "ghost"],
    ["t0", "t1", "direct", *DEADLINES, "ghost"],
]
"""What the model of a run calls: one kind of tool, or any (``ghost`` is not offered)."""
COVERAGE_EXAMPLES = 600
"""Examples of the derandomized run that must reach every move (random seeds reached them
all at 500 in ten runs out of ten, at 300 in seven out of eight; derandomized runs are not
the same in every process, so the margin matters)."""


@dataclasses.dataclass
class Job:
    """An async call of the run, as the reference model sees it."""

    call_id: str
    deadline: float
    state: str = "running"  # running -> arrived -> done (delivered or lost)


class CoreMachine(RuleBasedStateMachine):
    """Drive a ``LoopCore`` with any call in any order; a reference model predicts its phase.

    Tools: ``t0`` and ``t1`` (plain), ``direct`` (``return_direct``), ``job`` and
    ``long_job`` (async: the result is ``ToolResult.started``, the completion a rule of
    its own); ``ghost`` is not offered. The output type is ``str``: ``'"done"'`` is a
    valid answer, ``oops`` is sent back once and fails the run the second time.

    Each ``step`` makes the call the phase allows (the reference model predicts what
    it does), or a call the phase refuses, or disturbs the run.
    """

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        self.max_iterations = 6
        self.core = ObservedCore(
            messages=[UserMessage(content="go")],
            toolset=Toolset(
                [
                    _tool("t0"),
                    _tool("t1"),
                    return_direct(_tool("direct")),
                    *map(_tool, DEADLINES),
                ]
            ),
            strategy=StrategyChain(()),
            options=LoopOptions(
                max_iterations=self.max_iterations,
                unknown_tool="raise",
                output_type=str,
                output_retries=_RETRIES,
                continuation=ContinueWhile(lambda context: context.answer.content == '"more"'),
            ),
            observers=[self._observe],
        )
        self.expected = LoopPhase.READY
        self.pending: list[tuple[str, str]] = []
        self.iterations = 0
        self.turn_start = 0
        self.attempts = 0
        self.jobs: list[Job] = []
        self.output: str | None = None
        self.error_type: type[BaseException] | None = None
        self.calm_moves = 0
        self.pool = TOOL_POOLS[-1]

    def _observe(self, event: Any) -> None:
        if self.armed:
            self.armed = False
            raise Boom("observer failed")

    def _jobs(self, state: str) -> list[Job]:
        return [job for job in self.jobs if job.state == state]

    def _end_jobs(self) -> None:
        for job in self.jobs:
            job.state = "done"

    # -- checks -----------------------------------------------------------------------

    def _attempt(self, call: Call, action: Any) -> Any:
        """Run ``action``; check a refusal, or that the call made exactly one move."""
        before = self.core.phase
        assert before is self.expected
        moves = len(self.core.moves)
        if call not in ALLOWED[before]:
            with pytest.raises(UsageError) as info:
                action()
            message = str(info.value)
            assert f"can't {call}() while the run is {before.value}" in message
            for allowed in ALLOWED[before]:
                assert f"{allowed}()" in message
            if before is LoopPhase.FAILED:
                assert self.error_type is not None
                assert f"it ended with {self.error_type.__name__}" in message
            assert self.core.phase is before  # a refused call changes nothing
            assert len(self.core.moves) == moves
            return None
        outcome = action()
        if call == "result":  # reading the result moves nothing
            assert self.core.phase is before and len(self.core.moves) == moves
        else:
            self._one_move_since(moves, before)
        return outcome

    def _one_move_since(self, moves: int, before: LoopPhase) -> None:
        """The call moved the phase once, along ``TRANSITIONS``, to where it is now."""
        made = self.core.moves[moves:]
        assert len(made) == 1, made
        [(start, trigger, after)] = made
        assert start is before and after is self.core.phase
        assert TRANSITIONS[start, trigger] is after
        REACHED.add((start, trigger))

    def _fails_with(self, exc_type: type[BaseException], action: Any) -> None:
        before, moves = self.core.phase, len(self.core.moves)
        with pytest.raises(exc_type):
            action()
        self._one_move_since(moves, before)
        assert self.core.moves[-1][1] == "error"
        self.expected = LoopPhase.FAILED
        self.error_type = exc_type
        self.armed = False
        self._end_jobs()

    # -- the calls each phase allows, and what the reference model predicts ------------

    @initialize(moves=st.sampled_from([6, 3, 9, 12, 0]), pool=st.sampled_from(TOOL_POOLS))
    def plan(self, moves: int, pool: list[str]) -> None:
        """The tools this run's model calls, and how many moves the run makes before an
        observer may fail or a driver abort (runs that fail at once, or call every kind
        of tool at once, rarely reach the later phases)."""
        self.calm_moves = moves
        self.pool = pool

    @rule(data=st.data())
    def step(self, data: st.DataObject) -> None:
        """One step: mostly the call the phase allows, else a call it refuses, an async
        tool reporting back, an observer armed to fail, or a driver's abort.

        One rule draws them all: hypothesis switches rules off at random per example
        (swarm testing), which would cut most runs short of the later phases.
        """
        actions = ["advance", "advance", "advance", "refuse"]
        if self._jobs("running") and self.expected not in (LoopPhase.FINISHED, LoopPhase.FAILED):
            actions.append("report")
        waiting = self.expected in (LoopPhase.AWAITING_COMPLETIONS, LoopPhase.FINISHED)
        if waiting or len(self.core.moves) >= self.calm_moves:
            actions += ["arm", "abort"] if self.expected is not LoopPhase.FAILED else ["arm"]
        action = data.draw(st.sampled_from(actions), label="action")
        if action == "advance":
            self._advance(data)
        elif action == "refuse":
            self._refused_call(data)
        elif action == "report":
            self._report(data.draw(st.sampled_from(self._jobs("running")), label="job"))
        elif action == "arm":
            self.armed = True
        else:
            self._abort()

    def _advance(self, data: st.DataObject) -> None:
        """The call the phase allows (after a failure: the checks that every call is refused)."""
        if self.expected is LoopPhase.READY:
            self._begin_iteration()
        elif self.expected is LoopPhase.AWAITING_RESPONSE:
            calls = st.lists(st.sampled_from(self.pool), min_size=1, max_size=2)
            names = data.draw(st.one_of(st.just([]), calls), label="calls")
            answer = data.draw(
                st.sampled_from(['"done"', '"done"', "oops", '"more"']), label="answer"
            )
            running = self._jobs("running")
            reported = data.draw(st.sampled_from([False, False, True]), label="all reported first")
            if not names and running and reported:
                for job in running:  # they arrived while the model was thinking
                    self._report(job)
            self._receive_response(names, answer)
        elif self.expected is LoopPhase.AWAITING_RESULTS:
            self._receive_results(data.draw(st.sampled_from([0, 0, 0, 1, -1]), label="extra"))
        elif self.expected is LoopPhase.AWAITING_COMPLETIONS:
            running = self._jobs("running")
            if running and data.draw(st.booleans(), label="one reported while waiting"):
                self._report(running[0])
            self._settle_completions()
        elif self.expected is LoopPhase.FINISHED:
            if data.draw(st.booleans(), label="a session's next user turn"):
                self._begin_turn()
            else:
                self._result()
        else:
            self._after_the_failure()

    def _begin_iteration(self) -> None:
        if self.armed:
            self._fails_with(Boom, self.core.begin_iteration)
        elif self.iterations - self.turn_start >= self.max_iterations:
            self._fails_with(MaxIterationsExceeded, self.core.begin_iteration)
        else:
            request = self._attempt("begin_iteration", self.core.begin_iteration)
            self.iterations += 1
            assert request.iteration == self.iterations
            for job in self._jobs("arrived"):
                job.state = "done"  # delivered with this request
            self.expected = LoopPhase.AWAITING_RESPONSE

    def _receive_response(self, names: list[str], answer: str) -> None:
        calls = tuple(ToolCall(id="", name=n, arguments="{}") for n in names)
        message = AssistantMessage(content=None if calls else answer, tool_calls=calls)

        def act() -> Any:
            return self.core.receive_response(ModelResponse(message=message))

        if self.armed:
            self._fails_with(Boom, act)
        elif "ghost" in names:
            self._fails_with(ToolNotFound, act)
        elif calls:
            pending = self._attempt("receive_response", act)
            self.pending = [(p.call.id, p.call.name) for p in pending]
            self.expected = LoopPhase.AWAITING_RESULTS
        elif answer == "oops" and self.attempts >= _RETRIES:
            self._fails_with(OutputValidationError, act)
        elif answer == "oops":
            self._attempt("receive_response", act)
            self.attempts += 1
            self.expected = LoopPhase.READY
        elif answer == '"more"':  # the continuation policy keeps the turn going
            self._attempt("receive_response", act)
            self.expected = LoopPhase.READY
        else:
            self._attempt("receive_response", act)
            self._answered()

    def _answered(self) -> None:
        """The model's valid answer (or the end of the wait): what the ledger does next."""
        if self._jobs("running"):
            self.expected = LoopPhase.AWAITING_COMPLETIONS
        elif self._jobs("arrived") and self.iterations - self.turn_start < self.max_iterations:
            self.expected = LoopPhase.READY  # a further turn delivers them
        else:
            self.expected = LoopPhase.FINISHED
            self.output = "done"
            self._end_jobs()

    def _receive_results(self, extra: int) -> None:
        count = max(len(self.pending) + extra, 0)
        results = [self._result_of(name) for _, name in self.pending][:count]
        results += [ToolResult.ok("ok")] * (count - len(results))

        def act() -> None:
            self.core.receive_results([(result, 1) for result in results])

        if count != len(self.pending):
            moves = len(self.core.moves)
            with pytest.raises(UsageError, match=f"expected {len(self.pending)} tool results"):
                act()
            assert self.core.phase is LoopPhase.AWAITING_RESULTS
            assert len(self.core.moves) == moves
        elif self.armed:
            self._fails_with(Boom, act)
        else:
            self._attempt("receive_results", act)
            self.jobs += [Job(i, DEADLINES[n]) for i, n in self.pending if n in DEADLINES]
            if any(name == "direct" for _, name in self.pending):
                self.expected = LoopPhase.FINISHED
                self.output = "direct"
                self._end_jobs()
            else:
                self.expected = LoopPhase.READY

    @staticmethod
    def _result_of(name: str) -> ToolResult:
        if name in DEADLINES:
            return ToolResult.started(completion_deadline=DEADLINES[name])
        if name == "direct":
            return ToolResult.plain('"direct"')
        return ToolResult.ok("ok")

    def _settle_completions(self) -> None:
        if self.armed:
            self._fails_with(Boom, self.core.settle_completions)
        else:
            self._attempt("settle_completions", self.core.settle_completions)
            for job in self._jobs("running"):
                if job.deadline == 0:
                    job.state = "done"  # past its deadline: lost
            self._answered()

    def _begin_turn(self) -> None:
        """A session's next user turn: the same core goes on, counting a new turn."""
        self._attempt("begin_turn", lambda: self.core.begin_turn([UserMessage(content="again")]))
        self.turn_start = self.iterations
        self.attempts = 0
        self.output = None
        self.expected = LoopPhase.READY

    def _result(self) -> None:
        outcome = self._attempt("result", self.core.result)
        assert outcome.output == self.output
        assert len(outcome.trace.iterations) == self.iterations

    def _after_the_failure(self) -> None:
        """Every call after a failure is refused alike; a driver's abort keeps the first
        error."""
        for call, action in (
            ("begin_iteration", self.core.begin_iteration),
            ("result", self.core.result),
        ):
            self._attempt(call, action)  # type: ignore[arg-type]
        before, moves = self.core.phase, len(self.core.moves)
        self.core.abort(DriverError("a driver's own error after the failure"))
        self._one_move_since(moves, before)

    # -- what else happens: refused calls, completions, failures -----------------------

    def _refused_call(self, data: st.DataObject) -> None:
        """Any call the phase does not allow is refused alike and changes nothing."""
        refused = [call for call in CALLS if call not in ALLOWED[self.expected]]
        call = data.draw(st.sampled_from(refused), label="refused call")
        actions = {
            "begin_iteration": self.core.begin_iteration,
            "receive_response": lambda: self.core.receive_response(
                ModelResponse(message=AssistantMessage(content='"done"'))
            ),
            "receive_results": lambda: self.core.receive_results(
                [(ToolResult.ok("ok"), 1) for _ in self.pending]
            ),
            "settle_completions": self.core.settle_completions,
            "result": self.core.result,
            "begin_turn": lambda: self.core.begin_turn([UserMessage(content="again")]),
        }
        self._attempt(call, actions[call])

    def _report(self, job: Job) -> None:
        """The async tool reports back (from its own thread, in a real run)."""
        self.core.completions.complete(job.call_id, "an async tool", ToolResult.ok("done"))
        job.state = "arrived"

    def _abort(self) -> None:
        """A driver ends the run for an error outside the core: only an unfinished run fails."""
        before, moves = self.core.phase, len(self.core.moves)
        self.core.abort(DriverError("the model's request failed"))
        self._one_move_since(moves, before)
        if self.expected is not LoopPhase.FINISHED:
            self.expected = LoopPhase.FAILED
            self.error_type = DriverError
            self._end_jobs()

    @invariant()
    def the_phase_is_the_predicted_one(self) -> None:
        assert self.core.phase is self.expected
        assert self.core.finished is (self.expected is LoopPhase.FINISHED)
        if self.expected is LoopPhase.FAILED:
            assert self.error_type is not None
            assert isinstance(self.core.error, self.error_type)
            # the trace and the history are attached to the error that ended the run
            attached = getattr(self.core.error, "trace", None) or self.core.error.harness_trace  # type: ignore[attr-defined]
            assert attached is self.core.trace
        else:
            assert self.core.error is None

    @invariant()
    def every_async_call_ends_once(self) -> None:
        """A finished or failed run leaves no async call open; each ended once."""
        ended = [c.call_id for c in self.core.trace.completions]
        assert len(ended) == len(set(ended))
        if self.expected in (LoopPhase.FINISHED, LoopPhase.FAILED):
            assert sorted(ended) == sorted(job.call_id for job in self.jobs)


TestCoreMachine = CoreMachine.TestCase
TestCoreMachine.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)


def test_the_machine_reaches_every_transition_and_nothing_else() -> None:
    REACHED.clear()
    run_state_machine_as_test(
        CoreMachine,
        settings=settings(
            max_examples=COVERAGE_EXAMPLES,
            stateful_step_count=30,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        ),
    )
    missing = set(TRANSITIONS) - REACHED
    assert not missing, f"never reached: {sorted((p.value, t) for p, t in missing)}"
    assert set(TRANSITIONS) >= REACHED
