"""The wire fakes answer bad requests with the provider's 400, never a 500 or a 200
(issue 34 section 4), and accept what the providers accept: the Responses API's tool cap
counts the tools loaded up front, not the deferred ones a search finds."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import ToolSearch, run
from harness.models import (
    OpenAIResponsesModel,
    ScriptedModel,
    WireApp,
    call,
    fake_openai_client,
    reply,
    search,
)
from harness.tools import Tool

CHAT, RESPONSES, MESSAGES = "/v1/chat/completions", "/v1/responses", "/v1/messages"
CHAT_TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
RESPONSES_TOOL = {"type": "function", "name": "f", "parameters": {"type": "object"}}
CLAUDE_TOOL = {"name": "f", "input_schema": {"type": "object"}}


def chat(**extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}], **extra}


def responses(**extra: Any) -> dict[str, Any]:
    return {"model": "m", "input": "hi", **extra}


def referencing(reference: dict[str, Any]) -> dict[str, Any]:
    """A Messages body whose client search answered with ``reference``."""
    return {
        "model": "m",
        "max_tokens": 10,
        "tools": [{**CLAUDE_TOOL, "defer_loading": True}, {**CLAUDE_TOOL, "name": "search"}],
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [reference]}],
            },
        ],
    }


def allowed(mode: Any) -> dict[str, Any]:
    return {"type": "allowed_tools", "mode": mode, "tools": [{"type": "function", "name": "f"}]}


CASES = {
    "tool_reference tool_name is a list": (
        MESSAGES,
        referencing({"type": "tool_reference", "tool_name": ["f"]}),
        "messages.2.content.0.content.0.tool_name: Input should be a valid string",
    ),
    "tool_reference without tool_name": (
        MESSAGES,
        referencing({"type": "tool_reference"}),
        "messages.2.content.0.content.0.tool_name: Field required",
    ),
    "Responses namespace named 5": (
        RESPONSES,
        responses(tools=[{"type": "namespace", "name": 5, "tools": [RESPONSES_TOOL]}]),
        "Invalid type for 'tools[0].name': expected a string, but got an integer instead.",
    ),
    "Responses namespace without tools": (
        RESPONSES,
        responses(tools=[{"type": "namespace", "name": "crm"}]),
        "Invalid type for 'tools[0].tools': expected an array",
    ),
    "Chat allowed_tools mode bogus": (
        CHAT,
        chat(
            tools=[CHAT_TOOL],
            tool_choice={
                "type": "allowed_tools",
                "allowed_tools": {"mode": "bogus", "tools": [CHAT_TOOL]},
            },
        ),
        "Invalid value: 'bogus'. Supported values are: 'auto' and 'required'.",
    ),
    "Responses allowed_tools mode bogus": (
        RESPONSES,
        responses(tools=[RESPONSES_TOOL], tool_choice=allowed("bogus")),
        "Invalid value: 'bogus'. Supported values are: 'auto' and 'required'.",
    ),
    "Responses allowed_tools without mode": (
        RESPONSES,
        responses(tools=[RESPONSES_TOOL], tool_choice=allowed(None)),
        "Missing required parameter: 'tool_choice.mode'.",
    ),
    "Chat function choice without function": (
        CHAT,
        chat(tools=[CHAT_TOOL], tool_choice={"type": "function"}),
        "Missing required parameter: 'tool_choice.function'.",
    ),
    "Chat function choice without a name": (
        CHAT,
        chat(tools=[CHAT_TOOL], tool_choice={"type": "function", "function": {}}),
        "Missing required parameter: 'tool_choice.function.name'.",
    ),
    "Chat choice of an unknown type": (
        CHAT,
        chat(tools=[CHAT_TOOL], tool_choice={"type": "bogus"}),
        "Invalid value: 'bogus'. Supported values are: 'function', 'allowed_tools' and 'custom'.",
    ),
    "Responses function choice without a name": (
        RESPONSES,
        responses(tools=[RESPONSES_TOOL], tool_choice={"type": "function"}),
        "Missing required parameter: 'tool_choice.name'.",
    ),
    "Responses: 129 tools loaded up front": (
        RESPONSES,
        responses(tools=[{**RESPONSES_TOOL, "name": f"f{i}"} for i in range(129)]),
        "maximum length 128, but got an array with length 129 instead.",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_request_gets_the_provider_s_400(case: str) -> None:
    path, body, message = CASES[case]
    app = WireApp(ScriptedModel([reply("x")], require_exhausted=False))
    answer = app.handle(
        "POST", path, json.dumps(body).encode(), {"content-type": "application/json"}
    )
    assert answer.status == 400, answer.body[:300]
    data = json.loads(answer.body)
    assert message in data["error"]["message"]


def _catalog(size: int) -> list[Tool]:
    return [
        Tool.from_schema(f"tool_{i}", f"Tool number {i}.", {"type": "object"}, lambda a: "ok")
        for i in range(size)
    ]


def test_the_harness_s_own_300_tool_hosted_search_design_runs_on_the_responses_fake() -> None:
    script = ScriptedModel([search("number 7"), call("tool_7", {}), reply("done")])
    model = OpenAIResponsesModel(fake_openai_client(script), "gpt-test")
    result = run(model, "go", strategies=[ToolSearch(_catalog(300), search="hosted")])
    assert result.output == "done"
    first = result.trace.iterations[0]
    assert first.tools is not None and len(first.tools.deferred) == 300
    assert [c.name for c in first.calls] == ["tool_7"]
