"""Judging runs: timelines, outputs, expected errors and the first divergence."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenarios import (
    TimelineStep,
    check_timeline,
    format_timeline,
    load_scenario,
    run_scenario,
    timeline_rows,
)

BASE = """
name: judged
prompt: hi
tools: [fixtures.customers:search_customer]
strategies: [entity_discovery]
model:
  lenient: true
  steps:
    - {call: search_customer, args: {name: John Smith}}
    - {call: customer_c123_get_average_spend}
    - {reply: done}
"""


@pytest.fixture(autouse=True)
def _project_root_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2]))


def outcome_for(tmp_path: Path, expect: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "judged.yaml"
    path.write_text(BASE + expect, encoding="utf-8")
    return run_scenario(load_scenario(path))


def test_matching_timeline_passes(tmp_path: Path) -> None:
    outcome = outcome_for(
        tmp_path,
        """
expect:
  output: done
  timeline:
    - offered: 1
      offered_includes: [search_*]
      offered_excludes: [customer_*]
      calls: [search_customer]
    - {offered: 4, calls: [customer_*_get_average_spend], errors: [], injected: [], removed: []}
    - {answer: done}
""",
    )
    assert outcome.passed, outcome.problem
    assert format_timeline(outcome.rows).splitlines()[-1] == "#3 offered=4 answer='done'"


@pytest.mark.parametrize(
    ("timeline", "iteration", "expected"),
    [
        ("- {offered: 2}", 1, "offered=2"),
        ("- {offered_includes: [zzz]}", 1, "'zzz' offered"),
        ("- {offered_excludes: [search_*]}", 1, "'search_*' not offered"),
        ("- {calls: [other]}", 1, "calls=['other']"),
        ("- {errors: [search_customer]}", 1, "errors=['search_customer']"),
        ("- {injected: []}", 1, "injected=[]"),
        ("- {removed: [x]}", 1, "removed=['x'] (nothing matches ['x'])"),
        (
            "- {injected: [customer_c123_*, order_*]}",
            1,
            "injected=['customer_c123_*', 'order_*'] (nothing matches ['order_*'])",
        ),
        ("- {answer: true}", 1, "a final answer"),
        ("- {}\n    - {}\n    - {answer: nope}", 3, "answer='nope'"),
        ("- {}", 2, "the run to end"),
        ("- {}\n    - {}\n    - {}\n    - {calls: [x]}", 4, "calls=['x']"),
    ],
)
def test_first_divergence_is_reported(
    tmp_path: Path, timeline: str, iteration: int, expected: str
) -> None:
    outcome = outcome_for(tmp_path, f"expect:\n  timeline:\n    {timeline}\n")
    assert not outcome.passed
    assert outcome.divergence is not None
    assert outcome.divergence.iteration == iteration
    assert outcome.divergence.expected == expected
    assert f"iteration {iteration}" in (outcome.problem or "")


@pytest.mark.parametrize(
    ("globs", "passes"),
    [
        (["customer_c123_*"], True),  # one glob covers the three tools injected
        (["customer_c123_get_contact", "customer_c123_list_orders"], True),  # any order
        (["customer_*_get_average_spend", "customer_c123_*"], True),
        (["customer_c123_*", "customer_c456_*"], False),  # c456's tools never came
        ([], False),  # [] means nothing was injected
    ],
)
def test_timeline_injected_means_what_the_injected_assertion_means(
    tmp_path: Path, globs: list[str], passes: bool
) -> None:
    from harness.assertions import injected

    outcome = outcome_for(tmp_path, f"expect:\n  timeline:\n    - {{injected: {globs}}}\n")
    assert outcome.divergence is not None  # the timeline lists one request of three
    assert (outcome.divergence.iteration == 2) is passes, outcome.divergence
    if globs:
        assert (outcome.trace == injected(*globs, at=1)) is passes


def test_output_checks(tmp_path: Path) -> None:
    assert "expected output 'other'" in (
        outcome_for(tmp_path, "expect: {output: other}\n").problem or ""
    )
    assert outcome_for(tmp_path, "expect: {output_contains: don}\n").passed
    problem = outcome_for(tmp_path, "expect: {output_contains: xyz}\n").problem
    assert problem is not None and "containing 'xyz'" in problem


def test_expected_and_unexpected_errors(tmp_path: Path) -> None:
    raising = (
        BASE.replace("lenient: true", "lenient: true\n  steps_unused: 1").replace(
            "  steps_unused: 1\n", ""
        )
        + "options: {max_iterations: 1}\n"
    )
    path = tmp_path / "raising.yaml"
    path.write_text(raising + "expect: {error: MaxIterationsExceeded}\n", encoding="utf-8")
    outcome = run_scenario(load_scenario(path))
    assert outcome.passed, outcome.problem
    assert outcome.rows and outcome.rows[0].calls == ("search_customer",)
    path.write_text(raising + "expect: {error: RunLimitError}\n", encoding="utf-8")
    assert run_scenario(load_scenario(path)).passed  # base classes match too
    path.write_text(raising, encoding="utf-8")
    outcome = run_scenario(load_scenario(path))
    assert not outcome.passed and "unexpected error MaxIterationsExceeded" in (
        outcome.problem or ""
    )
    assert "expected error ToolNotFound" in (
        outcome_for(tmp_path, "expect: {error: ToolNotFound}\n").problem or ""
    )


def test_restart_expectation(tmp_path: Path) -> None:
    assert outcome_for(tmp_path, "expect: {restarts: 0}\n").passed
    assert "expected 1 restarts, got 0" in (
        outcome_for(tmp_path, "expect: {restarts: 1}\n").problem or ""
    )


def test_check_timeline_with_too_few_rows() -> None:
    divergence = check_timeline([TimelineStep(calls=["a"])], [])
    assert divergence is not None
    assert divergence.actual == "the run ended (no such iteration)"
    assert "calls=['a']" in str(divergence)


def test_rows_render_errors_and_removals(tmp_path: Path) -> None:
    outcome = outcome_for(tmp_path, "")
    rows = timeline_rows(outcome.trace)  # type: ignore[arg-type]
    assert rows[0].render().startswith("#1 offered=1 calls=search_customer +customer_c123_")
