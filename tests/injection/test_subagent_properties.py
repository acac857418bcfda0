"""Properties of subagents: shared state reaches the parent through any nesting, nested
traces stay nested (one level per handoff, never flattened), and every level's usage is
counted exactly once in the parent's."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings, strategies as st

from harness import CallContext, ScriptedModel, Tool, call, llm_tool, reply, run
from harness.injection import agent_tool, subagent_tool
from harness.loop import Trace


@llm_tool
def put(context: CallContext, key: str, value: str) -> str:
    """Put a value on the shared blackboard."""
    context.state[key] = value
    return "ok"


keys = st.text("abcdefghij_", min_size=1, max_size=8)
items = st.dictionaries(keys, st.text(max_size=12), min_size=1, max_size=5)
usages = st.lists(st.tuples(st.integers(0, 500), st.integers(0, 50)), min_size=4, max_size=4)


def _chain(depth: int, written: dict[str, str], usage: list[tuple[int, int]], shared: bool) -> Tool:
    """``depth`` nested agents; the innermost writes ``written``; level i uses usage[i]."""
    make = subagent_tool if shared else agent_tool

    def innermost() -> ScriptedModel:
        steps: list[Any] = [call("put", {"key": k, "value": v}) for k, v in written.items()]
        i, o = usage[depth]
        return ScriptedModel(
            [*steps, reply("done", usage={"input_tokens": i, "output_tokens": o})],
            name=f"level{depth}",
        )

    tool = make("agent", "Work.", model=innermost, tools=[put], max_depth=4)
    for level in range(depth - 1, 0, -1):
        i, o = usage[level]

        def middle(inner: Tool = tool, level: int = level, i: int = i, o: int = o) -> ScriptedModel:
            return ScriptedModel(
                [
                    call(inner.name, {"task": "go"}, usage={"input_tokens": i, "output_tokens": o}),
                    reply("done"),
                ],
                name=f"level{level}",
            )

        tool = make(f"agent{level}", "Delegate.", model=middle, tools=[tool], max_depth=4)
    return tool


def _depth(trace: Trace) -> int:
    return 1 + max((_depth(c) for c in trace.children), default=0)


@settings(max_examples=40, deadline=None)
@given(
    depth=st.integers(1, 3),
    written=items,
    usage=usages,
    shared=st.booleans(),
)
def test_state_usage_and_nesting_through_any_chain_of_agents(
    depth: int, written: dict[str, str], usage: list[tuple[int, int]], shared: bool
) -> None:
    top = _chain(depth, written, usage, shared)
    i, o = usage[0]
    lead = ScriptedModel(
        [
            call(top.name, {"task": "go"}, usage={"input_tokens": i, "output_tokens": o}),
            reply("ok"),
        ],
        name="level0",
    )
    result = run(lead, "go", tools=[top], state={"harness.keep": 1})
    # shared state: everything the innermost agent wrote is the parent's; isolated: nothing
    assert result.state == ({**written, "harness.keep": 1} if shared else {"harness.keep": 1})
    # nested traces stay nested: one child per level, hanging from that level's only call
    trace = result.trace
    assert _depth(trace) == depth + 1
    for _ in range(depth):
        (record,) = trace.calls
        (child,) = trace.children
        assert record.children == (child,)
        trace = child
    assert [c.name for c in trace.calls] == ["put"] * len(written)
    # usage: every level counted once, under its own model
    expected = {f"level{n}": usage[n] for n in range(depth + 1) if usage[n] != (0, 0)}
    assert {m: (u.input_tokens, u.output_tokens) for m, u in result.trace.usage.items()} == expected
    assert result.usage.total_tokens == sum(a + b for a, b in usage[: depth + 1])
