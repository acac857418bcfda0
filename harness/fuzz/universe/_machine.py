"""A hypothesis state machine that drives ``LoopCore`` directly: no model, no tool I/O.

For people who write their own strategy::

    from harness.fuzz import loop_core_machine

    TestMyStrategy = loop_core_machine(lambda: [MyStrategy()], tools=my_tools).TestCase

Rules begin iterations, answer with generated tool calls (by index into the offered
tools, with valid, empty, malformed or unexpected arguments, fresh or repeated ids)
or a final text, and settle pending calls with generated results (values or
errors). After every step the invariants of ``harness.scenarios.check_invariants``
must hold for what the core has recorded so far.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from harness._errors import HarnessError
from harness._validation import check_int
from harness.fuzz.universe._decisions import UNKNOWN_TOOL, example_arguments
from harness.fuzz.universe._execute import SECRET, StrategyFactory
from harness.loop import (
    InjectionStrategy,
    LoopCore,
    LoopOptions,
    ModelRequest,
    ModelResponse,
    StrategyChain,
)
from harness.messages import AssistantMessage, ToolCall, UserMessage
from harness.scenarios import check_invariants, format_violations
from harness.tools import Tool, ToolResult, Toolset

__all__ = ["loop_core_machine"]

_ARGS = ("valid", "empty", "malformed", "invalid")

_call = st.tuples(
    st.integers(0, 63),  # which offered tool
    st.sampled_from(_ARGS),
    st.booleans(),  # reuse the previous id
    st.booleans(),  # call a name that is not offered
)
_result = st.one_of(
    st.builds(lambda v: ("ok", v), st.one_of(st.integers(), st.text(max_size=20))),
    st.just(("error", "the tool failed")),
)


def _arguments(mode: str, schema: Any) -> str:
    if mode == "valid":
        return json.dumps(example_arguments(schema))
    return {"empty": "{}", "malformed": '{"broken'}.get(mode, '{"unexpected_argument": 1}')


class _CoreMachine(RuleBasedStateMachine):
    """Drives one ``LoopCore`` per generated run and checks it after every step.

    What it exercises (fresh strategies and tools per run, the iteration limit) comes
    from the subclass ``loop_core_machine`` makes.
    """

    max_iterations = 10

    def new_strategies(self) -> Sequence[InjectionStrategy]:
        """Fresh strategies under test for one run."""
        raise NotImplementedError

    def new_tools(self) -> Sequence[Tool]:
        """Fresh tools for one run."""
        raise NotImplementedError

    def __init__(self) -> None:
        super().__init__()
        self._new_run()

    def _new_run(self) -> None:
        self.core = LoopCore(
            messages=[UserMessage(content="go")],
            toolset=Toolset(list(self.new_tools())),
            strategy=StrategyChain(list(self.new_strategies())),
            options=LoopOptions(max_iterations=self.max_iterations, context={"api_key": SECRET}),
        )
        self.request: ModelRequest | None = None
        self.pending: list[Any] = []
        self.over = False
        self.error: HarnessError | None = None
        self.definitions: list[Any] = []
        self.last_id: str | None = None
        self.ids = 0

    def _guard(self, step: Callable[[], Any]) -> Any:
        try:
            return step()
        except HarnessError as exc:  # a limit or a strategy error ends the run, typed
            self.over, self.error, self.pending, self.request = True, exc, [], None
            lost = exc.trace is not self.core.trace
            assert not lost, "the error lost the run's trace"
            return None

    @precondition(lambda self: self.over)
    @rule()
    def start_over(self) -> None:
        """The run ended (answer or error): start a new one with fresh strategies."""
        self._new_run()

    @precondition(lambda self: not self.over and self.request is None and not self.pending)
    @rule()
    def begin(self) -> None:
        request = self._guard(self.core.begin_iteration)
        if request is not None:
            assert request.tool_names == self.core.toolset.names
            self.definitions.extend(request.tools)
            self.request = request

    @precondition(lambda self: self.request is not None)
    @rule(text=st.text(max_size=10))
    def answer(self, text: str) -> None:
        self._guard(
            lambda: self.core.receive_response(
                ModelResponse(message=AssistantMessage(content=text))
            )
        )
        self.request = None
        if self.core.finished:
            self.core.result()  # closes the last iteration record
            self.over = True

    @precondition(lambda self: self.request is not None)
    @rule(specs=st.lists(_call, min_size=1, max_size=3))
    def call_tools(self, specs: list[tuple[int, str, bool, bool]]) -> None:
        assert self.request is not None
        names = self.request.tool_names
        schemas = {d.name: d.parameters for d in self.request.tools}
        calls = []
        for index, mode, repeat, unknown in specs:
            name = UNKNOWN_TOOL if unknown or not names else names[index % len(names)]
            if repeat and self.last_id is not None:
                call_id = self.last_id
            else:
                self.ids += 1
                call_id = f"m{self.ids}"
            self.last_id = call_id
            arguments = _arguments(mode, schemas.get(name, {}))
            calls.append(ToolCall(id=call_id, name=name, arguments=arguments))
        response = ModelResponse(
            message=AssistantMessage(tool_calls=tuple(calls)), finish_reason="tool_calls"
        )
        self.request = None
        self.pending = self._guard(lambda: self.core.receive_response(response)) or []

    @precondition(lambda self: bool(self.pending))
    @rule(data=st.data())
    def settle(self, data: st.DataObject) -> None:
        results = []
        for item in self.pending:
            if item.immediate is not None:
                results.append((item.immediate, 0))
                continue
            kind, value = data.draw(_result)
            result = ToolResult.ok(value) if kind == "ok" else ToolResult.error(value)
            results.append((result, 1))
        self.pending = []
        self._guard(lambda: self.core.receive_results(results))

    @invariant()
    def sound_so_far(self) -> None:
        if not self.over and (self.pending or self.request is None):
            return  # mid-iteration: the open iteration is not in the trace yet
        violations = check_invariants(
            self.core.trace,
            self.core.messages,
            error=self.error,
            max_iterations=self.max_iterations,
            secrets=[SECRET],
            definitions=self.definitions,
        )
        assert not violations, format_violations(violations)


def loop_core_machine(
    strategies: StrategyFactory,
    *,
    tools: Callable[[], Sequence[Tool]] = tuple,
    max_iterations: int = 10,
) -> type[RuleBasedStateMachine]:
    """A ``RuleBasedStateMachine`` class exercising ``strategies`` on a bare ``LoopCore``.

    ``strategies()`` and ``tools()`` are called once per generated run, for fresh
    instances. Run it with ``MachineClass.TestCase`` (unittest/pytest) or
    ``hypothesis.stateful.run_state_machine_as_test``.
    """
    if not callable(strategies):
        raise HarnessError(f"strategies must be a factory (no arguments), got {strategies!r}")
    limit = check_int(max_iterations, name="max_iterations", minimum=1)

    class LoopCoreMachine(_CoreMachine):
        """Drives one ``LoopCore`` per generated run and checks it after every step."""

        max_iterations = limit

        def new_strategies(self) -> Sequence[InjectionStrategy]:
            return strategies()

        def new_tools(self) -> Sequence[Tool]:
            return tools()

    return LoopCoreMachine
