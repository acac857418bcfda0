"""Usage, cost and budget tools fed by the loop's per-model usage; user-supplied prices."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import ScriptedModel, UsageError, call, reply, run
from harness.injection import Budget, ModelPrice, UsageIntrospection, cost_report
from harness.injection._usage_tools import price_for, tokens_used
from harness.loop import Usage

PRICES = {"lead": ModelPrice(input=2.0, output=8.0), "mini-*": {"input": 0.5, "output": 1.0}}


def _model(*steps: Any) -> ScriptedModel:
    return ScriptedModel(list(steps), name="lead")


def _u(i: int, o: int) -> dict[str, int]:
    return {"input_tokens": i, "output_tokens": o}


def test_model_price_costs_cached_tokens_at_their_own_price() -> None:
    price = ModelPrice(input=2.0, output=8.0, cache_read=0.5, cache_write=2.5)
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=500_000,
        cache_read_tokens=400_000,
        cache_write_tokens=100_000,
    )
    assert price.cost(usage) == pytest.approx(0.5 * 2.0 + 0.4 * 0.5 + 0.1 * 2.5 + 0.5 * 8.0)
    plain = ModelPrice(input=2.0, output=8.0)  # cache prices default to the input price
    assert plain.cost(usage) == pytest.approx(1.0 * 2.0 + 0.5 * 8.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"input": -1, "output": 1}, "ModelPrice input must be a number >= 0"),
        ({"input": 1, "output": "2"}, "ModelPrice output must be a number >= 0"),
        ({"input": 1, "output": 1, "cache_read": True}, "ModelPrice cache_read must be"),
    ],
)
def test_bad_prices_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        ModelPrice(**kwargs)


def test_price_tables_take_exact_names_before_globs_and_mappings() -> None:
    table = {"gpt-*": ModelPrice(input=1, output=1), "gpt-4o": ModelPrice(input=5, output=5)}
    assert price_for("gpt-4o", table) is table["gpt-4o"]
    assert price_for("gpt-4o-mini", table) is table["gpt-*"]
    assert price_for("claude", table) is None
    report = cost_report(
        {"mini-1": Usage(input_tokens=2_000_000), "other": Usage(output_tokens=5)}, PRICES
    )
    assert report.by_model == {"mini-1": pytest.approx(1.0)} and report.unpriced == ("other",)
    assert report.total == pytest.approx(1.0) and report.currency == "USD"


@pytest.mark.parametrize(
    ("prices", "message"),
    [
        (["gpt"], "prices must be a mapping of model names"),
        ({"": ModelPrice(input=1, output=1)}, "a model name must be a non-empty str"),
        ({"m": {"input": 1, "outptu": 2}}, r"prices\['m'\]: .*use keys input, output"),
        ({"m": 3}, r"prices\['m'\] must be a ModelPrice or a mapping"),
    ],
)
def test_bad_price_tables_are_refused(prices: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        UsageIntrospection(prices=prices)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "Budget needs max_tokens=, max_cost=, max_actions= or several"),
        ({"max_tokens": 0}, "max_tokens must be an int >= 1"),
        ({"max_actions": 0}, "max_actions must be an int >= 1, got 0"),
        ({"max_actions": True}, "max_actions must be an int >= 1, got True"),
        ({"max_cost": -1.0}, "max_cost must be a number > 0"),
    ],
)
def test_bad_budgets_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        Budget(**kwargs)


def test_a_cost_budget_needs_prices_and_budget_must_be_a_budget() -> None:
    with pytest.raises(UsageError, match=r"Budget\(max_cost=...\) needs a price table"):
        UsageIntrospection(budget=Budget(max_cost=1.0))
    with pytest.raises(UsageError, match="budget must be a Budget"):
        UsageIntrospection(budget=100)  # type: ignore[arg-type]


def test_tools_report_the_live_usage_of_the_turns_so_far() -> None:
    model = _model(
        call("run_usage", usage=_u(100, 10)),
        call("model_usage", usage=_u(200, 20)),
        call("run_cost", usage=_u(300, 30)),
        call("budget_status", usage=_u(400, 40)),
        reply("done"),
    )
    strategy = UsageIntrospection(prices=PRICES, budget=Budget(max_tokens=1000, max_cost=0.002))
    result = run(model, "go", strategies=[strategy])
    usage, cost, budget = (json.loads(c.content) for c in result.trace.calls[1:])
    assert usage["models"]["lead"]["total_tokens"] == 330  # turns 1 and 2
    assert usage["total"] == {
        "input_tokens": 300,
        "output_tokens": 30,
        "total_tokens": 330,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
    }
    assert cost == {
        "currency": "USD",
        "total": pytest.approx((600 * 2.0 + 60 * 8.0) / 1e6),
        "by_model": {"lead": pytest.approx((600 * 2.0 + 60 * 8.0) / 1e6)},
        "unpriced_models": [],
    }
    spent = (1000 * 2.0 + 100 * 8.0) / 1e6
    assert budget == {
        "max_tokens": 1000,
        "used_tokens": 1100,
        "remaining_tokens": 0,
        "currency": "USD",
        "max_cost": 0.002,
        "cost": pytest.approx(spent),
        "remaining_cost": 0.0,
        "exceeded": True,
    }


def test_an_action_budget_counts_the_iterations_with_the_remaining_capacity() -> None:
    model = _model(call("budget_status"), call("noop"), call("budget_status"), reply("ok"))
    strategy = UsageIntrospection(budget=Budget(max_actions=3), unfold=False)

    def noop() -> str:
        """Do nothing."""
        return "ok"

    result = run(model, "go", tools=[noop], strategies=[strategy])
    first, third = (json.loads(c.content) for c in result.trace.calls[::2])
    assert first == {
        "max_actions": 3,
        "used_actions": 1,
        "remaining_actions": 2,
        "exceeded": False,
    }
    assert third == {"max_actions": 3, "used_actions": 3, "remaining_actions": 0, "exceeded": False}
    over = run(
        _model(call("noop"), call("noop"), call("budget_status"), reply("ok")),
        "go",
        tools=[noop],
        strategies=[UsageIntrospection(budget=Budget(max_actions=2, max_tokens=10), unfold=False)],
    )
    status = json.loads(over.trace.calls[2].content)
    assert (status["used_actions"], status["remaining_actions"]) == (3, 0)
    assert status["exceeded"] is True and status["remaining_tokens"] == 10


def test_without_prices_or_budget_the_tools_say_so() -> None:
    model = _model(call("run_cost"), call("budget_status"), call("model_usage"), reply("ok"))
    result = run(model, "go", strategies=[UsageIntrospection(unfold=False)])
    cost, budget, usage = result.trace.calls
    assert cost.error_kind == "no_prices" and "No price table is configured" in cost.content
    assert budget.error_kind == "no_budget"
    assert not usage.is_error


def test_unpriced_models_are_listed_and_a_budget_within_limits_is_not_exceeded() -> None:
    model = ScriptedModel(
        [call("budget_status", usage=_u(10, 1)), reply("ok")], name="unknown-model"
    )
    strategy = UsageIntrospection(prices=PRICES, budget=Budget(max_cost=1.0), unfold=False)
    status = json.loads(run(model, "go", strategies=[strategy]).trace.calls[0].content)
    assert status["unpriced_models"] == ["unknown-model"]
    assert status["cost"] == 0 and status["exceeded"] is False


def test_the_tools_outside_a_run_with_the_strategy_are_unavailable() -> None:
    strategy = UsageIntrospection(unfold=False)
    result = run(_model(call("model_usage"), reply("ok")), "go", tools=list(strategy.tools))
    assert result.trace.calls[0].error_kind == "unavailable"
    assert "add UsageIntrospection() to the strategies" in result.trace.calls[0].content


def test_tokens_used_falls_back_to_input_plus_output() -> None:
    assert tokens_used(Usage(input_tokens=3, output_tokens=4)) == 7
    assert tokens_used(Usage(input_tokens=3, output_tokens=4, total_tokens=9)) == 9
