"""The subagent scenarios pass with the exact toolsets; shared state, nested traces, usage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.scenarios import ScenarioOutcome, load_scenario, run_scenario

CATALOG = Path(__file__).resolve().parents[2] / "scenarios"
BLACKBOARD = (
    "blackboard_list",
    "blackboard_read",
    "blackboard_last",
    "blackboard_describe",
    "blackboard_count",
)
LEAD = ("researcher", *BLACKBOARD, "run_usage")
USAGE = ("run_usage_context", "model_usage", "run_cost", "budget_status")
BAD = ("broken_researcher", "manager", *BLACKBOARD)

EXPECTED: dict[str, list[tuple[str, ...]]] = {
    "subagents/shared_blackboard": [LEAD] * 4 + [LEAD + USAGE] * 2,
    "subagents/bad_input": [BAD] * 5,
    "subagents/nested_signal": [("support",)],
}


def _run(name: str) -> ScenarioOutcome:
    outcome = run_scenario(load_scenario(CATALOG / f"{name}.yaml"))
    assert outcome.passed, outcome.problem
    assert outcome.trace is not None
    return outcome


def test_every_subagent_scenario_is_pinned() -> None:
    files = {
        p.relative_to(CATALOG).with_suffix("").as_posix()
        for p in (CATALOG / "subagents").glob("*.yaml")
    }
    assert files == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_scenario_offers_exactly_the_expected_tools(name: str) -> None:
    outcome = _run(name)
    assert outcome.trace is not None
    assert [it.offered for it in outcome.trace] == EXPECTED[name]


def test_the_lead_reads_what_the_subagent_left_and_pays_for_both_models() -> None:
    outcome = _run("subagents/shared_blackboard")
    result, trace = outcome.result, outcome.trace
    assert result is not None and trace is not None
    assert result.state["summary"] == "Tool loops call tools until the model can answer."
    assert result.state["sources"] == [
        {"url": "https://example.org/tool-loops", "title": "Tool loops"}
    ]
    handoff, listed, read, _, usage, cost, budget = trace.calls
    assert handoff.value.state_written == ("sources", "summary")
    assert [e["key"] for e in json.loads(listed.content)] == ["sources", "summary"]
    assert read.content == "Tool loops call tools until the model can answer."
    (child,) = trace.children
    assert handoff.children == (child,)
    assert [c.name for c in child.calls] == ["record_source", "write_summary"]
    assert trace.usage["research-mini"].total_tokens == 535
    assert json.loads(usage.content)["models"]["research-mini"]["total_tokens"] == 535
    priced = json.loads(cost.content)
    assert priced["total"] == pytest.approx((300 * 2.5 + 15 * 10.0 + 480 * 0.15 + 55 * 0.6) / 1e6)
    assert json.loads(budget.content)["used_tokens"] == 315 + 535


def test_the_subagents_dynamic_system_prompt_reflects_the_lead_at_handoff() -> None:
    from fixtures.subagents import research_system
    from harness import CallContext

    context = CallContext(state={"plan": 1, "harness.x": 2}, iteration=3)
    assert research_system(context) == (
        "You research for the lead agent (handoff at its iteration 3). Already on the "
        "blackboard: plan."
    )


def test_failures_stay_readable_and_recorded() -> None:
    outcome = _run("subagents/bad_input")
    result, trace = outcome.result, outcome.trace
    assert result is not None and trace is not None
    broken, missing, found, manager = trace.calls
    assert broken.error_kind == "agent_error" and "RateLimited" in broken.content
    assert [c.name for c in broken.children[0].calls] == ["record_source"]
    assert missing.error_kind == "unknown_key" and "Did you mean 'sources'?" in missing.content
    assert json.loads(found.content) == [{"url": "https://example.org/a", "title": "A"}]
    (manager_run,) = manager.children
    assert manager_run.calls[0].error_kind == "max_depth"
    assert manager.content == "Did it myself."


def test_a_signal_from_a_subagent_ends_the_lead_run_with_the_nested_trace_kept() -> None:
    outcome = _run("subagents/nested_signal")
    trace = outcome.trace
    assert trace is not None and type(outcome.error).__name__ == "Escalate"
    (record,) = trace.calls
    assert record.error_kind == "signal" and record.children == tuple(trace.children)
    assert [c.name for c in trace.children[0].calls] == ["escalate"]


def test_a_wrong_handoffs_expectation_is_a_divergence_naming_it() -> None:
    from harness.scenarios import TimelineStep, check_timeline, timeline_rows

    trace = _run("subagents/shared_blackboard").trace
    assert trace is not None
    rows = timeline_rows(trace)
    wrong = [TimelineStep(handoffs=[]), *[TimelineStep() for _ in rows[1:]]]
    divergence = check_timeline(wrong, rows)
    assert divergence is not None and divergence.iteration == 1
    assert (divergence.expected, divergence.actual) == ("handoffs=[]", "handoffs=['researcher']")
    assert check_timeline([TimelineStep(handoffs=["research*"]), *wrong[1:]], rows) is None
