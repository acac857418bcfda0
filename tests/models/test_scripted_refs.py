"""Scripted arguments that refer to earlier results, the prompt and tool names; tools by rank."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from hypothesis import given, strategies as st

from harness import ScriptError, llm_tool, run, tool_provider
from harness.injection import EntityDiscovery
from harness.models import ScriptedModel, steps_from_data
from harness.models._scripted._refs import format_path, parse_json, words


def _orders() -> tuple[list[Any], dict[str, list[str]]]:
    """Fresh order ids per call (as a real agent makes them); what was looked up."""
    ids = [f"ord-{uuid.uuid4().hex[:6]}" for _ in range(2)]
    seen: dict[str, list[str]] = {"get": []}

    @llm_tool
    def list_orders() -> dict[str, Any]:
        """Orders."""
        return {"orders": [{"order_id": i, "total": 10 * (n + 1)} for n, i in enumerate(ids)]}

    @llm_tool
    def get_order(order_id: str, amount: int = 0) -> str:
        """One order."""
        seen["get"].append(f"{order_id}:{amount}")
        return f"Order {order_id} is on its way."

    return [list_orders, get_order], seen


def _run(steps: list[dict[str, Any]], tools: list[Any], prompt: str = "Orders?") -> Any:
    return run(ScriptedModel(steps_from_data(steps)), prompt, tools=tools)


def test_a_path_into_an_earlier_result_finds_the_fresh_id_on_each_run() -> None:
    steps = [
        {"call": "list_orders"},
        {
            "call": "get_order",
            "args": {
                "order_id": {"$from": "call 1", "path": "orders[1].order_id"},
                "amount": {"$from": "call 1", "path": "orders[1].total", "add": 1},
            },
        },
        {"reply": "Done."},
    ]
    for _ in range(2):  # fresh ids each time, the same script
        tools, seen = _orders()
        result = _run(steps, tools)
        listed = json.loads(result.trace.iterations[0].calls[0].content)["orders"]
        assert seen["get"] == [f"{listed[1]['order_id']}:21"]


def test_words_quoted_phrases_and_casts() -> None:
    tools, seen = _orders()
    steps = [
        {"call": "get_order", "args": {"order_id": {"$from": "prompt", "quoted": 0}}},
        {
            "call": "get_order",
            "args": {
                "order_id": {"$from": "call 1", "word": 1},  # "Order <id> is on its way."
                "amount": {"$from": "prompt", "word": 2, "as": "integer"},
            },
        },
        {"reply": "Done."},
    ]
    _run(steps, tools, prompt='Track order 42 "ord-777" please')
    assert seen["get"] == ["ord-777:0", "ord-777:42"]


@tool_provider(prefix="box")
class Box:
    """A box with a fresh id."""

    def __init__(self) -> None:
        self.id = uuid.uuid4().hex[:6] + "7"
        self.opened = False

    @llm_tool
    def open_box(self) -> str:
        """Open it."""
        self.opened = True
        return f"opened {self.id}"


def test_tools_by_pattern_and_rank_and_ids_from_tool_names() -> None:
    boxes = [Box(), Box()]

    @llm_tool
    def find_boxes() -> list[Box]:
        """Boxes."""
        return boxes

    @llm_tool
    def label(text: str) -> str:
        """Label something."""
        return text

    steps = [
        {"call": "find_boxes"},
        {"call": "box_*_open_box", "rank": 2},
        {"call": "label", "args": {"text": {"$from": "tool box_*_open_box", "rank": 1, "word": 1}}},
        {"reply": "Done."},
    ]
    result = run(
        ScriptedModel(steps_from_data(steps)),
        "Open the second box.",
        tools=[find_boxes, label],
        strategies=[EntityDiscovery()],
    )
    assert [b.opened for b in boxes] == [False, True]
    assert result.trace.iterations[2].calls[0].content == boxes[0].id


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"x": {"$from": "call 3", "path": "a"}}, r"has 1 tool call\(s\) so far"),
        ({"x": {"$from": "call 1", "path": "nope"}}, "no 'nope' in"),
        ({"x": {"$from": "call 1", "word": 40}}, "has only"),
        ({"x": {"$from": "call 1", "as": "integer"}}, "is not a number"),
    ],
)
def test_a_reference_that_finds_nothing_says_why(args: dict[str, Any], message: str) -> None:
    @llm_tool
    def echo(x: Any = None) -> dict[str, str]:
        """Echo."""
        return {"a": "text here"}

    steps = [{"call": "echo"}, {"call": "echo", "args": args}, {"reply": "Done."}]
    with pytest.raises(ScriptError, match=message) as caught:
        _run(steps, [echo])
    assert "step 2" in str(caught.value)


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ({"$from": "the result"}, "must be 'call N', 'prompt', 'system' or 'tool GLOB'"),
        ({"$from": "call 1", "as": "date"}, "'as' must be one of"),
        ({"$from": "call 1", "word": -1}, "'word' must be an int >= 0"),
        ({"$from": "call 1", "word": 1, "quoted": 0}, "give 'word' or 'quoted', not both"),
        ({"$from": "call 1", "path": "a[x"}, "bad path"),
        ({"$from": "call 1", "nth": 2}, "unknown keys \\['nth'\\]"),
        ({"$from": "call 1", "add": float("nan")}, "'add' must be a finite number, got nan"),
        ({"$from": "call 1", "add": float("inf")}, "'add' must be a finite number, got inf"),
    ],
)
def test_a_bad_reference_is_refused_when_read(ref: dict[str, Any], message: str) -> None:
    with pytest.raises(ScriptError, match=message):
        steps_from_data([{"call": "x", "args": {"v": ref}}])


def test_a_rank_beyond_the_matches_is_a_script_error() -> None:
    tools, _ = _orders()
    with pytest.raises(ScriptError, match="matches 1 offered tool\\(s\\), rank 2 asked"):
        _run([{"call": "list_*", "rank": 2}, {"reply": "Done."}], tools)
    with pytest.raises(ScriptError, match="rank must be an int >= 1"):
        steps_from_data([{"call": "x", "rank": 0}])


def test_a_result_with_a_note_after_it_is_read_as_its_json() -> None:
    assert parse_json('{"a": 1}\n\n[state is now PAYMENT]') == {"a": 1}
    assert parse_json('{"a": 1}x') == '{"a": 1}x'
    assert parse_json("plain text") == "plain text"


@given(st.lists(st.one_of(st.text(max_size=5), st.integers(0, 5)), max_size=4))
def test_paths_round_trip(parts: list[str | int]) -> None:
    from harness.models._scripted._refs import ref_from_data

    parts = [p for p in parts if p != ""]
    if not parts:
        return
    ref = ref_from_data({"$from": "call 1", "path": format_path(parts)}, "test")
    assert list(ref.path) == parts


def test_words_keep_ids_whole() -> None:
    assert words("Order ord-3f2a9c (a@b.test) shipped.") == [
        "Order",
        "ord-3f2a9c",
        "a@b.test",
        "shipped",
    ]


@pytest.mark.parametrize(
    ("found", "ref", "message"),
    [
        (float("inf"), {"as": "integer"}, "inf is not a finite number, so it has no integer"),
        (float("nan"), {"as": "integer"}, "nan is not a finite number"),
        ("Infinity", {"as": "number"}, "'Infinity' is not a finite number"),
        (1e308, {"add": 1e308}, "1e\\+308 \\+1e\\+308 is inf, not a finite number"),
        (10**400, {"add": 0.5}, "is inf, not a finite number"),
    ],
)
def test_a_reference_never_sends_a_tool_nan_or_infinity(
    found: Any, ref: dict[str, Any], message: str
) -> None:
    """Casting or adding to a value seen must give a finite number (it gave an unexpected
    OverflowError, or sent NaN or infinity to the tool)."""
    sent: list[Any] = []

    @llm_tool
    def source() -> dict[str, Any]:
        """A value."""
        return {"v": found}

    @llm_tool
    def sink(x: Any = None) -> str:
        """Take it."""
        sent.append(x)
        return "ok"

    arg = {"$from": "call 1", "path": "v", **ref}
    steps = [{"call": "source"}, {"call": "sink", "args": {"x": arg}}, {"reply": "Done."}]
    with pytest.raises(ScriptError, match=message) as caught:
        _run(steps, [source, sink])
    assert "step 2" in str(caught.value) and sent == []
