"""Injection assertions over agent loops the harness did not write.

pydantic-ai and the OpenAI Agents SDK each run a tool-injection flow of their own
(pydantic-ai: a tool ``prepare`` that offers ``get_average_spend`` only after
``search_customer`` returned; Agents SDK: ``is_enabled``), first against the
in-process wire fake, then recorded over loopback into a cassette and replayed with
the server gone. ``trace_from_wire`` / ``trace_from_cassette`` rebuild the harness
``Trace`` from the traffic, and the usual assertions and timelines check it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from harness.assertions import expect, expect_timeline, offered
from harness.cassettes import trace_from_cassette, trace_from_wire
from harness.models import (
    OpenAIWireTransport,
    ScriptedModel,
    WireServer,
    call,
    fake_async_openai_client,
    reply,
)
from harness.testing import open_cassette

FLOW = [
    "call search_customer",
    "offered gains get_average_spend",
    "call get_average_spend",
    "answer",
]


def _script() -> ScriptedModel:
    return ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            call("get_average_spend", customer_id="c-123"),
            reply("John Smith spends 42 on average."),
        ]
    )


# -- pydantic-ai ----------------------------------------------------------------------


def _pydantic_ai_agent(client: openai.AsyncOpenAI) -> Any:
    pydantic_ai = pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import ToolReturnPart
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

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

    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(openai_client=client))
    return pydantic_ai.Agent(
        model,
        tools=[search_customer, pydantic_ai.Tool(get_average_spend, prepare=after_search)],
    )


def test_pydantic_ai_against_the_fake() -> None:
    transport = OpenAIWireTransport(_script())
    agent = _pydantic_ai_agent(fake_async_openai_client(transport))
    result = asyncio.run(agent.run("What's John Smith's average spend?"))
    assert result.output == "John Smith spends 42 on average."
    trace = trace_from_wire(transport)
    assert expect_timeline(trace, FLOW)
    assert expect(
        trace, offered(at=1, exactly=["search_customer"]), offered(at=2, includes=["get_*"])
    )
    assert trace.iterations[0].calls[0].content == "c-123"
    assert trace.iterations[1].calls[0].content == "42.0"


def _client(url: str, key: str) -> openai.AsyncOpenAI:
    # no keep-alive: each agent run owns its event loop, so no socket may outlive it
    http = httpx2.AsyncClient(limits=httpx2.Limits(max_keepalive_connections=0))
    return openai.AsyncOpenAI(base_url=url, api_key=key, max_retries=0, http_client=http)


def _record_then_replay(tmp_path: Path, run_agent: Any) -> Path:
    cassette = tmp_path / "agent.yaml"
    with WireServer(_script()) as server, open_cassette(cassette, record_mode="once"):
        first = run_agent(_client(server.url, "sk-recording"))
    # replay: the server is gone; the cassette answers every request
    with open_cassette(cassette, record_mode="none", unused="error"):
        again = run_agent(_client(server.url, "sk-other"))
    assert again == first == "John Smith spends 42 on average."
    assert "sk-recording" not in cassette.read_text()
    return cassette


def test_pydantic_ai_recorded_and_replayed_from_a_cassette(tmp_path: Path) -> None:
    def run_agent(client: openai.AsyncOpenAI) -> str:
        return str(
            asyncio.run(_pydantic_ai_agent(client).run("What's John Smith's average spend?")).output
        )

    cassette = _record_then_replay(tmp_path, run_agent)
    trace = trace_from_cassette(cassette)
    assert expect_timeline(trace, FLOW)
    assert trace.iterations[0].injected == ("get_average_spend",)


# -- OpenAI Agents SDK ----------------------------------------------------------------


def _agents_run(client: openai.AsyncOpenAI) -> str:
    agents = pytest.importorskip("agents")
    agents.set_tracing_disabled(True)  # the SDK would export traces to api.openai.com
    found = {"customer": False}

    @agents.function_tool  # type: ignore[untyped-decorator]  # an optional peer, imported as Any
    def search_customer(name: str) -> str:
        """Find a customer id by name."""
        found["customer"] = True
        return "c-123"

    @agents.function_tool(is_enabled=lambda ctx, agent: found["customer"])  # type: ignore[untyped-decorator]
    def get_average_spend(customer_id: str) -> float:
        """The customer's average order value."""
        return 42.0

    agent = agents.Agent(
        name="crm",
        instructions="You are a CRM assistant.",
        tools=[search_customer, get_average_spend],
        model=agents.OpenAIResponsesModel(model="gpt-4o-mini", openai_client=client),
    )
    result = asyncio.run(agents.Runner.run(agent, "What's John Smith's average spend?"))
    return str(result.final_output)


def test_openai_agents_against_the_fake() -> None:
    transport = OpenAIWireTransport(_script())
    assert _agents_run(fake_async_openai_client(transport)) == "John Smith spends 42 on average."
    trace = trace_from_wire(transport)
    assert expect_timeline(trace, FLOW)
    assert all(r.path.endswith("/responses") for r in transport.requests)


def test_openai_agents_recorded_and_replayed_from_a_cassette(tmp_path: Path) -> None:
    cassette = _record_then_replay(tmp_path, _agents_run)
    trace = trace_from_cassette(cassette)
    assert expect_timeline(trace, FLOW)
    assert [len(it.offered) for it in trace] == [1, 2, 2]


def test_a_broken_injection_in_the_framework_fails_the_same_assertion() -> None:
    """The assertions catch a regression in another framework's injection, too."""
    pydantic_ai = pytest.importorskip("pydantic_ai")
    transport = OpenAIWireTransport(
        ScriptedModel([call("search_customer", name="John Smith"), reply("no spend tool")])
    )
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    def search_customer(name: str) -> str:
        """Find a customer id by name."""
        return "c-123"

    model = OpenAIChatModel(
        "gpt-4o-mini", provider=OpenAIProvider(openai_client=fake_async_openai_client(transport))
    )
    asyncio.run(pydantic_ai.Agent(model, tools=[search_customer]).run("spend?"))
    verdict = expect_timeline(trace_from_wire(transport), FLOW)
    assert verdict.passed is False  # bool() would raise the table under the plugin
    assert "get_average_spend" in str(verdict)
