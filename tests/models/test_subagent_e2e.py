"""End to end through the real ``openai`` SDK: a lead agent (Chat Completions) hands a task
to a subagent (Responses API) that shares its state, both against the in-process wire fake."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import openai
import pytest

from harness import CallContext, RunResult, arun, llm_tool, run
from harness.injection import (
    Budget,
    ModelPrice,
    UsageIntrospection,
    blackboard_tools,
    subagent_tool,
)
from harness.loop import Model
from harness.models import (
    OpenAIChatModel,
    OpenAIResponsesModel,
    ScriptedModel,
    WireServer,
    call,
    fake_async_openai_client,
    fake_openai_client,
    reply,
)

SECRET = "sk-subagent-e2e-0123456789"


def _u(i: int, o: int) -> dict[str, int]:
    return {"input_tokens": i, "output_tokens": o}


PRICES = {
    "gpt-lead": ModelPrice(input=2.0, output=8.0),
    "gpt-sub*": ModelPrice(input=0.5, output=1.0),
}


@llm_tool
def save_finding(context: CallContext, topic: str, finding: str) -> str:
    """Save a finding on the shared blackboard."""
    context.state[f"finding:{topic}"] = {"finding": finding, "token": context["api_token"]}
    return "saved"


def _sub_script() -> ScriptedModel:
    return ScriptedModel(
        [
            call(
                "save_finding",
                topic="loops",
                finding="they iterate",
                usage=_u(40, 8),
            ),
            reply("Saved one finding.", usage=_u(50, 4)),
        ]
    )


def _lead_script() -> ScriptedModel:
    return ScriptedModel(
        [
            call(
                "researcher",
                task="find out about loops",
                usage=_u(100, 10),
            ),
            call("blackboard_read", key="finding:loops"),
            call("run_usage"),
            call("run_cost"),
            reply("Loops iterate.", usage=_u(120, 6)),
        ]
    )


def _researcher(sub: Model, served: list[ScriptedModel]) -> Any:
    return subagent_tool(
        "researcher",
        "Hand research to the researcher.",
        model=lambda: sub,
        tools=[save_finding],
        system=lambda context: f"Research for the lead (its iteration {context.iteration}).",
        forward_context=["api_token"],
    )


def _check(result: RunResult, sub_served: ScriptedModel) -> None:
    assert result.output == "Loops iterate."
    assert result.state["finding:loops"]["finding"] == "they iterate"
    handoff, read, _, cost = result.trace.calls
    assert handoff.is_handoff and handoff.content.startswith("Saved one finding.")
    assert json.loads(read.content) == {"finding": "they iterate", "token": "[hidden]"}
    assert result.trace.usage["gpt-lead"].total_tokens == 236
    assert result.trace.usage["gpt-sub"].total_tokens == 102
    assert result.usage.total_tokens == 338
    priced = json.loads(cost.content)
    assert priced["by_model"]["gpt-sub"] == pytest.approx((90 * 0.5 + 12 * 1.0) / 1e6)
    system = sub_served.requests[0].messages[0]
    assert system.content == "Research for the lead (its iteration 1)."
    dumped = json.dumps(result.trace.to_dict())
    assert SECRET not in dumped and SECRET not in repr(result.messages)
    assert "api_token" not in json.dumps([t.to_data() for t in sub_served.requests[0].tools])


def _run(lead: Model, sub: Model) -> RunResult:
    return run(
        lead,
        "What about loops?",
        tools=[_researcher(sub, []), *blackboard_tools()],
        strategies=[UsageIntrospection(prices=PRICES, budget=Budget(max_tokens=10_000))],
        context={"api_token": SECRET},
    )


def test_sync_lead_chat_and_subagent_responses_through_the_sdk() -> None:
    lead_served, sub_served = _lead_script(), _sub_script()
    lead = OpenAIChatModel(fake_openai_client(lead_served, api_key=SECRET), "gpt-lead")
    sub = OpenAIResponsesModel(fake_openai_client(sub_served, api_key=SECRET), "gpt-sub")
    result = _run(lead, sub)
    _check(result, sub_served)
    assert lead_served.remaining == [] and sub_served.remaining == []
    # the lead's model saw the handoff's answer and the blackboard value, never the token
    tool_messages = [m for m in lead_served.requests[-1].messages if m.role == "tool"]
    assert "Saved one finding." in tool_messages[0].content
    assert SECRET not in repr(lead_served.requests)


def test_async_lead_through_the_sdk() -> None:
    lead_served, sub_served = _lead_script(), _sub_script()
    lead = OpenAIChatModel(fake_async_openai_client(lead_served, api_key=SECRET), "gpt-lead")
    sub = OpenAIResponsesModel(fake_openai_client(sub_served, api_key=SECRET), "gpt-sub")
    result = asyncio.run(
        arun(
            lead,
            "What about loops?",
            tools=[_researcher(sub, []), *blackboard_tools()],
            strategies=[UsageIntrospection(prices=PRICES)],
            context={"api_token": SECRET},
        )
    )
    _check(result, sub_served)


def test_over_real_loopback_http() -> None:
    lead_served, sub_served = _lead_script(), _sub_script()
    with WireServer(lead_served) as lead_server, WireServer(sub_served) as sub_server:
        lead_client = openai.OpenAI(base_url=lead_server.url, api_key=SECRET, max_retries=0)
        sub_client = openai.OpenAI(base_url=sub_server.url, api_key=SECRET, max_retries=0)
        try:
            result = _run(
                OpenAIChatModel(lead_client, "gpt-lead", stream=True),
                OpenAIResponsesModel(sub_client, "gpt-sub"),
            )
        finally:
            lead_client.close()
            sub_client.close()
    _check(result, sub_served)
    assert len(lead_server.requests) == 5 and len(sub_server.requests) == 2
