"""Tool control flow: return_direct tools, loop signals, @facade_class objects as tools."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from loop_helpers import Recorder, add, assert_history_well_formed, boom, drive, echo
from pydantic import BaseModel

from harness import (
    HarnessError,
    LoopSignal,
    OutputValidationError,
    RestartRequired,
    ToolDefinitionError,
    VisibilityExpansionRequired,
    facade_class,
    llm_tool,
    return_direct,
)
from harness.injection import agent_tool
from harness.loop import (
    RETURN_DIRECT,
    LoopPhase,
    ModelResponse,
    RunFinished,
    build_core,
    is_return_direct,
)
from harness.loop._execution import execute_sync
from harness.messages import AssistantMessage, ToolCall, ToolMessage
from harness.models import ScriptedModel, call, calls, reply
from harness.tools import Tool, Toolset, as_tool

DRIVERS = ["sync", "async"]


class Stop(LoopSignal):
    """A user's own signal."""


@llm_tool
def quote(item: str) -> str:
    """Quote a price."""
    return f"{item}: 4 EUR"


@llm_tool
def stop(why: str) -> str:
    """Stop the run."""
    raise Stop(why)


@llm_tool
def as_json(n: int) -> dict[str, int]:
    """A JSON result."""
    return {"n": n}


class Answer(BaseModel):
    n: int


# -- return_direct ----------------------------------------------------------------------


def test_return_direct_marks_a_copy() -> None:
    marked = return_direct(quote)
    assert marked.metadata[RETURN_DIRECT] is True and is_return_direct(marked)
    assert not is_return_direct(as_tool(quote)) and not is_return_direct(None)
    decorated = as_tool(llm_tool(name="x", metadata={"return_direct": True})(lambda: "x"))
    assert is_return_direct(decorated)


@pytest.mark.parametrize("driver", DRIVERS)
def test_return_direct_ends_the_run_with_its_result(driver: str) -> None:
    rec = Recorder()
    model = ScriptedModel([call("quote", item="tea")])
    result = drive(driver, model, "price?", tools=[return_direct(quote)], observers=[rec])
    assert result.output == "tea: 4 EUR"
    assert result.iterations == 1  # no further model turn
    assert isinstance(result.messages[-1], ToolMessage)
    assert_history_well_formed(result.messages)
    finished = [e for e in rec.events if isinstance(e, RunFinished)]
    assert len(finished) == 1 and finished[0].return_direct == "quote"
    assert finished[0].output == "tea: 4 EUR"


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("direct_first", [True, False])
def test_return_direct_called_in_parallel_with_another_tool(
    driver: str, direct_first: bool
) -> None:
    pair = [call("quote", item="tea"), call("echo", text="side effect")]
    model = ScriptedModel([calls(*(pair if direct_first else pair[::-1]))])
    result = drive(driver, model, "go", tools=[return_direct(quote), echo])
    assert result.output == "tea: 4 EUR"
    assert result.iterations == 1
    recorded = {c.name: c.content for c in result.trace.calls}
    assert recorded == {"quote": "tea: 4 EUR", "echo": "side effect"}  # both ran
    assert_history_well_formed(result.messages)


def test_two_return_direct_calls_in_one_turn_the_first_in_call_order_wins() -> None:
    model = ScriptedModel([calls(call("echo", text="first"), call("quote", item="tea"))])
    result = drive("sync", model, "go", tools=[return_direct(quote), return_direct(echo)])
    assert result.output == "first"


def test_a_failed_return_direct_call_gives_the_model_its_turn() -> None:
    model = ScriptedModel([call("boom", reason="no stock"), reply("Sorry, no stock.")])
    result = drive("sync", model, "go", tools=[return_direct(boom)])
    assert result.output == "Sorry, no stock."
    assert result.iterations == 2
    assert result.trace.calls[0].is_error


def test_return_direct_output_is_parsed_with_the_output_type() -> None:
    model = ScriptedModel([call("as_json", n=3)])
    result = drive("sync", model, "go", tools=[return_direct(as_json)], output_type=Answer)
    assert result.output == Answer(n=3)


def test_return_direct_result_not_matching_the_output_type_is_a_clear_error() -> None:
    model = ScriptedModel([call("quote", item="tea")])
    with pytest.raises(OutputValidationError, match="return_direct tool 'quote'") as info:
        drive("sync", model, "go", tools=[return_direct(quote)], output_type=Answer)
    assert info.value.trace is not None and info.value.trace.calls[0].name == "quote"
    assert_history_well_formed(info.value.messages)


