"""Events delivered to observers, and the trace with its JSON form."""

from __future__ import annotations

import json

from loop_helpers import Recorder, echo, extra

from harness.injection import EntityDiscovery, tool_provider
from harness.loop import (
    ChangeRecord,
    Event,
    InjectionContext,
    InjectionStrategy,
    IterationStarted,
    ModelResponded,
    ProviderDiscovered,
    RunFinished,
    ToolCalled,
    ToolFailed,
    ToolsetChange,
    ToolsInjected,
    ToolsRemoved,
    Trace,
    run,
)
from harness.models import ScriptedModel, call, calls, reply
from harness.tools import as_tool, llm_tool


@tool_provider
class Ticket:
    def __init__(self, id: str) -> None:
        self.id = id

    @llm_tool
    def close(self) -> str:
        """Close the ticket."""
        return f"closed {self.id}"


@llm_tool
def open_ticket() -> Ticket:
    """Open a ticket."""
    return Ticket("t-1")


class SwapEcho(InjectionStrategy):
    """After ``close`` runs: remove ``echo``, add ``extra``."""

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        assert context.call is not None
        if context.call.name.endswith("_close"):
            return ToolsetChange(add=(as_tool(extra),), remove=("echo",), reason="closed")
        return None


def _run() -> tuple[Recorder, list[Event], Trace]:
    rec = Recorder()
    model = ScriptedModel(
        [
            calls(call("open_ticket"), call("echo", text="x", id="e1")),
            calls(call("ticket_t1_close"), call("nope")),
            reply("all done"),
        ],
        lenient=True,
    )
    result = run(
        model,
        "go",
        tools=[open_ticket, echo],
        strategies=[EntityDiscovery(), SwapEcho()],
        observers=[rec],
    )
    return rec, rec.events, result.trace


def test_events_are_delivered_in_order() -> None:
    rec, events, trace = _run()
    assert rec.kinds == [
        "IterationStarted",
        "ModelResponded",
        "ToolCalled",
        "ProviderDiscovered",
        "ToolsInjected",
        "ToolCalled",
        "IterationStarted",
        "ModelResponded",
        "ToolCalled",
        "ToolsRemoved",
        "ToolsInjected",
        "ToolFailed",
        "IterationStarted",
        "ModelResponded",
        "RunFinished",
    ]
    assert events == trace.events
    started = [e for e in events if isinstance(e, IterationStarted)]
    assert [e.offered for e in started] == [
        ("open_ticket", "echo"),
        ("open_ticket", "echo", "ticket_t1_close"),
        ("open_ticket", "ticket_t1_close", "extra"),
    ]
    responded = [e for e in events if isinstance(e, ModelResponded)]
    assert responded[0].tool_calls == ("open_ticket", "echo")
    assert responded[0].finish_reason == "tool_calls" and responded[2].finish_reason == "stop"
    called = [e for e in events if isinstance(e, ToolCalled)]
    assert [(e.name, e.iteration) for e in called] == [
        ("open_ticket", 1),
        ("echo", 1),
        ("ticket_t1_close", 2),
    ]
    assert called[1].call_id == "e1" and called[1].arguments == '{"text": "x"}'
    discovered = next(e for e in events if isinstance(e, ProviderDiscovered))
    assert (discovered.provider, discovered.instance_id, discovered.depth) == ("Ticket", "t-1", 1)
    assert discovered.tool_names == ("ticket_t1_close",)
    injected = [e for e in events if isinstance(e, ToolsInjected)]
    assert injected[0].strategy == "discovery" and injected[0].after_call == "open_ticket"
    assert injected[1].tool_names == ("extra",) and injected[1].reason == "closed"
    removed = next(e for e in events if isinstance(e, ToolsRemoved))
    assert (removed.tool_names, removed.strategy, removed.iteration) == (("echo",), "SwapEcho", 2)
    failed = next(e for e in events if isinstance(e, ToolFailed))
    assert failed.error_kind == "unknown_tool" and failed.name == "nope"
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.output == "all done"


def test_trace_records_offered_calls_and_changes_with_causes() -> None:
    _, _, trace = _run()
    assert len(trace) == 3 and [it.index for it in trace] == [1, 2, 3]
    assert trace.initial_tools == ("open_ticket", "echo")
    first, second, third = trace.iterations
    assert [c.name for c in first.calls] == ["open_ticket", "echo"]
    assert first.calls[0].value.id == "t-1"  # the Python object is kept
    assert first.injected == ("ticket_t1_close",) and first.removed == ()
    assert second.injected == ("extra",) and second.removed == ("echo",)
    assert second.changes[0] == ChangeRecord(
        strategy="SwapEcho",
        reason="closed",
        added=("extra",),
        removed=("echo",),
        after_call="ticket_t1_close",
        after_call_id=second.calls[0].id,
    )
    assert third.answer == "all done" and third.calls == ()
    assert trace.injected == ["ticket_t1_close", "extra"]
    assert [c.name for c in trace.calls] == ["open_ticket", "echo", "ticket_t1_close", "nope"]
    assert len(trace.changes) == 2
    assert [e.kind for e in trace.events_of(ToolsInjected)] == ["ToolsInjected"] * 2


def test_trace_to_dict_is_json_serialisable() -> None:
    _, _, trace = _run()
    data = trace.to_dict()
    text = json.dumps(data)
    again = json.loads(text)
    assert again == data
    assert again["initial_tools"] == ["open_ticket", "echo"]
    assert again["iterations"][1]["offered"] == ["open_ticket", "echo", "ticket_t1_close"]
    assert again["iterations"][0]["changes"][0]["added"] == ["ticket_t1_close"]
    assert again["iterations"][1]["calls"][1]["error_kind"] == "unknown_tool"
    assert again["events"][3] == {
        "kind": "ProviderDiscovered",
        "iteration": 1,
        "provider": "Ticket",
        "provider_class": "test_loop_trace.Ticket",
        "provider_count": 1,
        "instance_id": "t-1",
        "tool_names": ["ticket_t1_close"],
        "depth": 1,
    }
    assert again["children"] == [] and again["restarts"] == 0


def test_nested_traces_serialise() -> None:
    child = Trace(initial_tools=("a",))
    parent = Trace(children=[child])
    assert parent.to_dict()["children"][0]["initial_tools"] == ["a"]


def test_call_records_offer_the_parsed_arguments_and_none_when_malformed() -> None:
    @llm_tool
    def add(a: int, b: int = 0) -> int:
        """Add."""
        return a + b

    model = ScriptedModel(
        [
            calls(
                call("add", {"a": 1, "b": 2}, id="ok"),
                call("add", '{"a": 1,', id="broken"),
                call("add", "[1, 2]", id="list"),
                call("add", "[" * 5000, id="deep"),
                call("add", "  ", id="blank"),
            ),
            reply("done"),
        ],
    )
    result = run(model, "go", tools=[add])
    args = {c.id: c.args for c in result.trace.calls}
    assert args == {"ok": {"a": 1, "b": 2}, "broken": None, "list": None, "deep": None, "blank": {}}
    assert result.trace.calls[1].arguments == '{"a": 1,'  # the raw text is kept
