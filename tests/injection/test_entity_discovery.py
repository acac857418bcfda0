"""Entity discovery: objects returned by tools expose their methods as new tools."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from harness import InjectionLimitExceeded, InvalidToolProvider, UsageError
from harness.injection import EntityDiscovery, tool_provider
from harness.loop import (
    Event,
    LimitReached,
    ProviderDiscovered,
    StrategyWarning,
    ToolsInjected,
    arun,
    run,
)
from harness.messages import ToolMessage
from harness.models import ScriptedModel, call, calls, expect_offered, reply
from harness.tools import llm_tool

# -- a tiny domain ------------------------------------------------------------------------


@tool_provider(prefix="order")
class Order:
    def __init__(self, id: str, total: float) -> None:
        self.id = id
        self.total = total

    @llm_tool
    def get_total(self) -> float:
        """The order total."""
        return self.total


@tool_provider(prefix="customer", id_attr="id")
class Customer:
    def __init__(self, id: str, name: str, spend: list[float] | None = None) -> None:
        self.id = id
        self.name = name
        self.spend = spend or [10.0, 20.0]
        self.notes: list[str] = []

    @llm_tool
    def get_average_spend(self) -> float:
        """Average spend per order."""
        return sum(self.spend) / len(self.spend)

    @llm_tool
    def add_note(self, text: str) -> int:
        """Remember a note; returns how many notes there are."""
        self.notes.append(text)
        return len(self.notes)

    @llm_tool
    def latest_order(self) -> Order:
        """The customer's latest order."""
        return Order(f"o-{self.id}", 99.5)


CUSTOMERS = {
    "John Smith": Customer("c-123", "John Smith", [30.0, 50.0]),
    "Jane Doe": Customer("c-456", "Jane Doe"),
}


@llm_tool
def search_customer(name: str) -> Customer:
    """Find one customer by name."""
    return CUSTOMERS[name]


@llm_tool
def search_customers(prefix: str) -> list[Customer]:
    """All customers."""
    return list(CUSTOMERS.values())


def _events(result_or_exc: Any) -> list[Event]:
    return list(result_or_exc.trace.events)


# -- the seed flow -------------------------------------------------------------------------


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_seed_flow(driver: str) -> None:
    model = ScriptedModel(
        [
            expect_offered(exactly=["search_customer"]),
            call("search_customer", name="John Smith"),
            expect_offered(
                includes=["customer_c123_get_average_spend"], excludes=["customer_c456_*"]
            ),
            call("customer_*_get_average_spend"),
            reply("John Smith spends 40.0 on average."),
        ]
    )
    prompt = "What's John Smith's average spend?"
    tools = [search_customer]
    strategies = [EntityDiscovery()]
    if driver == "sync":
        result = run(model, prompt, tools=tools, strategies=strategies)
    else:
        result = asyncio.run(arun(model, prompt, tools=tools, strategies=strategies))
    assert model.requests[0].tool_names == ("search_customer",)
    assert model.requests[1].tool_names == (
        "search_customer",
        "customer_c123_get_average_spend",
        "customer_c123_add_note",
        "customer_c123_latest_order",
    )
    assert [c.name for c in result.trace.calls] == [
        "search_customer",
        "customer_c123_get_average_spend",
    ]
    assert result.trace.calls[1].content == "40.0"
    assert result.trace.iterations[0].injected == model.requests[1].tool_names[1:]
    assert result.trace.changes[0].reason == "search_customer returned Customer 'c-123'"
    assert result.output == "John Smith spends 40.0 on average."
    discovered = [e for e in _events(result) if isinstance(e, ProviderDiscovered)]
    assert len(discovered) == 1 and discovered[0].instance_id == "c-123"


def test_a_list_of_two_customers_offers_both_namespaced_sets() -> None:
    model = ScriptedModel(
        [
            call("search_customers", prefix=""),
            expect_offered(includes=["customer_c123_*", "customer_c456_*"]),
            calls(call("customer_c123_get_average_spend"), call("customer_c456_get_average_spend")),
            reply("done"),
        ]
    )
    result = run(model, "go", tools=[search_customers], strategies=[EntityDiscovery()])
    assert result.trace.iterations[0].injected == (
        "customer_c123_get_average_spend",
        "customer_c123_add_note",
        "customer_c123_latest_order",
        "customer_c456_get_average_spend",
        "customer_c456_add_note",
        "customer_c456_latest_order",
    )
    assert [c.content for c in result.trace.calls[1:]] == ["40.0", "15.0"]
    assert result.trace.changes[0].reason == (
        "search_customers returned Customer 'c-123', Customer 'c-456'"
    )