def test_core_phase_after_return_direct_is_finished() -> None:
    core = build_core("go", tools=[return_direct(quote)])
    core.begin_iteration()
    tool_call = ToolCall(id="c1", name="quote", arguments='{"item": "x"}')
    pending = core.receive_response(
        ModelResponse(message=AssistantMessage(tool_calls=(tool_call,)))
    )
    core.receive_results(execute_sync(pending, core.options, _no_pool))
    assert core.phase is LoopPhase.FINISHED and core.result().output == "x: 4 EUR"


def _no_pool() -> ThreadPoolExecutor:
    raise AssertionError("one call needs no pool")


# -- loop signals -----------------------------------------------------------------------


def test_restart_required_is_a_loop_signal() -> None:
    assert issubclass(RestartRequired, LoopSignal)
    assert issubclass(VisibilityExpansionRequired, LoopSignal)
    assert issubclass(LoopSignal, HarnessError)


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_signal_raised_in_a_tool_ends_the_run_instead_of_an_error_result(driver: str) -> None:
    model = ScriptedModel([calls(call("stop", why="enough"), call("add", a=1, b=2)), reply("x")])
    with pytest.raises(Stop, match="enough") as info:
        drive(driver, model, "go", tools=[stop, add])
    exc = info.value
    records = {c.name: c for c in exc.trace.calls}
    assert records["stop"].error_kind == "signal" and records["stop"].exception is exc
    assert records["add"].content == "3"  # the other call of the turn is recorded too
    assert_history_well_formed(exc.messages)
    assert len(exc.trace.iterations) == 1  # the model never read the signal


def test_a_signal_is_never_retried() -> None:
    attempts: list[int] = []

    @llm_tool
    def flaky() -> str:
        """Signals."""
        attempts.append(1)
        raise Stop("now")

    model = ScriptedModel([call("flaky")])
    with pytest.raises(Stop):
        drive("sync", model, "go", tools=[flaky], tool_retries=3, retry_on=(Exception,))
    assert attempts == [1]


def _nested(inner_tool: Tool) -> Tool:
    return agent_tool(
        "helper",
        "A helper agent.",
        model=lambda: ScriptedModel([call(inner_tool.name, why="deep")]),
        tools=[inner_tool],
    )


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_signal_from_a_nested_agent_reaches_the_parent_run(driver: str) -> None:
    outer = _nested(as_tool(stop))
    model = ScriptedModel([call("helper", task="t"), reply("never")])
    with pytest.raises(Stop, match="deep") as info:
        drive(driver, model, "go", tools=[outer])
    assert info.value.trace.calls[0].name == "helper"
    assert info.value.trace.calls[0].error_kind == "signal"
    (child,) = info.value.trace.children  # the nested run's trace stays nested
    assert child.calls[0].name == "stop" and child.calls[0].error_kind == "signal"
    assert_history_well_formed(info.value.messages)


def test_an_ordinary_error_in_a_nested_agent_stays_an_error_result() -> None:
    outer = _nested(as_tool(boom).with_name("boom"))
    model = ScriptedModel([call("helper", task="t"), reply("handled")])
    result = drive("sync", model, "go", tools=[outer])
    assert result.output == "handled"  # the nested run's script ran out: an agent_error


# -- @facade_class objects where a tool is accepted -------------------------------------


@facade_class(description="Billing tools.")
class Billing:
    @llm_tool
    def refund(self, invoice: str) -> str:
        """Refund an invoice."""
        return f"refunded {invoice}"

    @llm_tool
    def invoices(self) -> list[str]:
        """List invoices."""
        return ["A"]


def test_a_facade_class_instance_or_class_becomes_one_facade() -> None:
    assert Toolset([Billing()]).names == ("billing",)
    assert Toolset([Billing]).names == ("billing",)
    assert as_tool(Billing(), name="pay").name == "pay"


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_facade_object_unfolds_in_a_run(driver: str) -> None:
    model = ScriptedModel([call("billing"), call("refund", invoice="A"), reply("done")])
    result = drive(driver, model, "go", tools=[Billing()])
    assert result.trace.iterations[0].offered == ("billing",)
    assert "refund" in result.trace.iterations[1].offered
    assert result.trace.calls[1].content == "refunded A"


def test_a_plain_object_without_a_facade_declaration_is_still_refused() -> None:
    class Plain:
        @llm_tool
        def x(self) -> str:
            """X."""
            return "x"

    with pytest.raises(ToolDefinitionError, match="expected a Tool, a function"):
        Toolset([Plain()])


def test_a_facade_under_construction_is_accepted_as_a_tool() -> None:
    from harness.injection import Facade

    built = Facade("billing_ops", "Billing operations.", tools=[quote])
    assert Toolset([built]).names == ("billing_ops",)
