"""Invariants of the wire trace over generated conversations."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from harness.cassettes import ParsedRequest, trace_from_requests
from harness.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from harness.tools import ToolDefinition

NAMES = [f"tool_{i}" for i in range(6)]
toolsets = st.lists(st.sampled_from(NAMES), unique=True, max_size=6)


def _conversation(offers: list[list[str]]) -> list[ParsedRequest]:
    """Each turn calls the first offered tool (or nothing) and the next request carries
    the call and its result."""
    messages: list = [UserMessage(content="go")]  # type: ignore[type-arg]
    requests = []
    for k, names in enumerate(offers):
        tools = tuple(ToolDefinition(name=n, parameters={"type": "object"}) for n in names)
        requests.append(ParsedRequest(model="m", messages=tuple(messages), tools=tools))
        if k + 1 < len(offers):
            call = ToolCall(id=f"c{k}", name=names[0] if names else "none", arguments="{}")
            messages = [
                *messages,
                AssistantMessage(content=None, tool_calls=(call,)),
                ToolMessage(tool_call_id=call.id, content=f"result {k}"),
            ]
    return requests


@settings(max_examples=200, deadline=None)
@given(st.lists(toolsets, min_size=1, max_size=6))
def test_injected_and_removed_rebuild_every_offered_set(offers: list[list[str]]) -> None:
    trace = trace_from_requests(_conversation(offers))
    assert [list(it.offered) for it in trace] == offers
    assert trace.initial_tools == tuple(offers[0])
    for before, after in zip(trace.iterations, trace.iterations[1:], strict=False):
        rebuilt = (set(before.offered) | set(before.injected)) - set(before.removed)
        assert rebuilt == set(after.offered)
    for k, it in enumerate(trace.iterations[:-1]):
        (only,) = it.calls
        assert only.content == f"result {k}"
    assert trace.iterations[-1].calls == ()