class Found(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    query: str
    best: Customer


@dataclasses.dataclass
class Page:
    items: list[Any]
    total: int


@llm_tool
def find_model() -> Found:
    """A pydantic result holding a customer."""
    return Found(query="q", best=CUSTOMERS["Jane Doe"])


@llm_tool
def find_dataclass() -> Page:
    """A dataclass result holding customers."""
    return Page(items=[{"customer": CUSTOMERS["John Smith"]}], total=1)


@llm_tool
def find_dict() -> dict[str, Any]:
    """A dict result holding a tuple of customers."""
    return {"hits": (CUSTOMERS["Jane Doe"],), "count": 1}


@pytest.mark.parametrize(
    ("tool", "customer_id"),
    [(find_model, "c456"), (find_dataclass, "c123"), (find_dict, "c456")],
)
def test_providers_nested_in_returned_values_are_found(tool: Any, customer_id: str) -> None:
    model = ScriptedModel([call(tool.__name__), call("customer_*_get_average_spend"), reply("x")])
    result = run(model, "go", tools=[tool], strategies=[EntityDiscovery()])
    assert f"customer_{customer_id}_get_average_spend" in model.requests[1].tool_names
    assert not result.trace.calls[1].is_error


def test_nested_discovery_depth_two() -> None:
    model = ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            call("customer_c123_latest_order"),
            expect_offered(includes=["order_oc123_get_total"]),
            call("order_oc123_get_total"),
            reply("99.5"),
        ]
    )
    result = run(model, "go", tools=[search_customer], strategies=[EntityDiscovery()])
    discovered = [e for e in _events(result) if isinstance(e, ProviderDiscovered)]
    assert [(e.provider, e.instance_id, e.depth) for e in discovered] == [
        ("Customer", "c-123", 1),
        ("Order", "o-c-123", 2),
    ]
    assert result.trace.iterations[1].injected == ("order_oc123_get_total",)
    assert result.trace.calls[-1].content == "99.5"


def test_max_depth_stops_nested_discovery_with_an_event() -> None:
    model = ScriptedModel(
        [call("search_customer", name="John Smith"), call("customer_c123_latest_order"), reply("x")]
    )
    result = run(model, "go", tools=[search_customer], strategies=[EntityDiscovery(max_depth=1)])
    limits = [e for e in _events(result) if isinstance(e, LimitReached)]
    assert [(e.limit, e.value) for e in limits] == [("max_depth", 1)]
    assert "Order 'o-c-123'" in limits[0].message and "discovery depth 2 > max_depth=1" in (
        limits[0].message
    )
    assert not any(n.startswith("order_") for n in model.requests[-1].tool_names)


def test_max_depth_raise() -> None:
    model = ScriptedModel(
        [call("search_customer", name="John Smith"), call("customer_c123_latest_order"), reply("x")]
    )
    with pytest.raises(InjectionLimitExceeded, match="max_depth=1") as info:
        run(
            model,
            "go",
            tools=[search_customer],
            strategies=[EntityDiscovery(max_depth=1, on_limit="raise")],
        )
    # the call whose result hit the limit is still answered and recorded
    assert info.value.trace.calls[-1].name == "customer_c123_latest_order"
    assert isinstance(info.value.messages[-1], ToolMessage)  # type: ignore[index]


def test_same_instance_again_adds_nothing() -> None:
    model = ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            call("search_customer", name="John Smith"),
            reply("x"),
        ]
    )
    result = run(model, "go", tools=[search_customer], strategies=[EntityDiscovery()])
    assert result.trace.iterations[1].changes == ()
    assert model.requests[2].tool_names == model.requests[1].tool_names
    assert len([e for e in _events(result) if isinstance(e, ProviderDiscovered)]) == 1
    assert not [e for e in _events(result) if isinstance(e, StrategyWarning)]


@llm_tool
def fresh_copy() -> Customer:
    """A different instance with the id c-123."""
    return Customer("c-123", "Impostor", [1.0])


def _collision_run(policy: str) -> tuple[ScriptedModel, Any]:
    model = ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            call("fresh_copy"),
            call("customer_c123_get_average_spend"),
            reply("x"),
        ]
    )
    result = run(
        model,
        "go",
        tools=[search_customer, fresh_copy],
        strategies=[EntityDiscovery(collision=policy)],  # type: ignore[arg-type]
    )
    return model, result


def test_collision_skip_is_the_default_with_a_warning() -> None:
    _, result = _collision_run("skip")
    warnings = [e for e in _events(result) if isinstance(e, StrategyWarning)]
    assert len(warnings) == 1
    assert warnings[0].strategy == "discovery"
    assert warnings[0].message == (
        "skipped Customer 'c-123' returned by 'fresh_copy': another Customer with id 'c-123' "
        "was already discovered"
    )
    assert result.trace.calls[-1].content == "40.0"  # still bound to the first instance
    assert EntityDiscovery().collision == "skip"


