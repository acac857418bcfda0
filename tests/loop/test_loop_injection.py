"""Context objects and the progress emitter through the loop (both drivers)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from harness import (
    ChatContext,
    Emitter,
    Injected,
    ScriptedModel,
    Secret,
    ToolResult,
    arun,
    call,
    calls,
    llm_tool,
    reply,
    run,
)
from harness._errors import UsageError
from harness.loop import LoopOptions, ToolCalled, ToolFailed, UserNotified
from harness.messages import ToolCall, ToolMessage
from harness.tools import Toolset, as_tool


class Store:
    def __init__(self, name: str) -> None:
        self.name = name


@llm_tool
def where(chat: ChatContext, store: Injected[Store]) -> str:
    """Where the conversation happens."""
    return f"{chat.channel}/{store.name}"


@llm_tool
def export(pages: int, progress: Emitter) -> ToolResult:
    """Export pages."""
    for page in range(1, pages + 1):
        progress.emit(f"page {page}/{pages}")
    return ToolResult.user(f"exported {pages}")


CHAT = ChatContext(channel="slack", chat_id="C-loop-chat-0042")


@llm_tool
def send(text: str, chat: ChatContext) -> str:
    """Send a message to the current chat."""
    return f"sent to {chat.channel}/{chat.chat_id}: {text}"


def test_run_objects_are_injected_and_what_is_not_secret_is_shown() -> None:
    """Injected values are kept from the schema; a result shows them unless they are
    secrets (a ``Secret``, a credential name or shape): a store's name, a chat id."""
    model = ScriptedModel([call("where"), call("send", text="hi"), reply("ok")])
    result = run(model, "go", tools=[where, send], context_objects=[CHAT, Store("run-store")])
    assert result.trace.calls[0].content == "slack/run-store"
    assert result.trace.calls[1].content == "sent to slack/C-loop-chat-0042: hi"
    assert model.requests[0].tools[0].parameters["properties"] == {}
    assert "chat" not in str(model.requests[0].tools[1].parameters)


def test_a_secret_in_an_injected_object_stays_hidden_from_results() -> None:
    model = ScriptedModel([call("where"), call("send", text="hi"), reply("ok")])
    secret_chat = ChatContext(channel="slack", chat_id=Secret("C-secret-chat-0042"))
    secret_store = Store(Secret("secret-store-name-1"))
    result = run(model, "go", tools=[where, send], context_objects=[secret_chat, secret_store])
    assert result.trace.calls[0].content == "slack/[hidden]"
    assert result.trace.calls[1].content == "sent to slack/[hidden]: hi"
    assert result.trace.calls[0].value == "slack/secret-store-name-1"  # the value is kept
    assert "C-secret-chat-0042" not in repr(result.trace.to_dict())


def test_arun_injects_too() -> None:
    model = ScriptedModel([call("where"), reply("ok")])
    result = asyncio.run(
        arun(model, "go", tools=[where], context_objects=[CHAT, Store("async-store")])
    )
    assert result.trace.calls[0].value == "slack/async-store"
    assert result.trace.calls[0].content == "slack/async-store"


def test_call_beats_run_beats_toolset_beats_tool() -> None:
    tool = as_tool(where, context=[Store("tool")])
    toolset = Toolset([tool], context=[Store("toolset")])

    def per_call(tool_call: ToolCall) -> list[object]:
        return [Store("call")] if tool_call.id == "c1" else []

    model = ScriptedModel(
        [call("where", id="c1"), call("where", id="c2"), call("where", id="c3"), reply("ok")]
    )
    result = run(
        model,
        "go",
        tools=toolset,
        context_objects=[CHAT, Store("run")],
        call_context_objects=per_call,
    )
    assert [c.content for c in result.trace.calls[:2]] == ["slack/call", "slack/run"]
    toolset_only = run(
        ScriptedModel([call("where"), reply("ok")]), "go", tools=toolset, context_objects=[CHAT]
    )
    assert toolset_only.trace.calls[0].content == "slack/toolset"
    tool_only = run(
        ScriptedModel([call("where"), reply("ok")]), "go", tools=[tool], context_objects=[CHAT]
    )
    assert tool_only.trace.calls[0].content == "slack/tool"


def test_a_missing_object_is_an_error_result_and_the_run_goes_on() -> None:
    events: list[object] = []
    model = ScriptedModel([call("where"), reply("no chat")])
    result = run(model, "go", tools=[where], context_objects=[CHAT], observers=[events.append])
    record = result.trace.calls[0]
    assert record.is_error and record.error_kind == "missing_context"
    assert "parameter 'store' takes a Store context object" in record.content
    assert result.output == "no chat"
    failed = [e for e in events if isinstance(e, ToolFailed)]
    assert [e.error_kind for e in failed] == ["missing_context"]
    tool_message = next(m for m in result.messages if isinstance(m, ToolMessage))
    assert tool_message.content == record.content and "C-loop-chat-0042" not in record.content


