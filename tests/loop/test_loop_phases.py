"""The core's phases: the table, and a stateful test driving the core in random call orders."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from harness import MaxIterationsExceeded, ToolNotFound, UsageError
from harness.loop import LoopCore, LoopOptions, ModelResponse, Phase, StrategyChain
from harness.loop._phases import ALLOWED, Call, refusal
from harness.messages import AssistantMessage, ToolCall, UserMessage
from harness.tools import Tool, ToolResult, Toolset

_SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}
CALLS: tuple[Call, ...] = get_args(Call)


def _tool(name: str) -> Tool:
    return Tool.from_schema(name, f"tool {name}", _SCHEMA, lambda args: name)


def test_every_phase_has_a_row_and_every_call_is_allowed_somewhere() -> None:
    assert set(ALLOWED) == set(Phase)
    assert {call for calls in ALLOWED.values() for call in calls} == set(CALLS)
    assert ALLOWED[Phase.FAILED] == ()


@pytest.mark.parametrize("phase", list(Phase))
def test_the_refusal_names_the_call_the_phase_and_what_to_do(phase: Phase) -> None:
    message = refusal("begin_iteration", phase)
    assert message.startswith(f"can't begin_iteration() while the run is {phase.value}; ")
    for allowed in ALLOWED[phase]:
        assert f"call {allowed}() next" in message
    if not ALLOWED[phase]:
        assert "start a new run with a new LoopCore" in message


@pytest.mark.parametrize("phase", list(Phase))
def test_only_a_finished_run_also_suggests_a_new_core(phase: Phase) -> None:
    message = refusal("begin_iteration", phase)
    if phase is Phase.FINISHED:
        assert message.endswith("; call result() next, or start a new run with a new LoopCore")
    elif phase is Phase.FAILED:
        assert message.endswith(
            "; no call is allowed any more; start a new run with a new LoopCore"
        )
    else:
        assert "new LoopCore" not in message


class Boom(Exception):
    """What the armed observer raises."""


class CoreMachine(RuleBasedStateMachine):
    """Drive a ``LoopCore`` with any call in any order; a reference model predicts its phase."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        self.max_iterations = 4
        self.core = LoopCore(
            messages=[UserMessage(content="go")],
            toolset=Toolset([_tool("t0"), _tool("t1")]),
            strategy=StrategyChain(()),
            options=LoopOptions(max_iterations=self.max_iterations, unknown_tool="raise"),
            observers=[self._observe],
        )
        self.expected = Phase.READY
        self.pending = 0
        self.iterations = 0
        self.error_type: type[BaseException] | None = None

    def _observe(self, event: Any) -> None:
        if self.armed:
            self.armed = False
            raise Boom("observer failed")

    def _attempt(self, call: Call, action: Any) -> Any:
        """Run ``action``; check a refusal or the phase the model predicts."""
        before = self.core.phase
        assert before is self.expected
        if call not in ALLOWED[before]:
            with pytest.raises(UsageError) as info:
                action()
            message = str(info.value)
            assert f"can't {call}() while the run is {before.value}" in message
            for allowed in ALLOWED[before]:
                assert f"{allowed}()" in message
            if before is Phase.FAILED:
                assert self.error_type is not None
                assert f"it ended with {self.error_type.__name__}" in message
            assert self.core.phase is before  # a refused call changes nothing
            return None
        return action()

    def _fails_with(self, exc_type: type[BaseException], action: Any) -> None:
        with pytest.raises(exc_type):
            action()
        self.expected = Phase.FAILED
        self.error_type = exc_type
        self.armed = False

    @rule()
    def arm_the_observer(self) -> None:
        self.armed = True

    @rule()
    def begin_iteration(self) -> None:
        if self.expected is not Phase.READY:
            self._attempt("begin_iteration", self.core.begin_iteration)
            return
        if self.iterations >= self.max_iterations:
            self._fails_with(MaxIterationsExceeded, self.core.begin_iteration)
        elif self.armed:
            self._fails_with(Boom, self.core.begin_iteration)
        else:
            request = self._attempt("begin_iteration", self.core.begin_iteration)
            self.iterations += 1
            assert request.iteration == self.iterations
            self.expected = Phase.AWAITING_RESPONSE

    @rule(names=st.lists(st.sampled_from(["t0", "t1", "ghost"]), max_size=3))
    def receive_response(self, names: list[str]) -> None:
        calls = tuple(ToolCall(id="", name=n, arguments="{}") for n in names)
        message = AssistantMessage(content=None if calls else "done", tool_calls=calls)

        def act() -> Any:
            return self.core.receive_response(ModelResponse(message=message))

        if self.expected is not Phase.AWAITING_RESPONSE:
            self._attempt("receive_response", act)
        elif self.armed:
            self._fails_with(Boom, act)
        elif "ghost" in names:
            self._fails_with(ToolNotFound, act)
        else:
            pending = self._attempt("receive_response", act)
            self.pending = len(pending)
            self.expected = Phase.AWAITING_RESULTS if calls else Phase.FINISHED

    @rule(extra=st.sampled_from([0, 0, 0, 1, -1]))
    def receive_results(self, extra: int) -> None:
        count = max(self.pending + extra, 0)
        results = [(ToolResult.ok("ok"), 1)] * count

        def act() -> None:
            self.core.receive_results(results)

        if self.expected is not Phase.AWAITING_RESULTS:
            self._attempt("receive_results", act)
        elif count != self.pending:
            with pytest.raises(UsageError, match=f"expected {self.pending} tool results"):
                act()
            assert self.core.phase is Phase.AWAITING_RESULTS
        elif self.armed:
            self._fails_with(Boom, act)
        else:
            act()
            self.expected = Phase.READY

    @rule()
    def result(self) -> None:
        outcome = self._attempt("result", self.core.result)
        if outcome is not None:
            assert outcome.output == "done"
            assert len(outcome.trace.iterations) == self.iterations

    @invariant()
    def the_phase_is_the_predicted_one(self) -> None:
        assert self.core.phase is self.expected
        assert self.core.finished is (self.expected is Phase.FINISHED)
        if self.expected is Phase.FAILED:
            assert self.error_type is not None
            assert isinstance(self.core.error, self.error_type)
            # the trace and the history are attached to the error that ended the run
            attached = getattr(self.core.error, "trace", None) or self.core.error.harness_trace  # type: ignore[attr-defined]
            assert attached is self.core.trace
        else:
            assert self.core.error is None

    @precondition(lambda self: self.expected is Phase.FAILED)
    @rule()
    def every_call_after_a_failure_is_refused_alike(self) -> None:
        for call, action in (
            ("begin_iteration", self.core.begin_iteration),
            ("result", self.core.result),
        ):
            self._attempt(call, action)


TestCoreMachine = CoreMachine.TestCase
TestCoreMachine.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)