def test_a_skipped_instance_returned_again_warns_once() -> None:
    twin = Customer("c-123", "Twin")

    @llm_tool
    def same_twin() -> Customer:
        """Always the same colliding instance."""
        return twin

    model = ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            call("same_twin"),
            call("same_twin"),
            reply("x"),
        ]
    )
    result = run(model, "go", tools=[search_customer, same_twin], strategies=[EntityDiscovery()])
    assert len([e for e in _events(result) if isinstance(e, StrategyWarning)]) == 1
    assert result.trace.iterations[2].changes == ()


def test_collision_replace_rebinds_to_the_new_instance() -> None:
    model, result = _collision_run("replace")
    assert result.trace.calls[-1].content == "1.0"
    change = result.trace.iterations[1].changes[0]
    assert set(change.removed) == set(change.added)
    assert set(model.requests[2].tool_names) == set(model.requests[1].tool_names)
    assert len([e for e in _events(result) if isinstance(e, ProviderDiscovered)]) == 2


def test_replacing_a_provider_does_not_count_its_tools_twice() -> None:
    model = ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            call("fresh_copy"),
            call("fresh_copy"),
            reply("x"),
        ]
    )
    result = run(
        model,
        "go",
        tools=[search_customer, fresh_copy],
        strategies=[EntityDiscovery(collision="replace", max_injected_tools=3)],
    )
    assert not [e for e in _events(result) if isinstance(e, LimitReached)]
    assert len([e for e in _events(result) if isinstance(e, ProviderDiscovered)]) == 3
    assert [len(c.removed) for c in result.trace.changes] == [0, 3, 3]


def test_collision_error() -> None:
    with pytest.raises(InvalidToolProvider) as info:
        _collision_run("error")
    assert "name collision: Customer 'c-123' returned by 'fresh_copy'" in str(info.value)
    assert "collision='skip' or 'replace'" in str(info.value)
    assert info.value.trace is not None


def test_a_provider_name_clashing_with_an_offered_tool_is_skipped() -> None:
    @llm_tool(name="customer_c123_get_average_spend")
    def squatter() -> str:
        """Already here."""
        return "squatter"

    model = ScriptedModel([call("search_customer", name="John Smith"), reply("x")])
    result = run(
        model,
        "go",
        tools=[search_customer, squatter],
        strategies=[EntityDiscovery(collision="replace")],
    )
    warning = next(e for e in _events(result) if isinstance(e, StrategyWarning))
    assert "tools ['customer_c123_get_average_spend'] already exist" in warning.message
    assert result.trace.changes == []


def test_two_instances_with_one_id_in_one_result() -> None:
    @llm_tool
    def twins() -> list[Customer]:
        """Two instances, same id."""
        return [Customer("c-9", "A"), Customer("c-9", "B")]

    model = ScriptedModel([call("twins"), reply("x")])
    result = run(model, "go", tools=[twins], strategies=[EntityDiscovery()])
    assert len(result.trace.injected) == 3
    assert len([e for e in _events(result) if isinstance(e, StrategyWarning)]) == 1


def test_max_injected_tools_event() -> None:
    model = ScriptedModel([call("search_customers", prefix=""), reply("x")])
    result = run(
        model, "go", tools=[search_customers], strategies=[EntityDiscovery(max_injected_tools=4)]
    )
    assert len(result.trace.injected) == 3  # the second customer's 3 tools would make 6
    limit = next(e for e in _events(result) if isinstance(e, LimitReached))
    assert (limit.limit, limit.value) == ("max_injected_tools", 4)
    assert "adding 3 tools for Customer 'c-456' would exceed max_injected_tools=4" in limit.message


def test_max_injected_tools_raise_keeps_history() -> None:
    model = ScriptedModel([call("search_customers", prefix=""), reply("x")])
    with pytest.raises(InjectionLimitExceeded, match="max_injected_tools=2") as info:
        run(
            model,
            "go",
            tools=[search_customers],
            strategies=[EntityDiscovery(max_injected_tools=2, on_limit="raise")],
        )
    assert info.value.messages is not None and len(info.value.messages) == 3


@tool_provider(id_attr="code")
class Product:
    @llm_tool
    def price(self) -> float:
        """Price."""
        return 1.0


@llm_tool
def product() -> Product:
    """A product without a code."""
    return Product()


def test_missing_id_attribute_is_a_clear_invalid_tool_provider() -> None:
    model = ScriptedModel([call("product"), reply("x")])
    with pytest.raises(InvalidToolProvider) as info:
        run(model, "go", tools=[product], strategies=[EntityDiscovery()])
    assert str(info.value) == (
        "Product instance has no attribute 'code' to use as its id; add it, or pass "
        "id_attr='<attribute>' to @tool_provider"
    )
    assert info.value.trace.calls[0].name == "product"


