"""The entity-discovery scenarios of the catalog pass and offer exactly the expected tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenarios import load_scenario, run_scenario

CATALOG = Path(__file__).resolve().parents[2] / "scenarios" / "discovery"

SEED_CUSTOMER = (
    "customer_c123_get_average_spend",
    "customer_c123_list_orders",
    "customer_c123_get_contact",
)


def _offered(name: str) -> list[tuple[str, ...]]:
    outcome = run_scenario(load_scenario(CATALOG / f"{name}.yaml"))
    assert outcome.passed, outcome.problem
    assert outcome.trace is not None
    return [it.offered for it in outcome.trace.iterations]


def test_seed_flow_offers_the_customer_tools_after_the_search() -> None:
    assert _offered("seed_average_spend") == [
        ("search_customer",),
        ("search_customer", *SEED_CUSTOMER),
        ("search_customer", *SEED_CUSTOMER),
    ]


def test_two_customers_offer_both_namespaced_sets() -> None:
    offered = _offered("search_two_customers")
    assert offered[1] == (
        "search_customer",
        *SEED_CUSTOMER,
        "customer_c456_get_average_spend",
        "customer_c456_list_orders",
        "customer_c456_get_contact",
    )


def test_nested_orders_are_discovered_from_a_customer_tool() -> None:
    offered = _offered("nested_orders")
    orders = tuple(
        f"order_{oid}_{method}"
        for oid in ("o1000", "o1001", "o1002")
        for method in ("get_status", "get_items")
    )
    assert offered[2] == ("search_customer", *SEED_CUSTOMER, *orders)


def test_shopping_cart_keeps_its_state_across_calls() -> None:
    outcome = run_scenario(load_scenario(CATALOG / "shopping_cart.yaml"))
    assert outcome.passed, outcome.problem
    assert outcome.result is not None
    calls = outcome.result.trace.calls
    assert calls[3].value == {"apple": 2, "coffee": 1}
    assert calls[4].value == {"total": 8.0, "items": 3.0}


def test_tool_failure_is_reported_to_the_model_and_recovered() -> None:
    outcome = run_scenario(load_scenario(CATALOG / "tool_failure_recovery.yaml"))
    assert outcome.passed, outcome.problem
    assert outcome.result is not None
    failed = outcome.result.trace.calls[0]
    assert failed.is_error and isinstance(failed.exception, LookupError)
    assert "john@smith.example" in failed.content


@pytest.mark.parametrize("path", sorted(CATALOG.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_discovery_scenario_passes(path: Path) -> None:
    outcome = run_scenario(load_scenario(path))
    assert outcome.passed, outcome.problem
