"""The user channel (for_user, silent, UserNotified, user_outputs) and empty results."""

from __future__ import annotations

import pytest
from loop_helpers import Recorder, assert_history_well_formed, drive

from harness import LoopSignal, ToolResult, llm_tool
from harness.loop import EMPTY_RESULT, UserNotified
from harness.messages import ToolMessage
from harness.models import ScriptedModel, call, calls, reply
from harness.scenarios import timeline_rows

DRIVERS = ["sync", "async"]


@llm_tool
def tell(text: str) -> ToolResult:
    """Tell the user."""
    return ToolResult.user(text)


@llm_tool
def quiet(text: str) -> ToolResult:
    """Background work."""
    return ToolResult.background("done", user_content=text)


@llm_tool
def model_only(text: str) -> ToolResult:
    """For the model only."""
    return ToolResult.plain(text)


@llm_tool
def nothing() -> str:
    """Returns an empty string."""
    return ""


@llm_tool
def blank_error() -> ToolResult:
    """An error without a message."""
    return ToolResult.error("")


@llm_tool
def raises_blank() -> str:
    """Raises an exception whose text is empty."""
    raise ValueError()


class Halt(LoopSignal):
    pass


def test_helpers_build_the_common_shapes() -> None:
    user = ToolResult.user("hi")
    assert (user.for_llm, user.for_user, user.silent) == ("hi", "hi", False)
    plain = ToolResult.plain("x")
    assert (plain.for_llm, plain.for_user) == ("x", None)
    background = ToolResult.background("ok", user_content="shown?")
    assert background.silent and background.for_user is None
    assert background.user_content == "shown?"  # kept, never delivered
    error = ToolResult.error("bad")
    assert error.is_error and error.for_user is None


@pytest.mark.parametrize("driver", DRIVERS)
def test_user_content_reaches_the_user_channel_in_order(driver: str) -> None:
    rec = Recorder()
    model = ScriptedModel(
        [
            calls(call("tell", text="one"), call("quiet", text="hidden"), call("tell", text="two")),
            call("model_only", text="secret plan"),
            call("tell", text="three"),
            reply("end"),
        ]
    )
    result = drive(driver, model, "go", tools=[tell, quiet, model_only], observers=[rec])
    assert result.user_outputs == ["one", "two", "three"]
    notified = [e for e in rec.events if isinstance(e, UserNotified)]
    assert [(e.name, e.content) for e in notified] == [
        ("tell", "one"),
        ("tell", "two"),
        ("tell", "three"),
    ]
    assert notified[0].call_id == result.trace.calls[0].id
    quiet_record = result.trace.calls[1]
    assert quiet_record.silent and quiet_record.user_content == "hidden"
    assert quiet_record.to_dict()["silent"] is True
    assert "user_content" not in result.trace.calls[3].to_dict()  # model_only: no user text
    rows = timeline_rows(result.trace)
    assert rows[0].to_user == ("tell", "tell") and "to_user=tell,tell" in rows[0].render()
    assert rows[1].to_user == ()


def test_a_blank_user_content_is_not_delivered() -> None:
    @llm_tool
    def blank() -> ToolResult:
        """Blank user text."""
        return ToolResult(content="ok", user_content="   ")

    result = drive("sync", ScriptedModel([call("blank"), reply("x")]), "go", tools=[blank])
    assert result.user_outputs == []


def test_a_signal_result_never_speaks_to_the_user() -> None:
    @llm_tool
    def halt() -> str:
        """Halts."""
        raise Halt("stop")

    model = ScriptedModel([calls(call("tell", text="before"), call("halt"))])
    with pytest.raises(Halt) as info:
        drive("sync", model, "go", tools=[tell, halt])
    assert [e.content for e in info.value.trace.events_of(UserNotified)] == ["before"]  # type: ignore[attr-defined]


# -- empty model-facing content ----------------------------------------------------------


@pytest.mark.parametrize("driver", DRIVERS)
def test_an_empty_result_is_never_sent_as_an_empty_string(driver: str) -> None:
    model = ScriptedModel([call("nothing"), reply("x")])
    result = drive(driver, model, "go", tools=[nothing])
    (message,) = [m for m in result.messages if isinstance(m, ToolMessage)]
    assert message.content == EMPTY_RESULT == "(empty result)"
    assert result.trace.calls[0].content == "(empty result)"
    assert result.trace.calls[0].value == ""  # the tool's value is kept as is
    assert model.requests[1].messages[-1].content == "(empty result)"  # what the model read


def test_an_empty_error_names_the_tool() -> None:
    result = drive(
        "sync", ScriptedModel([call("blank_error"), reply("x")]), "go", tools=[blank_error]
    )
    record = result.trace.calls[0]
    assert record.is_error
    assert record.content == "(empty error result: tool 'blank_error' failed without a message)"


def test_an_error_with_an_empty_message_is_never_blank() -> None:
    model = ScriptedModel([call("raises_blank"), reply("x")])
    result = drive("sync", model, "go", tools=[raises_blank])
    content = result.trace.calls[0].content
    assert content.strip() and "raises_blank" in content
    assert_history_well_formed(result.messages)


def test_whitespace_only_content_counts_as_empty() -> None:
    @llm_tool
    def spaces() -> str:
        """Spaces."""
        return "   \n"

    result = drive("sync", ScriptedModel([call("spaces"), reply("x")]), "go", tools=[spaces])
    assert result.trace.calls[0].content == EMPTY_RESULT


def test_model_content_falls_back_to_the_exception_text() -> None:
    from harness.loop._channels import model_content

    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    with_text = ToolResult(content=" ", is_error=True, exception=ValueError("disk full"))
    assert model_content(with_text, "save") == "Tool 'save' failed: ValueError: disk full"
    broken = ToolResult(content="", is_error=True, exception=Unprintable())
    assert model_content(broken, "save") == (
        "(empty error result: tool 'save' failed without a message)"
    )
    assert model_content(ToolResult(content="fine"), "save") == "fine"
