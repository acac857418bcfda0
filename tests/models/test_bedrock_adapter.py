"""End to end through boto3: the seed entity-discovery flow gives the in-process trace
through ``BedrockConverseModel`` (plain and streamed, sync and async) against the
in-process fake and ``harness serve``'s ``WireServer``; pydantic-ai's Bedrock model drives
the fake and the wire trace reads its run; a boto3 run recorded by vcrpy keeps no
credential and replays with others."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import boto3
import botocore.config
import pytest
from test_openai_e2e import PROMPT, run_async, run_sync, shape, steps

from harness import RunResult
from harness.assertions import expect, expect_timeline, offered
from harness.cassettes import trace_from_cassette, trace_from_wire
from harness.models import (
    BedrockConverseModel,
    BedrockWireHook,
    ScriptedModel,
    WireServer,
    call,
    fake_bedrock_client,
    reply,
)
from harness.testing import open_cassette

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYE2EHARNESS"
TOKEN = "FwoGZXIvYXdzEBYaDHarnessSessionToken000111222333"


@pytest.fixture(scope="module")
def baseline() -> RunResult:
    return run_sync(ScriptedModel(steps()))


def _loopback_client(url: str, secret: str = SECRET, token: str | None = TOKEN) -> Any:
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=url.removesuffix("/v1"),
        aws_access_key_id="AKIAHARNESSE2ETEST01",
        aws_secret_access_key=secret,
        aws_session_token=token,
        config=botocore.config.Config(retries={"total_max_attempts": 1}),
    )


def _check(result: RunResult, baseline: RunResult, served: ScriptedModel) -> None:
    assert shape(result) == shape(baseline)
    assert result.output == baseline.output == "John Smith spends 42.5 on average."
    assert [c.arguments for c in result.trace.calls] == [c.arguments for c in baseline.trace.calls]
    assert served.remaining == []
    assert SECRET not in repr(result.trace.to_dict()) and TOKEN not in repr(result.trace.to_dict())


@pytest.mark.parametrize("stream", [False, True], ids=["converse", "converse-stream"])
def test_in_process_through_boto3_gives_the_in_process_trace(
    stream: bool, baseline: RunResult
) -> None:
    served = ScriptedModel(steps())
    client = fake_bedrock_client(served, aws_secret_access_key=SECRET, aws_session_token=TOKEN)
    _check(run_sync(BedrockConverseModel(client, MODEL, stream=stream)), baseline, served)


def test_arun_calls_boto3_in_a_worker_thread(baseline: RunResult) -> None:
    served = ScriptedModel(steps())
    _check(run_async(BedrockConverseModel(fake_bedrock_client(served), MODEL)), baseline, served)


@pytest.mark.parametrize("stream", [False, True], ids=["converse", "converse-stream"])
def test_against_harness_serve_gives_the_in_process_trace(
    stream: bool, baseline: RunResult
) -> None:
    served = ScriptedModel(steps())
    with WireServer(served) as server:
        client = _loopback_client(server.url)
        try:
            result = run_sync(BedrockConverseModel(client, MODEL, stream=stream))
        finally:
            client.close()
    _check(result, baseline, served)
    operation = "converse-stream" if stream else "converse"
    assert [r.path for r in server.requests] == [
        f"/model/{MODEL.replace(':', '%3A')}/{operation}"
    ] * 3
    assert [it.offered for it in trace_from_wire(server)] == [it.offered for it in baseline.trace]


def test_the_served_model_sees_the_injected_tools_as_definitions() -> None:
    served = ScriptedModel(steps())
    run_sync(BedrockConverseModel(fake_bedrock_client(served), MODEL))
    spend = next(t for t in served.requests[-1].tools if t.name.endswith("get_average_spend"))
    assert spend.description is not None and spend.description.startswith("Average order total")
    assert served.requests[0].tool_names == ("search_customer",)


# -- a third-party client: pydantic-ai's Bedrock model ------------------------------------

FLOW = [
    "call search_customer",
    "offered gains get_average_spend",
    "call get_average_spend",
    "answer",
]


def _pydantic_ai_agent(client: Any) -> Any:
    pydantic_ai = pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import ToolReturnPart
    from pydantic_ai.models.bedrock import BedrockConverseModel as PydanticBedrock
    from pydantic_ai.providers.bedrock import BedrockProvider

    def search_customer(name: str) -> str:
        """Find a customer id by name."""
        return "c-123"

    def get_average_spend(customer_id: str) -> float:
        """The customer's average order value."""
        return 42.0

    async def after_search(ctx: Any, tool_def: Any) -> Any:
        found = any(
            isinstance(part, ToolReturnPart) and part.tool_name == "search_customer"
            for message in ctx.messages
            for part in getattr(message, "parts", ())
        )
        return tool_def if found else None

    model = PydanticBedrock(MODEL, provider=BedrockProvider(bedrock_client=client))
    return pydantic_ai.Agent(
        model, tools=[search_customer, pydantic_ai.Tool(get_average_spend, prepare=after_search)]
    )


def _script() -> ScriptedModel:
    return ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            call("get_average_spend", customer_id="c-123"),
            reply("John Smith spends 42 on average."),
        ]
    )


@pytest.mark.parametrize("stream", [False, True], ids=["run", "run_stream"])
def test_pydantic_ai_bedrock_drives_the_fake_and_the_wire_trace_reads_it(stream: bool) -> None:
    hook = BedrockWireHook(_script())
    agent = _pydantic_ai_agent(fake_bedrock_client(hook))

    async def go() -> str:
        if not stream:
            return str((await agent.run(PROMPT)).output)
        async with agent.run_stream(PROMPT) as result:
            return str(await result.get_output())

    assert asyncio.run(go()) == "John Smith spends 42 on average."
    trace = trace_from_wire(hook)
    assert expect_timeline(trace, FLOW)
    assert expect(
        trace, offered(at=1, exactly=["search_customer"]), offered(at=2, includes=["get_*"])
    )
    assert trace.iterations[0].calls[0].content == "c-123"
    assert trace.iterations[1].calls[0].content == "42.0"
    assert all(
        r.path.endswith("/converse-stream" if stream else "/converse") for r in hook.requests
    )


def test_a_boto3_run_recorded_by_vcrpy_keeps_no_credential_and_replays(tmp_path: Path) -> None:
    cassette = tmp_path / "bedrock.yaml"
    with WireServer(_script()) as server, open_cassette(cassette, record_mode="once"):
        agent = _pydantic_ai_agent(_loopback_client(server.url))
        first = asyncio.run(agent.run(PROMPT)).output
    text = cassette.read_text()
    for leaked in (SECRET, TOKEN, "AWS4-HMAC-SHA256", "AKIAHARNESSE2ETEST01"):
        assert leaked not in text
    with open_cassette(cassette, record_mode="none", unused="error"):
        agent = _pydantic_ai_agent(_loopback_client(server.url, "another-secret-0123456789", None))
        again = asyncio.run(agent.run(PROMPT)).output
    assert again == first == "John Smith spends 42 on average."
    assert expect_timeline(trace_from_cassette(cassette), FLOW)
