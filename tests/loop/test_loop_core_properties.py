"""Property test: the sans-IO core driven by random scripts, with no model and no tool I/O."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings, strategies as st
from loop_helpers import assert_history_well_formed

from harness import MaxIterationsExceeded
from harness.loop import (
    InjectionContext,
    InjectionStrategy,
    LoopCore,
    LoopOptions,
    ModelResponse,
    StrategyWarning,
    ToolsetChange,
)
from harness.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from harness.tools import Tool, ToolResult, Toolset

_SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}


def _tool(name: str) -> Tool:
    return Tool.from_schema(name, f"tool {name}", _SCHEMA, lambda args: name)


class Grow(InjectionStrategy):
    """``t0`` injects the next pool tool; ``t1`` removes the newest injected one."""

    def __init__(self) -> None:
        self.pool = [_tool(f"x{i}") for i in range(6)]
        self.log: list[tuple[int, str]] = []
        self.added: dict[int, list[str]] = {}
        self.removed: dict[int, list[str]] = {}

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        assert context.call is not None and context.result is not None
        self.log.append((context.iteration, context.call.id))
        if context.result.is_error:
            return None
        if context.call.name == "t0" and self.pool:
            tool = self.pool.pop(0)
            self.added.setdefault(context.iteration, []).append(tool.name)
            return ToolsetChange(add=(tool,), reason="t0 called")
        if context.call.name == "t1":
            injected = [n for n in context.offered if n.startswith("x")]
            if injected:
                self.removed.setdefault(context.iteration, []).append(injected[-1])
                return ToolsetChange(remove=(injected[-1],), reason="t1 called")
        return None


call_spec = st.fixed_dictionaries(
    {
        "target": st.one_of(st.integers(0, 20), st.just("ghost")),
        "id": st.sampled_from(["a", "b", "c", ""]),
        "arguments": st.sampled_from(["{}", "{bad json", '{"surprise": 1}', ""]),
        "fails": st.booleans(),
    }
)
turn = st.one_of(st.lists(call_spec, min_size=1, max_size=4), st.text(max_size=5))


@settings(max_examples=50, deadline=None)
@given(script=st.lists(turn, max_size=7), max_iterations=st.integers(1, 6))
def test_core_invariants_over_random_scripts(script: list[Any], max_iterations: int) -> None:
    strategy = Grow()
    core = LoopCore(
        messages=[UserMessage(content="start")],
        toolset=Toolset([_tool("t0"), _tool("t1"), _tool("t2")]),
        strategy=strategy,
        options=LoopOptions(max_iterations=max_iterations),
    )
    requests = []
    turns = iter(script)
    snapshot: list[Any] = list(core.messages)
    renamed = 0
    try:
        while not core.finished:
            request = core.begin_iteration()
            requests.append(request)
            assert request.tool_names == core.toolset.names
            assert list(request.messages) == snapshot
            step = next(turns, "final")
            if isinstance(step, str):
                core.receive_response(ModelResponse(message=AssistantMessage(content=step)))
                break
            names = request.tool_names
            tool_calls = tuple(
                ToolCall(
                    id=c["id"],
                    name=c["target"] if c["target"] == "ghost" else names[c["target"] % len(names)],
                    arguments=c["arguments"],
                )
                for c in step
            )
            before = len(strategy.log)
            pending = core.receive_response(
                ModelResponse(
                    message=AssistantMessage(tool_calls=tool_calls), finish_reason="tool_calls"
                )
            )
            assistant = core.messages[len(snapshot)]
            assert isinstance(assistant, AssistantMessage)
            ids = [c.id for c in assistant.tool_calls]
            for old, new in zip(tool_calls, ids, strict=True):
                # an empty id is generated quietly; a reused id is renamed with a warning
                assert new == old.id or not old.id or new.startswith(f"{old.id}_dup")
                renamed += "_dup" in new
            assert [p.call.id for p in pending] == ids
            results = []
            for spec, item in zip(step, pending, strict=True):
                if item.immediate is not None:
                    assert spec["target"] == "ghost" or spec["arguments"] in (
                        "{bad json",
                        '{"surprise": 1}',
                    )
                    results.append((item.immediate, 0))
                elif spec["fails"]:
                    results.append((ToolResult.error("it broke", kind="exception"), 1))
                else:
                    results.append((ToolResult.ok({"from": item.call.name}), 1))
            core.receive_results(results)
            # strategy asked once per call, in call order, in this iteration
            assert strategy.log[before:] == [(request.iteration, i) for i in ids]
            # append-only: the old history is a prefix, then one assistant + one tool msg per call
            assert core.messages[: len(snapshot)] == snapshot
            new = core.messages[len(snapshot) :]
            assert len(new) == 1 + len(ids)
            assert [m.tool_call_id for m in new[1:] if isinstance(m, ToolMessage)] == ids
            assert_history_well_formed(core.messages)
            snapshot = list(core.messages)
        result = core.result()
        trace, messages = result.trace, result.messages
        assert result.iterations == len(requests)
    except MaxIterationsExceeded as exc:
        error = exc
    else:
        error = None
    if error is not None:
        assert len(requests) == max_iterations
        assert error.trace is core.trace and error.messages == core.messages
        assert error.trace.events[-1].kind == "LimitReached"
        trace, messages = error.trace, list(error.messages)

    assert_history_well_formed(messages)
    assert [it.offered for it in trace] == [r.tool_names for r in requests]
    # injected tools become visible from the next request on, removed ones disappear
    for i, request in enumerate(requests[:-1]):
        added = strategy.added.get(request.iteration, [])
        removed = strategy.removed.get(request.iteration, [])
        assert not set(added) & set(request.tool_names)
        expected = [n for n in (*request.tool_names, *added) if n not in removed]
        assert list(requests[i + 1].tool_names) == expected
    # every tool call in the trace has exactly one tool message with its id and content
    answers = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    assert len(answers) == len(trace.calls)
    for record in trace.calls:
        assert answers[record.id].content == record.content
        assert answers[record.id].name == record.name
    assert len([e for e in trace.events if isinstance(e, StrategyWarning)]) == renamed
    json.dumps(trace.to_dict())


def _failing(args: dict[str, Any]) -> str:
    raise ValueError("nope")


async def _async_tool(args: dict[str, Any]) -> str:
    return "async ok"


driver_call = st.tuples(
    st.sampled_from(["t0", "t1", "t2", "fails", "aio", "x0", "x1", "ghost"]),
    st.sampled_from(["{}", "{bad", ""]),
)
driver_turn = st.one_of(st.lists(driver_call, min_size=1, max_size=3), st.just("reply"))


@settings(max_examples=25, deadline=None)
@given(script=st.lists(driver_turn, max_size=5))
def test_sync_and_async_drivers_agree_on_random_scripts(script: list[Any]) -> None:
    import asyncio

    from harness.loop import arun, run
    from harness.models import ScriptedModel, call, calls, reply

    def steps() -> list[Any]:
        out: list[Any] = []
        for turn in script:
            if turn == "reply":
                break
            out.append(calls(*(call(name, args) for name, args in turn)))
        out.append(reply("end"))
        return out

    def tools() -> list[Tool]:
        return [
            _tool("t0"),
            _tool("t1"),
            _tool("t2"),
            Tool.from_schema("fails", "Fails.", _SCHEMA, _failing),
            Tool.from_schema("aio", "Async.", _SCHEMA, _async_tool),
        ]

    sync = run(ScriptedModel(steps(), lenient=True), "go", tools=tools(), strategies=[Grow()])
    async_ = asyncio.run(
        arun(ScriptedModel(steps(), lenient=True), "go", tools=tools(), strategies=[Grow()])
    )
    assert sync.trace.to_dict() == async_.trace.to_dict()
    assert sync.messages == async_.messages
    assert_history_well_formed(sync.messages)
