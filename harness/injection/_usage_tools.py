"""Model usage, cost and budget tools the model can call, fed by the loop's own counts.

The loop counts token usage per model (``Trace.usage``, nested runs included once they
returned: see harness/loop/_usage.py). ``UsageIntrospection`` offers, behind one
unfolding facade ``run_usage`` (or directly with ``unfold=False``):

- ``model_usage``: tokens per model and in total;
- ``run_cost``: the cost so far, from a **user-supplied price table** (no prices are
  built in and nothing is looked up on the network): ``{model name or glob:
  ModelPrice(input=..., output=...)}`` in currency units per million tokens;
- ``budget_status``: the ``Budget`` (tokens, cost and/or actions) used and remaining.

Each run keeps its own live usage (a subagent sharing the state reports its own run).
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Mapping
from typing import Any

from harness._errors import UsageError
from harness._validation import is_int, is_number
from harness.injection._facade import facade
from harness.loop import InjectionContext, InjectionStrategy, ToolsetChange, Usage
from harness.tools import CallContext, Tool, ToolResult

__all__ = ["USAGE_KEY", "Budget", "ModelPrice", "UsageCost", "UsageIntrospection", "cost_report"]

USAGE_KEY = "harness.usage"
"""State key of ``{run_id: live per-model usage}`` (hidden from the blackboard tools)."""
_PER = 1_000_000


@dataclasses.dataclass(frozen=True, kw_only=True)
class ModelPrice:
    """What one model costs, in currency units per million tokens."""

    input: float
    """Per million input tokens not read from or written to the prompt cache."""
    output: float
    """Per million output tokens."""
    cache_read: float | None = None
    """Per million input tokens read from the cache (``None``: the ``input`` price)."""
    cache_write: float | None = None
    """Per million input tokens written to the cache (``None``: the ``input`` price)."""

    def __post_init__(self) -> None:
        for name in ("input", "output", "cache_read", "cache_write"):
            value = getattr(self, name)
            if value is None and name.startswith("cache"):
                continue
            if not (is_number(value) and value >= 0):
                raise UsageError(
                    f"ModelPrice {name} must be a number >= 0 (per million tokens), got {value!r}"
                )

    def cost(self, usage: Usage) -> float:
        """The cost of ``usage`` at this price."""
        read = usage.cache_read_tokens
        write = usage.cache_write_tokens
        plain = max(0, usage.input_tokens - read - write)
        read_price = self.input if self.cache_read is None else self.cache_read
        write_price = self.input if self.cache_write is None else self.cache_write
        return (
            plain * self.input
            + read * read_price
            + write * write_price
            + usage.output_tokens * self.output
        ) / _PER


def _price_table(prices: Mapping[str, Any] | None) -> dict[str, ModelPrice]:
    if prices is None:
        return {}
    if not isinstance(prices, Mapping):
        raise UsageError(
            f"prices must be a mapping of model names (or globs) to ModelPrice, got {prices!r}"
        )
    table = {}
    for name, price in prices.items():
        if not isinstance(name, str) or not name:
            raise UsageError(f"prices: a model name must be a non-empty str, got {name!r}")
        if isinstance(price, Mapping):
            try:
                price = ModelPrice(**price)
            except TypeError as exc:
                raise UsageError(
                    f"prices[{name!r}]: {exc}; use keys input, output, cache_read, cache_write"
                ) from None
        if not isinstance(price, ModelPrice):
            raise UsageError(
                f"prices[{name!r}] must be a ModelPrice or a mapping like "
                f"{{'input': 2.5, 'output': 10.0}}, got {price!r}"
            )
        table[name] = price
    return table


def price_for(model: str, prices: Mapping[str, ModelPrice]) -> ModelPrice | None:
    """The price of ``model``: its exact entry, else the first glob entry matching it."""
    if model in prices:
        return prices[model]
    for pattern, price in prices.items():
        if fnmatch.fnmatchcase(model, pattern):
            return price
    return None


@dataclasses.dataclass(frozen=True, kw_only=True)
class UsageCost:
    """The cost of some usage at a price table."""

    total: float
    """The cost of every priced model."""
    by_model: dict[str, float]
    """The cost per priced model."""
    unpriced: tuple[str, ...] = ()
    """Models with usage but no price (not in ``total``)."""
    currency: str = "USD"


def cost_report(
    usage: Mapping[str, Usage], prices: Mapping[str, Any], *, currency: str = "USD"
) -> UsageCost:
    """The cost of per-model ``usage`` (e.g. ``result.trace.usage``) at ``prices``."""
    table = _price_table(prices)
    by_model: dict[str, float] = {}
    unpriced = []
    for model, used in usage.items():
        price = price_for(model, table)
        if price is None:
            unpriced.append(model)
        else:
            by_model[model] = price.cost(used)
    return UsageCost(
        total=sum(by_model.values()),
        by_model=by_model,
        unpriced=tuple(unpriced),
        currency=currency,
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class Budget:
    """A spending limit the model can check (``budget_status``); the loop does not enforce
    it. ``max_cost`` needs a price table."""

    max_tokens: int | None = None
    """Tokens (input and output, every model) the run may use."""
    max_cost: float | None = None
    """What the run may cost, in the price table's currency."""
    max_actions: int | None = None
    """Actions the run may take: its iterations (model requests), the one in progress
    included (seed 003's process budget)."""

    def __post_init__(self) -> None:
        if self.max_tokens is None and self.max_cost is None and self.max_actions is None:
            raise UsageError("Budget needs max_tokens=, max_cost=, max_actions= or several")
        if self.max_tokens is not None and not is_int(self.max_tokens, minimum=1):
            raise UsageError(f"Budget max_tokens must be an int >= 1, got {self.max_tokens!r}")
        if self.max_actions is not None and not is_int(self.max_actions, minimum=1):
            raise UsageError(f"Budget max_actions must be an int >= 1, got {self.max_actions!r}")
        if self.max_cost is not None and not (is_number(self.max_cost) and self.max_cost > 0):
            raise UsageError(f"Budget max_cost must be a number > 0, got {self.max_cost!r}")


