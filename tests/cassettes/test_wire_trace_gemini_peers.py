"""pydantic-ai's Google model drives the Gemini fake: its run is read back as a harness
trace from the wire (in process), and recorded over loopback into a cassette that
replays with the server gone and holds no key (``x-goog-api-key`` scrubbed)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import types

from harness.assertions import expect, expect_timeline, offered
from harness.cassettes import load_cassette, trace_from_cassette, trace_from_wire
from harness.models import (
    OpenAIWireTransport,
    ScriptedModel,
    WireServer,
    call,
    fake_gemini_client,
    reply,
)
from harness.testing import open_cassette

FLOW = [
    "call search_customer",
    "offered gains get_average_spend",
    "call get_average_spend",
    "answer",
]
KEY = "AIza" + "R" * 35


def _script() -> ScriptedModel:
    return ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            call("get_average_spend", customer_id="c-123"),
            reply("John Smith spends 42 on average."),
        ]
    )


def _agent(client: genai.Client) -> Any:
    pydantic_ai = pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import ToolReturnPart
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

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

    model = GoogleModel("gemini-2.5-flash", provider=GoogleProvider(client=client))
    return pydantic_ai.Agent(
        model,
        tools=[search_customer, pydantic_ai.Tool(get_average_spend, prepare=after_search)],
    )


def _run(client: genai.Client) -> str:
    return str(asyncio.run(_agent(client).run("What's John Smith's average spend?")).output)


def test_pydantic_ai_google_against_the_fake() -> None:
    transport = OpenAIWireTransport(_script())
    assert _run(fake_gemini_client(transport)) == "John Smith spends 42 on average."
    trace = trace_from_wire(transport)
    assert expect_timeline(trace, FLOW)
    assert expect(
        trace, offered(at=1, exactly=["search_customer"]), offered(at=2, includes=["get_*"])
    )
    assert trace.iterations[1].calls[0].content == json.dumps({"return_value": 42.0})
    # pydantic-ai sends the fake's thought signature back (the SDK re-encodes it base64url)
    second = transport.requests[1].body["contents"][1]["parts"][0]
    assert "thoughtSignature" in second


def _client(url: str, key: str) -> genai.Client:
    # no keep-alive: each agent run owns its event loop, so no socket may outlive it
    http = httpx2.AsyncClient(limits=httpx2.Limits(max_keepalive_connections=0))
    return genai.Client(
        api_key=key,
        http_options=types.HttpOptions(
            base_url=url.removesuffix("/v1") + "/",
            httpx_async_client=http,
            retry_options=types.HttpRetryOptions(attempts=1),
        ),
    )


def test_pydantic_ai_google_recorded_and_replayed_from_a_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "agent.yaml"
    with WireServer(_script()) as server, open_cassette(cassette, record_mode="once"):
        first = _run(_client(server.url, KEY))
    with open_cassette(cassette, record_mode="none", unused="error"):
        again = _run(_client(server.url, "AIza" + "S" * 35))
    assert again == first == "John Smith spends 42 on average."
    text = cassette.read_text()
    assert KEY not in text and "x-goog-api-key" not in text.lower().replace(
        "x-goog-api-key:\n      - '[hidden]'", ""
    )
    assert len(load_cassette(cassette)) == 3
    assert expect_timeline(trace_from_cassette(cassette), FLOW)
