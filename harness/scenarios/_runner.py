"""Running a scenario and judging it against its expectations."""

from __future__ import annotations

import dataclasses
from typing import Any

from harness._errors import HarnessError, ScenarioError, UsageError
from harness._secrets import hidden_values, scrub_message
from harness.injection import SectionDisclosure, run_with_sections
from harness.loop import LoopOptions, Model, RunResult, Trace, run
from harness.scenarios._agent import Agent
from harness.scenarios._invariants import check_invariants, format_violations
from harness.scenarios._loader import Scenario
from harness.scenarios._mcp import McpParts
from harness.scenarios._properties import AgentRun, check_properties
from harness.scenarios._session_files import has_sessions
from harness.scenarios._spec import CompletionExpect
from harness.scenarios._timeline import (
    Divergence,
    TimelineRow,
    check_timeline,
    timeline_rows,
)
from harness.tools import ContextObjects

__all__ = ["NOTES", "ScenarioOutcome", "run_scenario"]

NOTES = "harness.recorded_result_differences"
"""The blackboard key where ``harness.cassettes.RecordedResults`` lists the tool results
that differ from a recording's (each outcome reports them as ``notes``)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ScenarioOutcome:
    """The verdict on one scenario run."""

    scenario: Scenario
    passed: bool
    rows: list[TimelineRow]
    """The compact timeline of what happened."""
    problem: str | None = None
    """Why it failed (first divergence or unexpected error)."""
    divergence: Divergence | None = None
    result: RunResult | None = None
    error: BaseException | None = None
    trace: Trace | None = None
    model_requests: int | None = None
    """Model requests made (every session's, for a sessions file)."""
    turns: int = 1
    """User turns sent (every session's, for a sessions file)."""
    sessions: list[Any] = dataclasses.field(default_factory=list)
    """Each session's ``SessionOutcome`` (files with turns or sessions)."""
    notes: list[str] = dataclasses.field(default_factory=list)
    """What the run reports besides its verdict (results that differ from a recording's)."""

    def __post_init__(self) -> None:
        # the problem and notes quote user code (a property's message, a tool's error):
        # scrubbed like a tool's error message, whatever prints or serialises them
        hidden = hidden_values(self.scenario.spec.context.values())
        if self.problem is not None:
            object.__setattr__(self, "problem", scrub_message(self.problem, hidden))
        if self.notes:
            object.__setattr__(self, "notes", [scrub_message(n, hidden) for n in self.notes])

    @property
    def iterations(self) -> int:
        """Iterations (model requests) in the timeline."""
        return len(self.rows)


def _error_name_matches(error: BaseException, name: str) -> bool:
    return any(cls.__name__ == name for cls in type(error).__mro__)


def _run_options(scenario: Scenario, agent: Agent | None) -> LoopOptions:
    """The file's options, laid over the agent factory's (when the file names one)."""
    if agent is None:
        return scenario.build_options()
    spec = scenario.spec
    extra: dict[str, Any] = dict(spec.options)
    if spec.context:
        extra["context"] = {**agent.options.context, **spec.context}
    if spec.context_objects:
        extra["context_objects"] = scenario.build_context_objects()
    try:
        return dataclasses.replace(agent.options, **extra)
    except TypeError as exc:
        raise ScenarioError(f"scenario {spec.name!r}: bad options {spec.options}: {exc}") from None


def _launch(scenario: Scenario, model: Model, mcp: McpParts) -> RunResult:
    spec = scenario.spec
    agent = scenario.build_agent()
    strategies = [
        *(agent.strategies if agent else ()),
        *mcp.strategies,
        *scenario.build_strategies(),
    ]
    tools = [*(agent.tools if agent else ()), *scenario.build_tools(), *mcp.tools]
    own_prompt = agent is None or spec.prompt is not None or spec.messages is not None
    prompt = scenario.build_prompt() if own_prompt or agent is None else agent.prompt
    system = spec.system if spec.system is not None or agent is None else agent.system
    # sectioned prompts go through the outer loop that restarts for static-tool models
    sections = any(isinstance(s, SectionDisclosure) for s in strategies)
    return (run_with_sections if sections else run)(
        model,
        prompt,
        tools=tools,
        strategies=strategies,
        system=system if isinstance(prompt, str) else None,
        options=_run_options(scenario, agent),
        observers=agent.observers if agent else (),
        state=agent.state if agent else None,
    )


def run_scenario(scenario: Scenario) -> ScenarioOutcome:
    """Run ``scenario`` with fresh tools, strategies and model; compare with ``expect``."""
    if scenario.spec.wire is not None:  # an agent on another framework, on the wire
        from harness.scenarios._wire_run import run_wire_scenario

        return run_wire_scenario(scenario)
    if has_sessions(scenario.spec):  # turns, sessions, continuation, tool_choice schedules
        from harness.scenarios._session_run import run_sessions

        return run_sessions(scenario)
    spec = scenario.spec
    expect = spec.expect
    model = scenario.build_model()
    result, error, trace = _ended(scenario, model)
    rows = timeline_rows(trace) if trace is not None else []
    hidden: list[str] = []

    def secrets() -> list[str]:
        """The run's preset and context values (the agent is built again only if asked)."""
        if not hidden:
            hidden.extend(str(v) for v in spec.context.values())
            try:
                agent = scenario.build_agent()
                hidden.extend(ContextObjects(scenario.build_context_objects()).secret_texts())
            except HarnessError:  # a broken agent is reported on its own
                agent = None
            hidden.extend(agent.secret_values() if agent is not None else ())
        return hidden

    def outcome(problem: str | None, divergence: Divergence | None = None) -> ScenarioOutcome:
        return ScenarioOutcome(
            scenario=scenario,
            passed=problem is None,
            rows=rows,
            problem=problem if problem is None else scrub_message(problem, secrets()),
            divergence=divergence,
            result=result,
            error=error,
            trace=trace,
            model_requests=len(getattr(model, "requests", None) or rows),
            notes=[str(n) for n in _state(result, error).get(NOTES, ())],
        )

    if error is not None and (expect.error is None or not _error_name_matches(error, expect.error)):
        return outcome(f"unexpected error {type(error).__name__}: {error}")
    if error is None and expect.error is not None:
        return outcome(f"expected error {expect.error}, but the run finished")
    if expect.timeline is not None:
        divergence = check_timeline(expect.timeline, rows)
        if divergence is not None:
            return outcome(f"first divergence at {divergence}", divergence)
    if result is not None:
        problem = _check_output(expect.output, expect.output_contains, result.output)
        if problem:
            return outcome(problem)
    if (
        expect.user_outputs is not None
        and result is not None
        and result.user_outputs != expect.user_outputs
    ):
        return outcome(
            f"expected user outputs {expect.user_outputs!r}, got {result.user_outputs!r}"
        )
    if expect.completions is not None and trace is not None:
        problem = _check_completions(expect.completions, trace)
        if problem:
            return outcome(problem)
    if expect.restarts is not None and trace is not None and trace.restarts != expect.restarts:
        return outcome(f"expected {expect.restarts} restarts, got {trace.restarts}")
    if expect.properties:
        run_view = AgentRun.from_result(result) if result is not None else None
        if run_view is None and error is not None:
            run_view = AgentRun.from_error(error)
        if run_view is not None:
            try:
                failure = check_properties(run_view, scenario.build_properties(), hidden=secrets())
            except UsageError as exc:
                return outcome(str(exc))
            if failure is not None:
                return outcome(f"property failed: {failure}")
    if expect.invariants and trace is not None:
        agent = scenario.build_agent()
        messages = result.messages if result is not None else getattr(error, "messages", [])
        violations = check_invariants(
            trace,
            list(messages or []),
            error=error,
            max_iterations=_run_options(scenario, agent).max_iterations,
            secrets=secrets(),
        )
        if violations:
            return outcome("invariants violated:\n" + format_violations(violations))
    return outcome(None)


def _ended(
    scenario: Scenario, model: Model
) -> tuple[RunResult | None, BaseException | None, Trace | None]:
    """Run the scenario once: its result, or the error it ended on, and the trace either way."""
    mcp = None
    try:
        mcp = scenario.build_mcp()
        result = _launch(scenario, model, mcp)
        return result, None, result.trace
    except HarnessError as exc:
        return None, exc, exc.trace if isinstance(exc.trace, Trace) else None
    except Exception as exc:  # untyped: judged like any other ending (an invariant flags it)
        found = getattr(exc, "harness_trace", None)
        return None, exc, found if isinstance(found, Trace) else None
    finally:
        if mcp is not None:
            mcp.close()


def _state(result: RunResult | None, error: BaseException | None) -> dict[str, Any]:
    """The blackboard the run ended with (the error carries it when the run failed)."""
    state = result.state if result is not None else getattr(error, "state", None)
    return state if isinstance(state, dict) else {}


def _check_completions(expected: list[CompletionExpect], trace: Trace) -> str | None:
    actual = [(r.name, r.status, r.reason) for r in trace.completions]
    wanted = [(e.tool, e.status, e.reason) for e in expected]
    if len(actual) == len(wanted) and all(
        a[:2] == w[:2] and (w[2] is None or a[2] == w[2])
        for a, w in zip(actual, wanted, strict=True)
    ):
        return None
    shown = [f"{n} {s}" + (f" ({r})" if r else "") for n, s, r in actual]
    return (
        f"expected completions {[e.model_dump(exclude_none=True) for e in expected]}, got {shown}"
    )


def _check_output(expected: Any, contains: str | None, actual: Any) -> str | None:
    if hasattr(actual, "model_dump"):
        actual = actual.model_dump(mode="json")
    if expected is not None and actual != expected:
        return f"expected output {expected!r}, got {actual!r}"
    if contains is not None and contains not in str(actual):
        return f"expected output containing {contains!r}, got {actual!r}"
    return None
