"""Tool results: serialisation for the model, flags, and exceptions kept for the trace."""

import dataclasses
import datetime
import enum
import json
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from pydantic import BaseModel

from harness.tools import CallContext, PreparedCall, ToolResult, as_tool, serialize_for_model


class Customer(BaseModel):
    id: str
    name: str
    since: datetime.date


@dataclasses.dataclass
class Order:
    id: str
    total: float


class Status(enum.Enum):
    OPEN = "open"


class Plain:
    def __init__(self) -> None:
        self.id = "p1"
        self.count = 2
        self._private = "hidden"


class Slotted:
    __slots__ = ("id",)

    def __init__(self) -> None:
        self.id = "s1"

    def __str__(self) -> str:
        return "Slotted(s1)"


def test_strings_pass_through_unchanged() -> None:
    assert serialize_for_model("plain text") == "plain text"
    assert serialize_for_model('{"already": "json"}') == '{"already": "json"}'
    assert serialize_for_model("") == ""


def test_none_is_json_null() -> None:
    assert serialize_for_model(None) == "null"


def test_pydantic_model_is_json() -> None:
    customer = Customer(id="c-123", name="John Smith", since=datetime.date(2020, 1, 2))
    assert json.loads(serialize_for_model(customer)) == {
        "id": "c-123",
        "name": "John Smith",
        "since": "2020-01-02",
    }


def test_dataclass_and_containers_are_json() -> None:
    assert json.loads(serialize_for_model(Order(id="o1", total=9.5))) == {"id": "o1", "total": 9.5}
    assert json.loads(serialize_for_model([Order(id="o1", total=1.0), {"k": (1, 2)}])) == [
        {"id": "o1", "total": 1.0},
        {"k": [1, 2]},
    ]
    assert json.loads(serialize_for_model({"status": Status.OPEN, "n": 3})) == {
        "status": "open",
        "n": 3,
    }
    assert serialize_for_model(True) == "true"
    assert serialize_for_model(1.5) == "1.5"


def test_plain_objects_show_their_public_attributes() -> None:
    assert json.loads(serialize_for_model(Plain())) == {"id": "p1", "count": 2}
    assert json.loads(serialize_for_model({"item": Plain()})) == {"item": {"id": "p1", "count": 2}}
    assert serialize_for_model(Slotted()) == '"Slotted(s1)"'


@settings(max_examples=50, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.text(max_size=5), children, max_size=3)
        ),
        max_leaves=10,
    )
)
def test_json_values_serialise_to_equal_json(value: Any) -> None:
    if isinstance(value, str):
        assert serialize_for_model(value) == value
    else:
        assert json.loads(serialize_for_model(value)) == value


def test_ok_result_keeps_the_python_value() -> None:
    order = Order(id="o1", total=2.0)
    result = ToolResult.ok(order, user_content="Your order", silent=True)
    assert result.value is order
    assert json.loads(result.content) == {"id": "o1", "total": 2.0}
    assert (result.user_content, result.silent, result.is_error) == ("Your order", True, False)
    assert result.error_kind is None


def test_error_result_flags() -> None:
    boom = RuntimeError("boom")
    result = ToolResult.error("it failed", kind="timeout", exception=boom)
    assert (result.content, result.is_error, result.error_kind) == ("it failed", True, "timeout")
    assert result.exception is boom
    assert ToolResult.error("x").error_kind == "error"


def test_with_content_is_a_copy() -> None:
    result = ToolResult.ok({"a": 1})
    changed = result.with_content("short")
    assert changed.content == "short"
    assert changed.value == {"a": 1}
    assert result.content == '{"a":1}'
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.content = "x"  # type: ignore[misc]


def test_to_result_wraps_values_and_passes_tool_results_through() -> None:
    def f() -> None:
        pass

    tool = as_tool(f)
    own = ToolResult(content="custom", silent=True)
    assert tool.to_result(own) is own
    wrapped = tool.to_result(Customer(id="c1", name="A", since=datetime.date(2021, 1, 1)))
    assert json.loads(wrapped.content)["id"] == "c1"
    assert wrapped.value.id == "c1"
    assert tool.to_result("text").content == "text"


def test_unserialisable_values_become_error_results_keeping_the_value() -> None:
    def f() -> None:
        pass

    tool = as_tool(f)
    result = tool.to_result(b"\xff")
    assert result.is_error
    assert result.error_kind == "unserializable"
    assert result.value == b"\xff"
    assert result.exception is not None
    assert "Tool 'f' returned a bytes that cannot be serialised to JSON" in result.content


def test_a_reference_cycle_serialises_with_a_marker() -> None:
    def f() -> None:
        pass

    looped = Plain()
    looped.__dict__["me"] = looped  # a reference cycle
    result = as_tool(f).to_result(looped)
    assert not result.is_error and result.value is looped
    assert result.content.endswith('"me":"<Plain id=\'p1\' (reference)>"}')


def test_exceptions_in_tools_become_error_results_keeping_the_exception() -> None:
    def fragile(n: int) -> int:
        raise ValueError(f"n={n} is too big")

    tool = as_tool(fragile)
    prepared = tool.prepare('{"n": 7}', CallContext())
    assert isinstance(prepared, PreparedCall)
    with pytest.raises(ValueError, match="too big") as info:
        prepared.run_sync()
    result = prepared.error_result(info.value)
    assert result.is_error
    assert result.error_kind == "exception"
    assert result.exception is info.value
    assert result.content == "Tool 'fragile' failed: ValueError: n=7 is too big"
    assert tool.error_result(info.value).content == result.content