def total_usage(usage: Mapping[str, Usage]) -> Usage:
    """The sum of per-model usage."""
    return sum(usage.values(), Usage())


def tokens_used(usage: Usage) -> int:
    """Total tokens of ``usage`` (input + output when the provider gave no total)."""
    return max(usage.total_tokens, usage.input_tokens + usage.output_tokens)


def _usage_dict(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": tokens_used(usage),
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
    }


def _live(context: CallContext) -> Mapping[str, Usage] | ToolResult:
    runs = context.state.get(USAGE_KEY)
    usage = runs.get(context.run_id) if isinstance(runs, dict) else None
    if isinstance(usage, Mapping):
        return usage
    return ToolResult.error(
        "Usage introspection is not enabled for this run (add UsageIntrospection() to the "
        "strategies).",
        kind="unavailable",
    )


class UsageIntrospection(InjectionStrategy):
    """Offer ``model_usage``, ``run_cost`` and ``budget_status`` (behind a facade unless
    ``unfold=False``), fed by the run's live per-model usage."""

    @property
    def name(self) -> str:
        """``usage`` in the trace (docs/pytest-plugin.md#strategy-names)."""
        return "usage"

    def __init__(
        self,
        *,
        prices: Mapping[str, ModelPrice | Mapping[str, float]] | None = None,
        budget: Budget | None = None,
        currency: str = "USD",
        unfold: bool = True,
        facade_name: str = "run_usage",
    ) -> None:
        self.prices = _price_table(prices)
        if budget is not None and not isinstance(budget, Budget):
            raise UsageError(f"budget must be a Budget, got {budget!r}")
        if budget is not None and budget.max_cost is not None and not self.prices:
            raise UsageError(
                "Budget(max_cost=...) needs a price table: pass prices={model: ModelPrice(...)}"
            )
        self.budget = budget
        self.currency = currency
        self.tools: tuple[Tool, ...] = self._make_tools()
        self.offer: tuple[Tool, ...] = (
            (
                facade(
                    facade_name,
                    "Check this run's token usage per model, its cost and its budget.",
                    self.tools,
                ),
            )
            if unfold
            else self.tools
        )

    def before_turn(self, context: InjectionContext) -> ToolsetChange | None:
        runs = context.state.get(USAGE_KEY)
        if not isinstance(runs, dict):
            runs = context.state[USAGE_KEY] = {}
        first = context.run_id not in runs
        runs[context.run_id] = context.usage  # the live mapping: always current
        if not first:
            return None
        add = tuple(t for t in self.offer if t.name not in context.offered)
        return ToolsetChange(add=add, reason="usage introspection tools") if add else None

    def report(self, usage: Mapping[str, Usage]) -> UsageCost | None:
        """The cost of ``usage`` at this strategy's prices (``None`` without prices)."""
        if not self.prices:
            return None
        return cost_report(usage, self.prices, currency=self.currency)

    def _make_tools(self) -> tuple[Tool, ...]:
        def model_usage(context: CallContext) -> ToolResult | dict[str, Any]:
            """Tokens used so far in this run, per model and in total."""
            usage = _live(context)
            if isinstance(usage, ToolResult):
                return usage
            return {
                "models": {m: _usage_dict(u) for m, u in usage.items()},
                "total": _usage_dict(total_usage(usage)),
            }

        def run_cost(context: CallContext) -> ToolResult | dict[str, Any]:
            """What this run has cost so far, per model and in total."""
            usage = _live(context)
            if isinstance(usage, ToolResult):
                return usage
            report = self.report(usage)
            if report is None:
                return ToolResult.error(
                    "No price table is configured, so the cost is unknown; use model_usage for "
                    "token counts.",
                    kind="no_prices",
                )
            return {
                "currency": report.currency,
                "total": round(report.total, 6),
                "by_model": {m: round(c, 6) for m, c in report.by_model.items()},
                "unpriced_models": list(report.unpriced),
            }

        def budget_status(context: CallContext) -> ToolResult | dict[str, Any]:
            """How much of this run's budget (tokens, cost, actions) is used and left."""
            usage = _live(context)
            if isinstance(usage, ToolResult):
                return usage
            budget = self.budget
            if budget is None:
                return ToolResult.error(
                    "No budget is set for this run; carry on within reason.", kind="no_budget"
                )
            status: dict[str, Any] = {}
            exceeded = False
            if budget.max_tokens is not None:
                used = tokens_used(total_usage(usage))
                status.update(
                    max_tokens=budget.max_tokens,
                    used_tokens=used,
                    remaining_tokens=max(0, budget.max_tokens - used),
                )
                exceeded |= used > budget.max_tokens
            if budget.max_cost is not None:
                report = self.report(usage)
                assert report is not None  # checked at construction
                status.update(
                    currency=report.currency,
                    max_cost=budget.max_cost,
                    cost=round(report.total, 6),
                    remaining_cost=round(max(0.0, budget.max_cost - report.total), 6),
                )
                if report.unpriced:
                    status["unpriced_models"] = list(report.unpriced)
                exceeded |= report.total > budget.max_cost
            if budget.max_actions is not None:
                actions = context.iteration
                status.update(
                    max_actions=budget.max_actions,
                    used_actions=actions,
                    remaining_actions=max(0, budget.max_actions - actions),
                )
                exceeded |= actions > budget.max_actions
            status["exceeded"] = exceeded
            return status

        return tuple(Tool.from_function(f) for f in (model_usage, run_cost, budget_status))
