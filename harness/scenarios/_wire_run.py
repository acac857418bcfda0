"""Running a scenario whose agent is on another framework (``wire:``), on the wire.

The scenario's ``agent`` is a wire factory; the scripted model is served on a loopback
endpoint in the ``wire`` format, the factory's ``run`` is called with its prompt, and
the run (a ``WireRun``: the wire trace, output, state, error) is judged by the file's
``expect``: ``properties`` (which judge the run's error too), ``error`` (the class name
the run must raise), ``output``/``output_contains`` and the ``timeline`` of the wire
trace. Without ``properties`` or ``error``, a run that raised fails the scenario.
"""

from __future__ import annotations

from harness._errors import HarnessError, ScenarioError, ScriptError, UsageError
from harness._validation import check_choice
from harness.scenarios._loader import Scenario, resolve_import
from harness.scenarios._properties import check_properties
from harness.scenarios._runner import ScenarioOutcome, _check_output, _error_name_matches
from harness.scenarios._timeline import check_timeline, timeline_rows
from harness.scenarios._wire_agent import WIRES, WireEndpoint, WireOutcome, check_wire_factory

__all__ = ["run_wire_scenario"]

_WIRE_FIELDS = frozenset({"name", "description", "agent", "wire", "model", "expect", "tags"})
"""What a scenario on the wire may set: the agent brings its own prompt, tools, options
and history."""
_WIRE_EXPECT = frozenset({"properties", "error", "output", "output_contains", "timeline"})


def _check_spec(scenario: Scenario, where: str) -> None:
    spec = scenario.spec
    try:
        check_choice(spec.wire, WIRES, name="wire", error=ScenarioError)
    except ScenarioError as exc:
        raise ScenarioError(f"{where}{exc}") from None
    if spec.agent is None:
        raise ScenarioError(
            f"{where}wire: {spec.wire} runs an agent on another framework: name its factory "
            "with agent: module:factory (a function (base_url, api_key) -> {run, prompt, state})"
        )
    extra = sorted(f for f in spec.model_fields_set - _WIRE_FIELDS)
    if extra:
        raise ScenarioError(
            f"{where}{', '.join(extra)} cannot be given with wire: the agent on the wire "
            f"brings its own prompt, tools and options (valid: {', '.join(sorted(_WIRE_FIELDS))})"
        )
    unsupported = sorted(spec.expect.model_fields_set - _WIRE_EXPECT)
    if unsupported:
        raise ScenarioError(
            f"{where}expect: {', '.join(unsupported)} cannot be checked on the wire (valid: "
            f"{', '.join(sorted(_WIRE_EXPECT))})"
        )


def _run(scenario: Scenario, where: str) -> WireOutcome:
    spec = scenario.spec
    assert spec.agent is not None and spec.wire is not None
    factory = resolve_import(spec.agent, where=where, root=scenario.root)
    try:
        check_wire_factory(factory, spec.agent)
    except UsageError as exc:
        raise ScenarioError(f"{where}{exc}") from None
    model = scenario.build_model()
    with WireEndpoint(spec.wire) as endpoint:
        try:
            agent = endpoint.build(factory, name=spec.agent)
        except UsageError as exc:
            raise ScenarioError(f"{where}{exc}") from None
        outcome = endpoint.run(agent, model)
    problem = outcome.problem(spec.wire)
    if problem is not None:
        raise ScenarioError(f"{where}{problem}")
    return outcome


def run_wire_scenario(scenario: Scenario) -> ScenarioOutcome:
    """Run ``scenario`` (its ``wire`` and ``agent`` set) and judge it (see the module)."""
    where = f"scenario {scenario.name!r}: "
    _check_spec(scenario, where)
    outcome = _run(scenario, where)
    run, expect = outcome.run, scenario.spec.expect
    rows = timeline_rows(run.trace)

    def verdict(problem: str | None) -> ScenarioOutcome:
        return ScenarioOutcome(
            scenario=scenario,
            passed=problem is None,
            rows=rows,
            problem=problem,
            result=run,
            error=run.error,
            trace=run.trace,
            model_requests=outcome.answered,
        )

    failure = outcome.failure
    if failure is not None:  # the script did not fit the agent's requests
        detail = str(failure) if isinstance(failure, (ScriptError, HarnessError)) else repr(failure)
        return verdict(f"the scripted model failed: {detail}")
    error = run.error
    if error is not None and expect.error is None and not expect.properties:
        return verdict(f"unexpected error {type(error).__name__}: {error}")
    if expect.error is not None:
        if error is None:
            return verdict(f"expected error {expect.error}, but the run finished")
        if not _error_name_matches(error, expect.error):
            return verdict(f"unexpected error {type(error).__name__}: {error}")
    if expect.timeline is not None:
        divergence = check_timeline(expect.timeline, rows)
        if divergence is not None:
            return ScenarioOutcome(
                scenario=scenario,
                passed=False,
                rows=rows,
                problem=f"first divergence at {divergence}",
                divergence=divergence,
                result=run,
                error=error,
                trace=run.trace,
                model_requests=outcome.answered,
            )
    if error is None:
        problem = _check_output(expect.output, expect.output_contains, run.output)
        if problem:
            return verdict(problem)
    if expect.properties:
        try:
            found = check_properties(run, scenario.build_properties())
        except UsageError as exc:
            return verdict(str(exc))
        if found is not None:
            return verdict(f"property failed: {found}")
    return verdict(None)
