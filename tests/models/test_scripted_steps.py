"""Script steps built in Python and read from YAML-shaped data, with precise errors."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from harness import ScriptError
from harness.models import (
    CallsStep,
    CallStep,
    ExpectOffered,
    OutputStep,
    ReplyStep,
    call,
    calls,
    expect_offered,
    reply,
    step_from_data,
    steps_from_data,
)

SCRIPT = """
- expect_offered: {exactly: [search_customer]}
- call: search_customer
  args: {name: John Smith}
- expect_offered:
    includes: ["customer_*_get_average_spend"]
    excludes: [delete_customer]
- calls:
    - {call: "customer_*_get_average_spend", id: a1}
    - {call: search_customer, args: '{"name": "Jane"}'}
- output: {average: 40.0}
- reply: John spends 40.0 on average.
"""


def test_steps_from_yaml_data() -> None:
    steps = steps_from_data(yaml.safe_load(SCRIPT))
    assert steps == [
        ExpectOffered(exactly=("search_customer",)),
        CallStep(name="search_customer", arguments={"name": "John Smith"}),
        ExpectOffered(includes=("customer_*_get_average_spend",), excludes=("delete_customer",)),
        CallsStep(
            calls=(
                CallStep(name="customer_*_get_average_spend", id="a1"),
                CallStep(name="search_customer", arguments='{"name": "Jane"}'),
            )
        ),
        OutputStep(value={"average": 40.0}),
        ReplyStep(text="John spends 40.0 on average."),
    ]
    assert step_from_data({"call": "x", "arguments": {"a": 1}}) == CallStep(
        name="x", arguments={"a": 1}
    )


def test_python_builders() -> None:
    assert call("t", a=1) == CallStep(name="t", arguments={"a": 1})
    assert call("t", {"id": 5}, id="c9") == CallStep(name="t", arguments={"id": 5}, id="c9")
    assert call("t") == CallStep(name="t")
    assert calls(call("a"), call("b")).describe() == "calls ['a', 'b']"
    assert reply("x" * 50).describe() == f"reply {'x' * 40!r}"
    assert expect_offered(["a"], ["b"], ["c"]).describe() == (
        "expect offered includes ['a'], excludes ['b'], exactly ['c']"
    )


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: call("t", {"a": 1}, b=2), "pass arguments as a dict or as keywords, not both"),
        (lambda: call(None), "the first argument is a tool name or glob, got None"),
        (lambda: calls(), r"calls\(\) needs at least one call"),
        (lambda: expect_offered(includes="search"), "includes must be a list of tool names"),
        (lambda: expect_offered(exactly="x"), r"write exactly=\['x'\] for one name"),
    ],
)
def test_builder_mistakes(build: Any, match: str) -> None:
    with pytest.raises(ScriptError, match=match):
        build()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("reply", "step 1: expected a mapping with one of"),
        ({"reply": "a", "call": "b"}, "step 1: expected exactly one of"),
        ({"say": "hi"}, "got keys ['say']"),
        ({"call": "x", "with": {}}, "step 1: unknown keys ['with']"),
        (
            {"call": "x", "args": [1, 2]},
            "step 1: args must be a mapping or a JSON string, got [1, 2]",
        ),
        ({"call": None}, "step 1: call must be a tool name or glob, got None"),
        ({"calls": []}, "step 1: calls must be a non-empty list"),
        ({"calls": "x"}, "step 1: calls must be a non-empty list"),
        ({"calls": ["x"]}, "step 1 call 1: expected a mapping like {call: name"),
        ({"calls": [{"args": {}}]}, "step 1 call 1: expected a mapping like {call: name"),
        ({"expect_offered": ["a"]}, "step 1: expect_offered takes includes/excludes/exactly"),
        ({"expect_offered": {"include": ["a"]}}, "expect_offered: unknown keys ['include']"),
        ({"expect_offered": {"includes": "a"}}, "step 1: expect_offered: includes must be a list"),
    ],
)
def test_bad_step_data_names_the_step_and_the_problem(data: Any, message: str) -> None:
    with pytest.raises(ScriptError) as info:
        step_from_data(data)
    assert message in str(info.value)


def test_bad_data_in_a_list_names_its_position() -> None:
    with pytest.raises(ScriptError, match=r"^step 3: expected a mapping"):
        steps_from_data([{"reply": "a"}, {"reply": "b"}, 7])
    with pytest.raises(ScriptError, match="steps must be a list, got 'reply: x'"):
        steps_from_data("reply: x")