def test_bad_run_objects_are_refused_before_the_run() -> None:
    with pytest.raises(UsageError, match="items 0 and 1 are both Store"):
        run(ScriptedModel([reply("x")]), "go", context_objects=[Store("a"), Store("b")])
    with pytest.raises(UsageError, match="call_context_objects must be a function"):
        LoopOptions(call_context_objects=[Store("a")])  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="is the class Store"):
        LoopOptions(context_objects=[Store])


def test_a_bad_call_hook_ends_the_run_with_the_trace() -> None:
    def per_call(tool_call: ToolCall) -> list[object]:
        return [Store("a"), Store("b")]

    model = ScriptedModel([call("where"), reply("never")])
    with pytest.raises(UsageError, match="invalid context objects on the call") as info:
        run(model, "go", tools=[where], context_objects=[CHAT], call_context_objects=per_call)
    assert info.value.trace is not None
    assert [c.error_kind for c in info.value.trace.calls] == ["not_run"]


# -- the emitter --------------------------------------------------------------------------


def test_progress_chunks_reach_the_user_channel_in_order_before_the_result() -> None:
    events: list[object] = []
    model = ScriptedModel([call("export", pages=2, id="e1"), reply("done")])
    result = run(model, "go", tools=[export], observers=[events.append])
    assert result.user_outputs == ["page 1/2", "page 2/2", "exported 2"]
    notified = [e for e in events if isinstance(e, UserNotified)]
    assert [(e.call_id, e.progress, e.content) for e in notified] == [
        ("e1", True, "page 1/2"),
        ("e1", True, "page 2/2"),
        ("e1", False, "exported 2"),
    ]
    called = next(i for i, e in enumerate(events) if isinstance(e, ToolCalled))
    assert events.index(notified[0]) < called  # streamed while the tool ran
    assert all("page" not in str(m.content) for m in result.messages if isinstance(m, ToolMessage))


def test_parallel_calls_stream_attributed_to_their_call_ids() -> None:
    barrier = threading.Barrier(2, timeout=5)

    @llm_tool
    def step(name: str, progress: Emitter) -> str:
        """Step."""
        barrier.wait()  # both calls run at once, in two threads
        progress.emit(f"{name} started")
        return name

    events: list[object] = []
    model = ScriptedModel(
        [calls(call("step", name="a", id="ca"), call("step", name="b", id="cb")), reply("ok")]
    )
    result = run(model, "go", tools=[step], observers=[events.append])
    pairs = {(e.call_id, e.content) for e in events if isinstance(e, UserNotified)}
    assert pairs == {("ca", "a started"), ("cb", "b started")}
    assert sorted(result.user_outputs) == ["a started", "b started"]


def test_async_tools_stream_through_arun() -> None:
    @llm_tool
    async def slow(progress: Emitter) -> str:
        """Slow."""
        progress.emit("working")
        await asyncio.sleep(0)
        return "ok"

    result = asyncio.run(arun(ScriptedModel([call("slow"), reply("ok")]), "go", tools=[slow]))
    assert result.user_outputs == ["working"]


def test_an_emitter_used_after_its_call_returned_is_refused() -> None:
    kept: list[Emitter] = []

    @llm_tool
    def start(progress: Emitter) -> str:
        """Start."""
        kept.append(progress)
        return "started"

    @llm_tool
    def later() -> str:
        """Later."""
        kept[0].emit("too late")
        return "unreachable"

    model = ScriptedModel([call("start", id="s1"), call("later"), reply("ok")])
    result = run(model, "go", tools=[start, later])
    record = result.trace.calls[1]
    assert record.is_error and "UsageError" in record.content
    assert "the Emitter of call 's1' (tool 'start') was used after the call returned" in (
        record.content
    )
    assert result.user_outputs == []
    with pytest.raises(UsageError, match="used after the call returned"):
        kept[0].emit("after the run")


def test_a_timed_out_tool_cannot_speak_after_its_timeout_result() -> None:
    release, finished = threading.Event(), threading.Event()
    refused: list[UsageError] = []

    @llm_tool
    def stuck(progress: Emitter) -> str:
        """Stuck."""
        progress.emit("started")
        release.wait(5)
        try:
            progress.emit("late")
        except UsageError as exc:
            refused.append(exc)
        finished.set()
        return "too late"

    model = ScriptedModel([call("stuck", id="s1"), reply("gave up")])
    result = run(model, "go", tools=[stuck], tool_timeout=0.2)
    release.set()
    assert finished.wait(5)
    assert result.trace.calls[0].error_kind == "timeout"
    assert result.user_outputs == ["started"]  # the chunk sent in time was delivered
    assert len(refused) == 1 and "call 's1'" in str(refused[0])
