"""Entity discovery on real object graphs: cycles, huge results, awkward ids, deep agents."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import pytest

from harness import InjectionLimitExceeded, InvalidToolProvider
from harness.injection import EntityDiscovery, find_providers, tool_provider
from harness.loop import LimitReached, ProviderDiscovered, run
from harness.models import ScriptedModel, call, reply
from harness.tools import llm_tool, readable_part, serialize_for_model


@tool_provider(prefix="customer")
class Customer:
    def __init__(self, id: Any) -> None:
        self.id = id
        self.orders: list[Order] = []

    @llm_tool
    def get_average_spend(self) -> float:
        """Average order total."""
        return sum(o.total for o in self.orders) / len(self.orders)


@tool_provider(prefix="order")
class Order:
    def __init__(self, id: str, customer: Customer, total: float) -> None:
        self.id = id
        self.customer = customer  # the back-reference every ORM model has
        self.total = total
        customer.orders.append(self)

    @llm_tool
    def get_total(self) -> float:
        """The order total."""
        return self.total


def _bidirectional() -> Customer:
    customer = Customer("c-1")
    Order("o-1", customer, 10.0)
    Order("o-2", customer, 30.0)
    return customer


def _discovered(result: Any) -> list[ProviderDiscovered]:
    return [e for e in result.trace.events if isinstance(e, ProviderDiscovered)]


# -- cycles ------------------------------------------------------------------------------


def test_a_back_reference_serialises_as_a_marker() -> None:
    customer = _bidirectional()
    text = serialize_for_model(customer.orders[0])
    assert text == (
        """{"id":"o-1","customer":{"id":"c-1","orders":["<Order id='o-1' (reference)>","""
        """{"id":"o-2","customer":"<Customer id='c-1' (reference)>","total":30.0}]},"""
        """"total":10.0}"""
    )


def test_a_self_referencing_dataclass_serialises() -> None:
    @dataclasses.dataclass
    class Node:
        name: str
        children: list[Any]

    root = Node("root", [])
    root.children.append(root)
    assert serialize_for_model(root) == '{"name":"root","children":["<Node (reference)>"]}'


def test_discovery_works_with_bidirectional_models() -> None:
    @llm_tool
    def find_order() -> Order:
        """The order."""
        return _bidirectional().orders[0]

    model = ScriptedModel([call("find_order"), call("order_o1_get_total"), reply("done")])
    result = run(model, "go", tools=[find_order], strategies=[EntityDiscovery()])
    first = result.trace.calls[0]
    assert not first.is_error, first.content
    assert "(reference)" in first.content
    assert [e.tool_names for e in _discovered(result)] == [("order_o1_get_total",)]
    assert result.trace.calls[1].content == "10.0"


def test_a_cyclic_container_is_walked_once() -> None:
    customer = _bidirectional()
    graph: dict[str, Any] = {"customer": customer, "orders": customer.orders}
    graph["self"] = graph
    found = list(find_providers([graph, graph, customer]))
    assert found == [customer, *customer.orders]


# -- the walk cap ------------------------------------------------------------------------


def _big_result() -> list[Any]:
    return [[i] for i in range(50)] + [Customer("late")]


def test_the_walk_cap_emits_limit_reached() -> None:
    @llm_tool
    def big() -> list[Any]:
        """A large result."""
        return _big_result()

    model = ScriptedModel([call("big"), reply("x")])
    result = run(model, "go", tools=[big], strategies=[EntityDiscovery(max_walk=20)])
    limits = [e for e in result.trace.events if isinstance(e, LimitReached)]
    assert [(e.limit, e.value) for e in limits] == [("max_walk", 20)]
    assert "more than max_walk=20 objects" in limits[0].message
    assert "'big'" in limits[0].message
    assert _discovered(result) == []
    # a large enough cap finds the provider at the end
    model = ScriptedModel([call("big"), reply("x")])
    result = run(model, "go", tools=[big], strategies=[EntityDiscovery(max_walk=200)])
    assert [e.instance_id for e in _discovered(result)] == ["late"]
    assert not any(isinstance(e, LimitReached) for e in result.trace.events)


def test_the_walk_cap_can_raise() -> None:
    @llm_tool
    def big() -> list[Any]:
        """A large result."""
        return _big_result()

    model = ScriptedModel([call("big"), reply("x")])
    with pytest.raises(InjectionLimitExceeded, match="max_walk=20"):
        run(model, "go", tools=[big], strategies=[EntityDiscovery(max_walk=20, on_limit="raise")])


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_max_walk_is_validated(bad: Any) -> None:
    with pytest.raises(Exception, match="max_walk must be an int >= 1"):
        EntityDiscovery(max_walk=bad)


# -- ids -> names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("c-123", "c123"),
        ("é", "e"),
        ("café", "cafe"),
        ("ﬁle", "file"),
        ("日本", "id_" + "cf2abf0c"),
        ("日本x", "x_70eb8c34"),
        ("---", "id_cb3f91d5"),
    ],
)
def test_ids_become_stable_readable_parts(raw: str, expected: str) -> None:
    assert readable_part(raw) == expected
    assert readable_part(raw) == readable_part(raw)


def _discover(instance_id: Any) -> Any:
    @llm_tool
    def get() -> Customer:
        """A customer."""
        customer = Customer(instance_id)
        Order("o", customer, 1.0)
        return customer

    return run(
        ScriptedModel([call("get"), reply("x")]),
        "go",
        tools=[get],
        strategies=[EntityDiscovery()],
    )


@pytest.mark.parametrize(
    ("instance_id", "name"),
    [
        ("é", "customer_e_get_average_spend"),
        ("日本", "customer_id_cf2abf0c_get_average_spend"),
        (42, "customer_42_get_average_spend"),
        (
            uuid.UUID(int=7),
            "customer_00000000000000000000000000000007_get_average_spend",
        ),
    ],
)
def test_non_ascii_int_and_uuid_ids_name_tools(instance_id: Any, name: str) -> None:
    result = _discover(instance_id)
    assert [e.tool_names for e in _discovered(result)] == [(name,)]


@pytest.mark.parametrize("instance_id", [object(), 1.5, True, b"c1", ("a",)])
def test_other_id_types_are_an_invalid_tool_provider(instance_id: Any) -> None:
    with pytest.raises(InvalidToolProvider) as info:
        _discover(instance_id)
    message = str(info.value)
    assert f"Customer.id is a {type(instance_id).__name__}" in message
    assert "must be a str, int or UUID" in message
    assert " at 0x" not in message.split(";")[1]  # the fix, never a memory address
    assert info.value.messages is not None and info.value.messages[-1].role == "tool"
