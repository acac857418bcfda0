"""The scripted model: steps resolved against offered tools, precise errors, recorded requests."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from harness import ScriptError
from harness.loop import LoopOptions, Model, ModelRequest, ModelSettings, arun, run
from harness.messages import UserMessage
from harness.models import (
    ScriptedModel,
    call,
    calls,
    expect_offered,
    output,
    reply,
)
from harness.tools import ToolChoice, llm_tool


@llm_tool
def customer_c1_get_average_spend() -> float:
    """Average spend of c1."""
    return 1.0


@llm_tool
def customer_c2_get_average_spend() -> float:
    """Average spend of c2."""
    return 2.0


@llm_tool
def search(name: str = "") -> str:
    """Search."""
    return f"found {name}"


TOOLS = [search, customer_c1_get_average_spend, customer_c2_get_average_spend]
OFFERED = "search, customer_c1_get_average_spend, customer_c2_get_average_spend"


def _request(names: tuple[str, ...] = tuple(t.__name__ for t in TOOLS), iteration: int = 1) -> Any:
    return ModelRequest(
        messages=[UserMessage(content="hi")],
        tools=(),
        tool_names=names,
        settings=ModelSettings(),
        iteration=iteration,
    )


def test_is_a_model_and_not_collected_by_pytest() -> None:
    assert issubclass(ScriptedModel, Model)
    assert ScriptedModel.__test__ is False  # type: ignore[attr-defined]


def test_exact_name_and_glob_are_resolved_against_offered_tools() -> None:
    model = ScriptedModel([call("search", name="x"), call("customer_c2_*"), reply("ok")])
    result = run(model, "go", tools=TOOLS)
    assert [c.name for c in result.trace.calls] == ["search", "customer_c2_get_average_spend"]
    assert [c.arguments for c in result.trace.calls] == ['{"name": "x"}', "{}"]
    assert result.output == "ok"


def test_glob_matching_nothing_names_the_offered_tools() -> None:
    model = ScriptedModel([call("order_*_total")])
    with pytest.raises(ScriptError) as info:
        model.request(_request())
    assert str(info.value) == (
        "step 1 (call 'order_*_total'): glob 'order_*_total' matches no offered tool "
        f"(a real model could not call it). Offered: {OFFERED}"
    )


def test_glob_matching_several_names_the_matches_and_the_offered_tools() -> None:
    model = ScriptedModel([call("search"), call("customer_*_get_average_spend")])
    model.request(_request())
    with pytest.raises(ScriptError) as info:
        model.request(_request(iteration=2))
    message = str(info.value)
    assert message.startswith("step 2 (call 'customer_*_get_average_spend'): glob ")
    assert (
        "matches several offered tools: ['customer_c1_get_average_spend', "
        "'customer_c2_get_average_spend']" in message
    )
    assert message.endswith(f"Offered: {OFFERED}")


def test_exact_name_not_offered_is_a_script_error_unless_lenient() -> None:
    with pytest.raises(ScriptError, match="tool 'delete' matches no offered tool"):
        ScriptedModel([call("delete")]).request(_request())
    lenient = ScriptedModel([call("delete")], lenient=True)
    response = lenient.request(_request())
    assert response.message.tool_calls[0].name == "delete"
    with pytest.raises(ScriptError, match="glob 'del\\*'"):
        ScriptedModel([call("del*")], lenient=True).request(_request())


def test_several_calls_at_once_with_ids_and_argument_forms() -> None:
    model = ScriptedModel(
        [
            calls(
                call("search", {"name": "a"}, id="first"),
                call("search", '{"name": "raw"}'),
                call("search", lambda request: {"name": f"it{request.iteration}"}),
                call("search", lambda request: '{"name": "s"}'),
                call("search"),
            )
        ]
    )
    response = model.request(_request(iteration=4))
    assert response.finish_reason == "tool_calls"
    assert [(c.id, c.arguments) for c in response.message.tool_calls] == [
        ("first", '{"name": "a"}'),
        ("call_2", '{"name": "raw"}'),
        ("call_3", '{"name": "it4"}'),
        ("call_4", '{"name": "s"}'),
        ("call_5", "{}"),
    ]


def test_reply_and_structured_output_steps() -> None:
    class Answer(BaseModel):
        value: int

    model = ScriptedModel([reply("plain"), output(Answer(value=3)), output({"value": 4})])
    texts = [model.request(_request()).message.content for _ in range(3)]
    assert texts == ["plain", '{"value":3}', '{"value":4}']
    result = run(ScriptedModel([output({"value": 5})]), "go", output_type=Answer)
    assert result.output == Answer(value=5)


def test_expect_offered_includes_excludes_exactly() -> None:
    ok = ScriptedModel(
        [
            expect_offered(includes=["search", "customer_*"], excludes=["order_*"]),
            expect_offered(exactly=["search", "customer_c*_get_average_spend"]),
            reply("fine"),
        ]
    )
    assert ok.request(_request()).message.content == "fine"
    assert ok.position == 3


@pytest.mark.parametrize(
    ("step", "problem"),
    [
        (expect_offered(includes=["order_*"]), "expected 'order_*' to be offered"),
        (
            expect_offered(excludes=["customer_*"]),
            "expected 'customer_*' not to be offered, found "
            "['customer_c1_get_average_spend', 'customer_c2_get_average_spend']",
        ),
        (
            expect_offered(exactly=["search", "order_x"]),
            "expected exactly ['search', 'order_x']: missing ['order_x'], extra "
            "['customer_c1_get_average_spend', 'customer_c2_get_average_spend']",
        ),
    ],
)
def test_expect_offered_failures_name_the_offered_tools(step: Any, problem: str) -> None:
    model = ScriptedModel([step, reply("never")])
    with pytest.raises(ScriptError) as info:
        model.request(_request())
    message = str(info.value)
    assert message.startswith("step 1 (expect offered ")
    assert problem in message
    assert message.endswith(f"Offered: {OFFERED}")


def test_script_running_out_says_which_iteration_and_what_to_do() -> None:
    model = ScriptedModel([call("search")])
    with pytest.raises(ScriptError) as info:
        run(model, "go", tools=TOOLS)
    message = str(info.value)
    assert message.startswith(
        "script ran out: iteration 2 asked for a response but all 1 steps were used; "
        "add a step (e.g. reply(...))"
    )
    assert f"Offered tools: {OFFERED}" in message
    assert info.value.trace is not None and len(info.value.trace.calls) == 1


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_script_not_fully_consumed_names_the_unused_steps(driver: str) -> None:
    model = ScriptedModel([reply("early"), call("search"), expect_offered(includes=["x"])])
    runner = run if driver == "sync" else (lambda *a, **k: asyncio.run(arun(*a, **k)))
    with pytest.raises(ScriptError) as info:
        runner(model, "go", tools=TOOLS)
    assert str(info.value) == (
        "the run ended after 1 of 3 steps; not used: step 2 (call 'search'), step 3 "
        "(expect offered includes ['x']). The model answered before the script expected "
        "(or remove the extra steps)."
    )
    assert info.value.messages is not None and info.value.messages[-1].content == "early"


def test_require_exhausted_false_allows_leftover_steps() -> None:
    model = ScriptedModel([reply("early"), reply("never")], require_exhausted=False)
    assert run(model, "go").output == "early"
    assert [s.describe() for s in model.remaining] == ["reply 'never'"]


def test_records_every_request_and_resets() -> None:
    model = ScriptedModel([call("search", name="a"), reply("done")])
    run(model, "go", tools=TOOLS, options=LoopOptions(tool_choice="auto"))
    assert len(model.requests) == 2
    first, second = model.requests
    assert first.tool_names == tuple(t.__name__ for t in TOOLS)
    assert [d.name for d in first.tools] == list(first.tool_names)
    assert len(first.messages) == 1 and len(second.messages) == 3
    assert first.settings.tool_choice == ToolChoice.auto()
    model.reset()
    assert model.requests == [] and model.position == 0
    run(model, "go", tools=TOOLS)
    assert model.requests[0].iteration == 1


def test_async_request_is_the_sync_request() -> None:
    model = ScriptedModel([reply("a")])
    response = asyncio.run(model.arequest(_request()))
    assert response.message.content == "a" and len(model.requests) == 1


def test_steps_may_be_given_as_data() -> None:
    model = ScriptedModel([{"call": "search", "args": {"name": "z"}}, {"reply": "ok"}])
    result = run(model, "go", tools=TOOLS)
    assert json.loads(result.trace.calls[0].arguments) == {"name": "z"}
    with pytest.raises(ScriptError, match=r"^step 2: "):
        ScriptedModel([reply("x"), {"bogus": 1}])
    from_data = ScriptedModel.from_data([{"reply": "hi"}], name="m")
    assert from_data.name == "m" and from_data.request(_request()).message.content == "hi"


def test_long_offered_lists_are_shortened_in_messages() -> None:
    names = tuple(f"tool_{i}" for i in range(35))
    with pytest.raises(ScriptError) as info:
        ScriptedModel([call("nothing_*")]).request(_request(names))
    assert "tool_19 and 15 more" in str(info.value) and "tool_20" not in str(info.value)
    with pytest.raises(ScriptError, match=r"Offered: \(none\)"):
        ScriptedModel([call("x")]).request(_request(()))


def test_a_missed_name_or_glob_suggests_the_closest_offered_tool() -> None:
    names = ("search_customer", "list_orders")
    with pytest.raises(
        ScriptError,
        match=r"'serch_customer' matches no offered tool \(did you mean 'search_customer'\?\)",
    ):
        ScriptedModel([call("serch_customer")]).request(_request(names))
    with pytest.raises(
        ScriptError,
        match=r"glob 'list_ordr\*' matches no offered tool \(did you mean 'list_orders'",
    ):
        ScriptedModel([call("list_ordr*")]).request(_request(names))


def test_an_object_that_is_no_step_is_a_script_error() -> None:
    from harness import ScriptedModel, ScriptError, reply

    with pytest.raises(ScriptError, match=r"step 2: <object object at .*> is not a step"):
        ScriptedModel([reply("x"), object()])  # type: ignore[list-item]
