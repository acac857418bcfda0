"""End to end: the seed entity-discovery flow gives one trace in-process and through the SDK.

In-process with a ScriptedModel; through ``OpenAIChatModel`` / ``OpenAIResponsesModel``
and the real ``openai`` SDK against the fake transport (streaming and not, sync and
async); and over real HTTP against the loopback server.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

import openai
import pytest

from harness import EntityDiscovery, RunResult, arun, llm_tool, run, tool_provider
from harness.loop import Model
from harness.models import (
    OpenAIChatModel,
    OpenAIResponsesModel,
    ScriptedModel,
    Step,
    WireServer,
    call,
    expect_offered,
    fake_async_openai_client,
    fake_openai_client,
    reply,
)

SECRET = "sk-e2e-secret-0123456789"
PROMPT = "What's John Smith's average spend?"


@tool_provider(prefix="customer")
@dataclasses.dataclass
class Customer:
    """A customer record."""

    id: str
    name: str

    @llm_tool
    def get_average_spend(self) -> float:
        """Average order total of this customer."""
        return 42.5


def search_customer(name: str) -> list[Customer]:
    """Find customers by name."""
    return [Customer(id="c-123", name=name)]


def steps() -> list[Step]:
    return [
        call("search_customer", name="John Smith"),
        expect_offered(includes=["customer_c123_get_average_spend"]),
        call("customer_*_get_average_spend"),
        reply("John Smith spends 42.5 on average."),
    ]


def shape(result: RunResult) -> list[tuple[Any, ...]]:
    return [
        (it.offered, [c.name for c in it.calls], it.injected, [c.content for c in it.calls])
        for it in result.trace
    ]


def run_sync(model: Model) -> RunResult:
    return run(model, PROMPT, tools=[search_customer], strategies=[EntityDiscovery()])


def run_async(model: Model) -> RunResult:
    return asyncio.run(arun(model, PROMPT, tools=[search_customer], strategies=[EntityDiscovery()]))


@pytest.fixture(scope="module")
def baseline() -> RunResult:
    result = run_sync(ScriptedModel(steps()))
    assert [len(it.offered) for it in result.trace] == [1, 2, 2]
    assert result.trace.injected == ["customer_c123_get_average_spend"]
    return result


Factory = Callable[[ScriptedModel], Model]

SYNC: dict[str, Factory] = {
    "chat": lambda m: OpenAIChatModel(fake_openai_client(m, api_key=SECRET), "gpt-test"),
    "chat-stream": lambda m: OpenAIChatModel(
        fake_openai_client(m, api_key=SECRET), "gpt-test", stream=True
    ),
    "responses": lambda m: OpenAIResponsesModel(fake_openai_client(m, api_key=SECRET), "gpt-test"),
    "responses-stream": lambda m: OpenAIResponsesModel(
        fake_openai_client(m, api_key=SECRET), "gpt-test", stream=True
    ),
}
ASYNC: dict[str, Factory] = {
    "chat": lambda m: OpenAIChatModel(fake_async_openai_client(m, api_key=SECRET), "gpt-test"),
    "chat-stream": lambda m: OpenAIChatModel(
        fake_async_openai_client(m, api_key=SECRET), "gpt-test", stream=True
    ),
    "responses": lambda m: OpenAIResponsesModel(
        fake_async_openai_client(m, api_key=SECRET), "gpt-test"
    ),
    "responses-stream": lambda m: OpenAIResponsesModel(
        fake_async_openai_client(m, api_key=SECRET), "gpt-test", stream=True
    ),
}


def _check(result: RunResult, baseline: RunResult, served: ScriptedModel) -> None:
    assert shape(result) == shape(baseline)
    assert result.output == baseline.output == "John Smith spends 42.5 on average."
    assert [c.arguments for c in result.trace.calls] == [c.arguments for c in baseline.trace.calls]
    assert served.remaining == []  # the served script was played to the end
    assert SECRET not in repr(result.trace.to_dict())
    assert SECRET not in repr(list(result.messages))


@pytest.mark.parametrize("kind", sorted(SYNC))
def test_sync_run_through_the_sdk_gives_the_in_process_trace(
    kind: str, baseline: RunResult
) -> None:
    served = ScriptedModel(steps())
    _check(run_sync(SYNC[kind](served)), baseline, served)


@pytest.mark.parametrize("kind", sorted(ASYNC))
def test_async_run_through_the_sdk_gives_the_in_process_trace(
    kind: str, baseline: RunResult
) -> None:
    served = ScriptedModel(steps())
    _check(run_async(ASYNC[kind](served)), baseline, served)


@pytest.mark.parametrize("stream", [False, True])
def test_run_over_real_http_gives_the_in_process_trace(stream: bool, baseline: RunResult) -> None:
    served = ScriptedModel(steps())
    with WireServer(served) as server:
        client = openai.OpenAI(base_url=server.url, api_key=SECRET, max_retries=0)
        try:
            result = run_sync(OpenAIChatModel(client, "gpt-test", stream=stream))
        finally:
            client.close()
    _check(result, baseline, served)
    assert len(server.requests) == 3


def test_the_served_model_sees_the_injected_tools_as_definitions() -> None:
    served = ScriptedModel(steps())
    run_sync(SYNC["chat"](served))
    last = served.requests[-1]
    spend = next(t for t in last.tools if t.name.endswith("get_average_spend"))
    assert spend.description.startswith("Average order total")
    assert served.requests[0].tool_names == ("search_customer",)
