"""Whole-timeline expectations, and the failure table."""

from __future__ import annotations

from typing import Any

import pytest

from harness import UsageError
from harness.assertions import expect_timeline, render_table, timeline
from harness.loop import Trace
from harness.scenarios import TimelineRow, timeline_rows

SEED_STEPS = [
    "call search_customer",
    "injected customer_c123_*",
    "offered gains customer_*",
    "call customer_*_get_average_spend",
    "answer",
]


def test_the_seed_flow_matches_the_compact_steps(seed_trace: Trace) -> None:
    assert expect_timeline(seed_trace, SEED_STEPS)
    assert seed_trace == timeline(SEED_STEPS)
    assert expect_timeline(
        seed_trace, ["offered 1", "offered exactly search_customer", *SEED_STEPS]
    )
    assert expect_timeline(seed_trace, [*SEED_STEPS[:-1], "answer spends on average"])


def test_all_step_kinds_on_the_shop_trace(shop_trace: Trace) -> None:
    steps = [
        "offered includes search, help",
        "offered excludes cart_*",
        "call search",
        "injected cart_add, cart_show",
        "offered gains cart_*",
        "call cart_add",
        "error cart_show",
        "removed cart_add",
        "offered loses cart_add",
        "offered 3",
        "call cart_show",
        "answer 2 red shoes",
    ]
    assert expect_timeline(shop_trace, steps)


@pytest.mark.parametrize(
    ("steps", "iteration", "problem"),
    [
        (["call cart_add"], 1, "expected 'call cart_add', got call 'search' at iteration 1"),
        (
            ["call search", "call cart_add", "offered 4"],
            2,
            "expected 'offered 4' on a new request, but the turn at iteration 2 made another "
            "call 'cart_show'",
        ),
        (["call search", "error cart_add"], 2, "expected 'error cart_add', got call 'cart_add'"),
        (["call search", "offered loses search"], 2, "lost []"),
        (["call search", "offered includes pay"], 2, "expected 'offered includes pay'"),
        (["call search", "offered excludes cart_add"], 2, "offered ['cart_add']"),
        (["call search", "offered exactly search"], 2, "missing [], unexpected"),
        (["call search", "offered 9"], 2, "4 offered"),
        (["call search", "injected pay_*"], 1, "injected here: ['cart_add', 'cart_show']"),
        (["call search", "answer"], 2, "expected 'answer', got calls=['cart_add', 'cart_show']"),
        (["call search"], 2, "the run made more calls than listed: next was 'cart_add'"),
    ],
)
def test_divergences(shop_trace: Trace, steps: list[str], iteration: int, problem: str) -> None:
    verdict = expect_timeline(shop_trace, steps)
    assert verdict.passed is False  # bool() would raise the table under the plugin
    assert verdict.failure is not None
    assert problem in verdict.failure.problem
    assert verdict.failure.iteration == iteration


def test_steps_past_the_end(seed_trace: Trace) -> None:
    too_many = expect_timeline(seed_trace, [*SEED_STEPS[:-1], "call another"])
    assert "there are no more calls (the final answer" in str(too_many.problem)
    assert too_many.failure is not None and too_many.failure.iteration == 3
    after_answer = expect_timeline(
        seed_trace, ["call search_customer", "call customer_*", "offered 4", "offered 4"]
    )
    assert after_answer  # both 'offered' steps look at the final request
    past = expect_timeline(Trace(), ["offered 1"])
    assert "the run ended after 0 iterations" in str(past.problem)
    no_calls = expect_timeline(Trace(), ["call x"])
    assert "no more calls (the run ended)" in str(no_calls.problem)


def test_per_iteration_steps_reuse_check_timeline(seed_trace: Trace) -> None:
    steps: list[dict[str, Any]] = [
        {"offered": 1, "calls": ["search_customer"], "injected": ["customer_*"] * 3},
        {"calls": ["customer_c123_get_average_spend"]},
        {"answer": True},
    ]
    assert expect_timeline(seed_trace, steps)
    bad = expect_timeline(seed_trace, [steps[0], {"calls": ["nope"]}, steps[2]])
    assert bad.failure is not None and bad.failure.iteration == 2
    assert bad.failure.expected == "calls=['nope']"
    assert timeline(steps).description == "timeline of 3 iterations"
    with pytest.raises(UsageError, match="bad per-iteration timeline step"):
        timeline([{"offered": "many"}])


@pytest.mark.parametrize(
    "steps",
    [["call"], ["offered"], ["offered sometimes x"], ["fly away"], [3], ["answer", "call x"]],
)
def test_bad_steps_are_usage_errors(steps: list[object]) -> None:
    with pytest.raises(UsageError, match="step"):
        timeline(steps)  # type: ignore[arg-type]


def test_timeline_needs_a_list() -> None:
    with pytest.raises(UsageError, match="list of steps"):
        timeline("call x")


def test_explain_marks_the_divergence(seed_trace: Trace) -> None:
    verdict = expect_timeline(
        seed_trace, ["call search_customer", "offered gains order_*", "call x", "answer"]
    )
    lines = verdict.explain().splitlines()
    assert lines[0].startswith("timeline [")
    assert lines[1].split() == ["iter", "offered", "calls", "+injected/-removed"]
    marked = [line for line in lines if line.startswith(">")]
    assert len(marked) == 1
    assert marked[0].split()[:4] == [">", "2", "4", "customer_c123_get_average_spend"]
    assert marked[0].endswith("<- expected: offered gains order_*")
    assert "+customer_c123_get_average_spend" in lines[2]


def test_render_table_end_row_errors_and_window(shop_trace: Trace) -> None:
    rows = timeline_rows(shop_trace)
    lines = render_table(rows, mark=5, expected="call pay")
    assert lines[-1].startswith("> (end)") and lines[-1].endswith("<- expected: call pay")
    assert "cart_add, cart_show!" in lines[2]
    assert "-cart_add" in lines[2]
    assert "(answer)" in lines[4]
    windowed = render_table(rows, mark=4, expected="x", window=1)
    assert windowed[1] == "  ..."
    assert len(windowed) == 4
    many = render_table(timeline_rows(shop_trace)[:1], mark=None)
    assert len(many) == 2


def test_render_table_marks_discovered_and_deferred_tools() -> None:
    row = TimelineRow(
        iteration=2,
        offered=2,
        offered_names=("tool_search", "get_weather"),
        calls=("get_weather",),
        errors=(),
        injected=("cart_add",),
        removed=(),
        answer=None,
        final=False,
        deferred=("get_forecast", "get_time"),
        discovered=("get_weather",),
        searches=1,
    )
    line = render_table([row])[1]
    assert line.split()[-4:] == ["+cart_add", "found:get_weather", "?get_forecast", "?get_time"]