def test_an_empty_id_value_is_refused() -> None:
    @llm_tool
    def nameless() -> Customer:
        """A customer whose id is blank."""
        return Customer("  ", "x")

    with pytest.raises(InvalidToolProvider, match=r"Customer.id='  ' cannot name tools"):
        run(
            ScriptedModel([call("nameless"), reply("x")]),
            "go",
            tools=[nameless],
            strategies=[EntityDiscovery()],
        )


def test_stateful_instances_keep_state_across_calls() -> None:
    model = ScriptedModel(
        [
            call("search_customer", name="Jane Doe"),
            call("customer_c456_add_note", text="likes tea"),
            call("customer_c456_add_note", text="VIP"),
            reply("x"),
        ]
    )
    before = list(CUSTOMERS["Jane Doe"].notes)
    result = run(model, "go", tools=[search_customer], strategies=[EntityDiscovery()])
    assert [c.content for c in result.trace.calls[1:]] == [
        str(len(before) + 1),
        str(len(before) + 2),
    ]
    assert CUSTOMERS["Jane Doe"].notes[-2:] == ["likes tea", "VIP"]


@tool_provider(prefix="a_very_long_provider_prefix_for_testing")
class Account:
    def __init__(self, id: str) -> None:
        self.id = id

    @llm_tool
    def summarise_the_recent_activity_of_this_account(self) -> str:
        """Summary."""
        return "quiet"


@llm_tool
def account() -> Account:
    """An account."""
    return Account("acct-000-111-222-333")


def test_long_names_are_shortened_with_a_hash() -> None:
    names = []
    for _ in range(2):
        model = ScriptedModel([call("account"), reply("x")])
        result = run(model, "go", tools=[account], strategies=[EntityDiscovery()])
        names.append(result.trace.injected[0])
    name = names[0]
    assert names[0] == names[1]
    assert len(name) == 64
    full = (
        "a_very_long_provider_prefix_for_testing_acct000111222333_"
        "summarise_the_recent_activity_of_this_account"
    )
    assert name == f"{full[:55]}_{hashlib.sha256(full.encode()).hexdigest()[:8]}"
    assert not result.trace.calls[0].is_error


def test_hint_appends_new_tool_names_to_the_result() -> None:
    model = ScriptedModel([call("search_customer", name="Jane Doe"), reply("x")])
    result = run(model, "go", tools=[search_customer], strategies=[EntityDiscovery(hint=True)])
    content = result.messages[2].content  # type: ignore[union-attr]
    body, hint = content.split("\n\n")
    assert json.loads(body)["id"] == "c-456"
    assert hint == (
        "[New tools available: customer_c456_get_average_spend, customer_c456_add_note, "
        "customer_c456_latest_order]"
    )
    assert result.trace.calls[0].content == content
    plain = run(
        ScriptedModel([call("search_customer", name="Jane Doe"), reply("x")]),
        "go",
        tools=[search_customer],
        strategies=[EntityDiscovery()],
    )
    assert "New tools" not in plain.messages[2].content  # type: ignore[union-attr]


def test_errors_and_non_provider_results_are_ignored() -> None:
    @llm_tool
    def plain() -> dict[str, int]:
        """No providers here."""
        return {"a": 1}

    model = ScriptedModel([call("plain"), call("search_customer", name="Nobody"), reply("x")])
    result = run(model, "go", tools=[plain, search_customer], strategies=[EntityDiscovery()])
    assert result.trace.changes == []
    assert result.trace.calls[1].error_kind == "exception"


def test_discovery_state_is_per_run() -> None:
    strategy = EntityDiscovery()
    for _ in range(2):
        model = ScriptedModel([call("search_customer", name="John Smith"), reply("x")])
        result = run(model, "go", tools=[search_customer], strategies=[strategy])
        assert len(result.trace.injected) == 3


def test_injected_events_name_the_strategy_and_cause() -> None:
    model = ScriptedModel([call("search_customer", name="John Smith"), reply("x")])
    result = run(model, "go", tools=[search_customer], strategies=[EntityDiscovery()])
    injected = next(e for e in _events(result) if isinstance(e, ToolsInjected))
    assert (injected.strategy, injected.after_call) == ("discovery", "search_customer")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_injected_tools": -1}, "max_injected_tools must be >= 0, got -1"),
        ({"max_depth": 0}, "max_depth must be >= 1, got 0"),
        (
            {"collision": "merge"},
            "collision must be one of 'skip', 'replace', 'error', got 'merge'",
        ),
        ({"on_limit": "ignore"}, "on_limit must be one of 'event', 'raise', got 'ignore'"),
    ],
)
def test_invalid_settings(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        EntityDiscovery(**kwargs)
