"""Blackboard tools: listing and reading the run's shared state safely."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from pydantic import BaseModel

from harness import ScriptedModel, Secret, UsageError, call, reply, run
from harness.injection import blackboard_entries, blackboard_tools, is_facade, safe_value_text
from harness.tools import CallContext, ToolResult


@dataclasses.dataclass
class Customer:
    id: str
    name: str


class Order(BaseModel):
    id: str
    total: float


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no")

    def __repr__(self) -> str:
        raise RuntimeError("no")

    @property
    def __dict__(self) -> Any:  # type: ignore[override]
        raise RuntimeError("no")


def _call(name: str, state: dict[str, Any], **arguments: Any) -> ToolResult:
    tools = {t.name: t for t in blackboard_tools(max_chars=60)}
    context = CallContext(state=state, run_id="r1", tool_name=name)
    prepared = tools[name].prepare(json.dumps(arguments), context)
    assert not isinstance(prepared, ToolResult), prepared
    return tools[name].to_result(prepared.run_sync())


STATE: dict[str, Any] = {
    "customer": Customer(id="c-1", name="Ann"),
    "order": Order(id="o-1", total=9.5),
    "notes": ["a", "b"],
    "harness.run_info": object(),
}


def test_list_shows_key_type_and_preview_of_visible_entries() -> None:
    result = _call("blackboard_list", dict(STATE))
    assert result.value == [
        {"key": "customer", "type": "Customer", "preview": '{"id":"c-1","name":"Ann"}'},
        {"key": "order", "type": "Order", "preview": '{"id":"o-1","total":9.5}'},
        {"key": "notes", "type": "list", "preview": '["a","b"]'},
    ]


@pytest.mark.parametrize(
    ("type_name", "keys"),
    [
        ("customer", ["customer"]),
        ("BaseModel", ["order"]),
        ("LIST", ["notes"]),
        ("object", ["customer", "order", "notes"]),
    ],
)
def test_list_filters_by_type_name_or_a_base_class_in_any_case(
    type_name: str, keys: list[str]
) -> None:
    result = _call("blackboard_list", dict(STATE), type=type_name)
    assert [e["key"] for e in result.value] == keys


def test_an_unknown_type_is_an_error_result_naming_the_types_present() -> None:
    result = _call("blackboard_list", dict(STATE), type="Custmer")
    assert result.is_error and result.error_kind == "unknown_type"
    assert result.content == (
        "No blackboard entry of type 'Custmer' (did you mean 'Customer'?). "
        "Types present: 'Customer', 'Order', 'list'."
    )


def test_an_empty_blackboard_lists_nothing() -> None:
    assert _call("blackboard_list", {"harness.x": 1}).value == []


def test_read_returns_the_value_as_json() -> None:
    result = _call("blackboard_read", dict(STATE), key="order")
    assert not result.is_error and json.loads(result.content) == {"id": "o-1", "total": 9.5}
    assert result.value is STATE["order"]


def test_reading_a_missing_key_names_the_closest_keys() -> None:
    result = _call("blackboard_read", dict(STATE), key="Customers")
    assert result.is_error and result.error_kind == "unknown_key"
    assert result.content == (
        "No blackboard entry 'Customers'. Did you mean 'customer'? Keys: 'customer', 'order', "
        "'notes'. Call blackboard_list to see them all."
    )
    far = _call("blackboard_read", dict(STATE), key="zzz")
    assert "Did you mean" not in far.content


def test_harness_keys_are_neither_listed_nor_read() -> None:
    result = _call("blackboard_read", dict(STATE), key="harness.run_info")
    assert result.is_error and result.error_kind == "unknown_key"


def test_long_values_are_cut_at_max_chars_saying_so() -> None:
    result = _call("blackboard_read", {"log": "x" * 100}, key="log")
    assert result.content == "x" * 60 + "... [truncated: 100 characters in all]"


@pytest.mark.filterwarnings("ignore::harness.ShortSecretWarning")
def test_secrets_never_show() -> None:
    long_secret = Secret("sk-blackboard-0123456789")
    state = {
        "api_key": "short",
        "holder": Secret("s3"),  # a Secret value, even too short to scrub by value
        "config": {"password": "pw", "nested": [{"client_secret": "c"}], "name": "ok"},
        "mixed": {"who": "ann", "key_in_list": [long_secret]},
        "text": f"the key is {long_secret} ok",
    }
    shown = {key: safe_value_text(key, value) for key, value in state.items()}
    assert shown["api_key"] == "[hidden]"
    assert shown["holder"] == "[hidden]"
    assert json.loads(shown["config"]) == {
        "password": "[hidden]",
        "nested": [{"client_secret": "[hidden]"}],
        "name": "ok",
    }
    assert json.loads(shown["mixed"]) == {"who": "ann", "key_in_list": ["[hidden]"]}
    assert shown["text"] == "the key is [hidden] ok"
    listed = json.dumps(blackboard_entries(state))
    assert "sk-blackboard" not in listed and '"pw"' not in listed and "s3" not in listed


def test_a_value_that_cannot_be_serialised_is_named_by_its_type() -> None:
    assert safe_value_text("x", Unprintable()) == "<Unprintable object (not serialisable)>"


def test_the_five_tools_of_seed_003_are_offered_in_order() -> None:
    assert [t.name for t in blackboard_tools()] == [
        "blackboard_list",
        "blackboard_read",
        "blackboard_last",
        "blackboard_describe",
        "blackboard_count",
    ]


def test_last_reads_the_entry_added_last_with_its_key() -> None:
    state = {**STATE, "second": Customer(id="c-2", name="Bo")}
    result = _call("blackboard_last", state)
    assert result.content == '\'second\' (Customer):\n{"id":"c-2","name":"Bo"}'
    assert result.value is state["second"]
    of_type = _call("blackboard_last", state, type="basemodel")
    assert of_type.content.startswith("'order' (Order):") and of_type.value is state["order"]


def test_last_on_an_empty_blackboard_or_a_missing_type_is_an_error_result() -> None:
    empty = _call("blackboard_last", {"harness.x": 1})
    assert (empty.error_kind, empty.content) == ("empty", "The blackboard is empty.")
    missing = _call("blackboard_last", dict(STATE), type="Custmer")
    assert missing.error_kind == "unknown_type" and "did you mean 'Customer'?" in missing.content


class Invoice(BaseModel):
    """A bill sent to a customer."""

    number: str
    lines: list[str]
    api_key: str


class Plain:
    def __init__(self) -> None:
        self.region = "eu"
        self.count = 3
        self._private = "never listed"


def test_describe_gives_the_shape_never_the_values() -> None:
    state = {
        "customer": Customer(id="c-1", name="Ann"),
        "invoice": Invoice(number="n-1", lines=["a"], api_key="sk-live-0123456789abcdef"),
        "plain": Plain(),
        "notes": ["a", "b", "c"],
    }
    described = {key: _call("blackboard_describe", state, key=key).value for key in state}
    assert described["customer"] == {
        "key": "customer",
        "type": "Customer",
        "bases": [],
        "fields": {"id": "str", "name": "str"},
    }
    assert described["invoice"] == {
        "key": "invoice",
        "type": "Invoice",
        "bases": ["BaseModel"],
        "doc": "A bill sent to a customer.",
        "fields": {"number": "str", "lines": "list[str]", "api_key": "str"},
    }
    assert described["plain"]["fields"] == {"region": "str", "count": "int"}
    assert described["notes"] == {"key": "notes", "type": "list", "bases": [], "length": 3}
    text = json.dumps(described)
    assert "sk-live" not in text and "Ann" not in text and "never listed" not in text
    missing = _call("blackboard_describe", state, key="invoices")
    assert missing.error_kind == "unknown_key" and "Did you mean 'invoice'" in missing.content


def test_count_in_all_by_type_and_of_one_type_or_a_base() -> None:
    state = {**STATE, "second": Customer(id="c-2", name="Bo")}
    assert _call("blackboard_count", state).value == {
        "total": 4,
        "by_type": {"Customer": 2, "Order": 1, "list": 1},
    }
    assert _call("blackboard_count", state, type="customer").value == {
        "type": "customer",
        "count": 2,
    }
    assert _call("blackboard_count", state, type="BaseModel").value["count"] == 1
    assert _call("blackboard_count", {}).value == {"total": 0, "by_type": {}}
    missing = _call("blackboard_count", state, type="Invoice")
    assert missing.error_kind == "unknown_type"


def _with_formatter(name: str, state: dict[str, Any], formatter: Any, **arguments: Any) -> str:
    tools = {t.name: t for t in blackboard_tools(formatter=formatter, max_chars=40)}
    context = CallContext(state=state, run_id="r1", tool_name=name)
    prepared = tools[name].prepare(json.dumps(arguments), context)
    assert not isinstance(prepared, ToolResult), prepared
    return tools[name].to_result(prepared.run_sync()).content


@pytest.mark.filterwarnings("ignore::harness.ShortSecretWarning")
def test_a_custom_formatter_writes_what_the_model_reads_still_scrubbed() -> None:
    secret = Secret("sk-formatter-0123456789")

    def formatter(key: str, value: Any) -> str | None:
        if isinstance(value, Customer):
            return f"Customer {value.name} ({value.id}), key {secret}"
        return None  # the default JSON for everything else

    state = {"customer": Customer(id="c-1", name="Ann"), "order": Order(id="o-1", total=2.0)}
    read = _with_formatter("blackboard_read", state, formatter, key="customer")
    assert read == "Customer Ann (c-1), key [hidden]"
    assert _with_formatter("blackboard_read", state, formatter, key="order") == (
        '{"id":"o-1","total":2.0}'
    )
    last = _with_formatter("blackboard_last", state, formatter, type="Customer")
    assert last == "'customer' (Customer):\nCustomer Ann (c-1), key [hidden]"
    listed = json.loads(_with_formatter("blackboard_list", state, formatter))
    assert listed[0]["preview"] == "Customer Ann (c-1), key [hidden]"
    long = _with_formatter("blackboard_read", {"c": Customer("c", "x" * 80)}, formatter, key="c")
    assert long.endswith("... [truncated: 107 characters in all]")
    # a credential-named entry is hidden before any formatter sees it
    hidden = _with_formatter(
        "blackboard_read", {"api_key": "k"}, lambda k, v: "leak", key="api_key"
    )
    assert hidden == "[hidden]"


def test_a_formatter_that_is_not_callable_is_refused() -> None:
    with pytest.raises(UsageError, match=r"formatter must be a function \(key, value\)"):
        blackboard_tools(formatter="json")  # type: ignore[arg-type]


def test_unfold_offers_one_facade_and_max_chars_is_checked() -> None:
    (tool,) = blackboard_tools(unfold=True)
    assert tool.name == "blackboard" and is_facade(tool)
    with pytest.raises(UsageError, match="max_chars must be an int >= 1, got 0"):
        blackboard_tools(max_chars=0)


def test_the_model_reads_what_a_tool_left_on_the_blackboard_in_a_run() -> None:
    def find_customer(context: CallContext, name: str) -> str:
        """Find a customer and keep it on the blackboard."""
        context.state["customer"] = Customer(id="c-9", name=name)
        return "found"

    model = ScriptedModel(
        [
            call("find_customer", {"name": "Bo"}),
            call("blackboard_list", {"type": "Customer"}),
            call("blackboard_read", {"key": "customer"}),
            reply("Bo is c-9."),
        ]
    )
    result = run(model, "Who is Bo?", tools=[find_customer, *blackboard_tools()])
    listed, read = result.trace.calls[1:]
    assert json.loads(listed.content) == [
        {"key": "customer", "type": "Customer", "preview": '{"id":"c-9","name":"Bo"}'}
    ]
    assert json.loads(read.content) == {"id": "c-9", "name": "Bo"}
