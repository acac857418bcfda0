"""Chat streams are accumulated in linear time and read exactly as the SDK's own stream
state reads them (issue 27 section 8: 1,000 parallel streamed calls took 22.9 s)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

from harness import arun, llm_tool, run
from harness.formats.openai_chat import (
    response_from_body as chat_response_from_completion,
    response_from_events as chat_response_from_chunks,
)
from harness.models import (
    OpenAIChatModel,
    OpenAIResponsesModel,
    ScriptedModel,
    Step,
    call,
    calls,
    fake_async_openai_client,
    fake_openai_client,
    reply,
)


@llm_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def parallel_steps(n: int) -> list[Step]:
    return [calls(*(call("add", {"a": i, "b": 1}) for i in range(n))), reply("done")]


def _chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def parallel_calls(n: int) -> list[dict[str, Any]]:
    """A stream of ``n`` tool calls, each as the API sends it: a header, then its arguments
    in three pieces (4n + 2 chunks)."""
    chunks = [_chunk({"role": "assistant", "content": None})]
    for i in range(n):
        header = {"index": i, "id": f"call_{i}", "type": "function"}
        chunks.append(
            _chunk({"tool_calls": [{**header, "function": {"name": "add", "arguments": ""}}]})
        )
        for piece in ('{"a": ', str(i), ', "b": 1}'):
            chunks.append(_chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
    chunks.append(_chunk({}, "tool_calls", usage={"prompt_tokens": 5, "completion_tokens": n}))
    return chunks


def _python_calls(function: Any, *args: Any) -> int:
    """How many Python function calls ``function(*args)`` makes (deterministic work)."""
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call":
            count += 1

    sys.setprofile(profile)
    try:
        function(*args)
    finally:
        sys.setprofile(None)
    return count


def test_the_sdks_quadratic_stream_state_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its ``handle_chunk`` dumps and rebuilds the whole snapshot for every chunk (in
    pydantic-core, so no Python-level count shows it): 1,000 parallel calls took 22.9 s."""

    def refuse(self: Any, chunk: Any) -> Any:
        raise AssertionError("the SDK's chat stream state rebuilds its snapshot per chunk")

    monkeypatch.setattr(ChatCompletionStreamState, "handle_chunk", refuse)
    assert len(chat_response_from_chunks(parallel_calls(3)).message.tool_calls) == 3


def test_our_own_work_grows_linearly_with_the_parallel_calls() -> None:
    small, large = (_python_calls(chat_response_from_chunks, parallel_calls(n)) for n in (50, 200))
    assert large < 4.2 * small  # 4x the calls, 4x the Python calls


@pytest.mark.parametrize("adapter", [OpenAIChatModel, OpenAIResponsesModel])
@pytest.mark.parametrize("asynchronous", [False, True])
def test_streamed_events_reach_the_adapter_as_json_not_sdk_objects(
    adapter: Any, asynchronous: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK builds no model object per event (about 0.2 ms each): 1,000 streamed chat
    requests took 4.6 s, 1.5 s without them."""
    kinds: list[type] = []
    read = adapter._read_stream

    def spy(self: Any, events: Any) -> Any:
        events = list(events)
        kinds.extend(type(event) for event in events)
        return read(self, events)

    monkeypatch.setattr(adapter, "_read_stream", spy)
    fake = fake_async_openai_client if asynchronous else fake_openai_client
    model = adapter(fake(ScriptedModel(parallel_steps(3))), "m", stream=True)
    if asynchronous:
        result = asyncio.run(arun(model, "go", tools=[add]))
    else:
        result = run(model, "go", tools=[add])
    assert [c.content for c in result.trace.calls] == ["1", "2", "3"]
    assert kinds and set(kinds) == {dict}


def test_a_thousand_parallel_calls_arrive_whole() -> None:
    response = chat_response_from_chunks(parallel_calls(1000))
    calls = response.message.tool_calls
    assert [c.id for c in calls] == [f"call_{i}" for i in range(1000)]
    assert [json.loads(c.arguments) for c in calls] == [{"a": i, "b": 1} for i in range(1000)]
    assert (response.finish_reason, response.usage.output_tokens) == ("tool_calls", 1000)


# -- the SDK's stream state is the oracle --------------------------------------------------

_TEXT = st.text('ab {}"', max_size=4)


@st.composite
def streams(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Random chat streams: content and refusal pieces, tool calls split anywhere and
    interleaved, each call's header sent once (as OpenAI does)."""
    calls = draw(st.integers(0, 4))
    pieces: list[dict[str, Any]] = [{"role": "assistant"}]
    for _ in range(draw(st.integers(0, 3))):
        pieces.append({"content": draw(_TEXT)})
    for index in range(calls):
        name = draw(st.sampled_from(["add", "search", "f"]))
        header = {"index": index, "id": f"call_{index}", "type": "function"}
        pieces.append({"tool_calls": [{**header, "function": {"name": name, "arguments": ""}}]})
        for text in draw(st.lists(_TEXT, max_size=3)):
            pieces.append({"tool_calls": [{"index": index, "function": {"arguments": text}}]})
    header_of = {
        i: next(p for p in pieces if p.get("tool_calls", [{}])[0].get("id") == f"call_{i}")
        for i in range(calls)
    }
    rest = [p for p in pieces[1:] if p not in header_of.values()]
    order = draw(st.permutations(rest))
    # every argument piece after its call's header; headers in call order
    arranged: list[dict[str, Any]] = [pieces[0], *header_of.values()] if calls else [pieces[0]]
    arranged += list(order)
    if draw(st.booleans()):
        arranged.append({"refusal": draw(_TEXT)})
    chunks = [_chunk(delta) for delta in arranged]
    chunks.append(_chunk({}, draw(st.sampled_from(["stop", "tool_calls", "length"]))))
    return chunks


@settings(max_examples=150, deadline=None)
@given(streams())
def test_property_the_stream_reads_as_the_sdk_stream_state_reads_it(
    chunks: list[dict[str, Any]],
) -> None:
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    expected = chat_response_from_completion(state.current_completion_snapshot)
    assert chat_response_from_chunks(chunks) == expected
    objects = [ChatCompletionChunk.model_validate(c) for c in chunks]
    assert chat_response_from_chunks(objects) == expected
