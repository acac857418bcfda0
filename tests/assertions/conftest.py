"""Traces for the assertion tests: one real run of the seed scenario, and hand-made ones."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from harness.loop import (
    CallRecord,
    ChangeRecord,
    IterationRecord,
    ToolsInjected,
    ToolsRemoved,
    Trace,
)
from harness.scenarios import load_scenario, run_scenario

SEED = Path(__file__).resolve().parents[2] / "scenarios" / "discovery" / "seed_average_spend.yaml"


@pytest.fixture(scope="session")
def seed_trace() -> Trace:
    """search_customer -> customer_c123_* injected -> get_average_spend -> answer."""
    outcome = run_scenario(load_scenario(SEED))
    assert outcome.passed and outcome.trace is not None
    return outcome.trace


_ids = itertools.count(1)


def _call(name: str, args: str = "{}", *, error: bool = False) -> CallRecord:
    return CallRecord(
        id=f"c{next(_ids)}",
        name=name,
        arguments=args,
        content="boom" if error else "ok",
        is_error=error,
        error_kind="exception" if error else None,
    )


@pytest.fixture
def shop_trace() -> Trace:
    """Four iterations: search (injects cart_*), two parallel calls, a removal, an answer."""
    injected = ChangeRecord(
        strategy="Shop",
        reason="search found items",
        added=("cart_add", "cart_show"),
        after_call="search",
        after_call_id="c1",
    )
    removed = ChangeRecord(
        strategy="Cleanup", reason="cart done", removed=("cart_add",), after_call="cart_add"
    )
    iterations = [
        IterationRecord(
            index=1,
            offered=("search", "help"),
            calls=(_call("search", '{"query": "red shoes", "limit": 5}'),),
            changes=(injected,),
            finish_reason="tool_calls",
        ),
        IterationRecord(
            index=2,
            offered=("search", "help", "cart_add", "cart_show"),
            calls=(
                _call("cart_add", '{"sku": "S-1", "qty": 2}'),
                _call("cart_show", "not json", error=True),
            ),
            changes=(removed,),
            finish_reason="tool_calls",
        ),
        IterationRecord(
            index=3,
            offered=("search", "help", "cart_show"),
            calls=(_call("cart_show"),),
            finish_reason="tool_calls",
        ),
        IterationRecord(
            index=4,
            offered=("search", "help", "cart_show"),
            answer="Your cart holds 2 red shoes.",
            finish_reason="stop",
        ),
    ]
    events = [
        ToolsInjected(
            iteration=1,
            tool_names=("cart_add", "cart_show"),
            strategy="Shop",
            reason="x",
            after_call="search",
        ),
        ToolsRemoved(iteration=2, tool_names=("cart_add",), strategy="Cleanup", reason="y"),
    ]
    return Trace(iterations=iterations, events=events, initial_tools=("search", "help"), restarts=1)
