"""End to end through the real ``openai`` SDK: injected parameters never go on the wire.

The run's tool takes a ``ChatContext``, an ``Emitter`` and an ``Injected[...]`` client;
the in-process wire fake records every request body the SDK sent (Chat Completions and
Responses, streaming or not): the tool schema on the wire has the model-visible
parameter only, and no injected value appears in any body.
"""

from __future__ import annotations

import json

import pytest

from harness import ChatContext, Emitter, Injected, ToolResult, llm_tool, run
from harness.models import (
    OpenAIChatModel,
    OpenAIResponsesModel,
    OpenAIWireTransport,
    ScriptedModel,
    call,
    fake_openai_client,
    reply,
)

CHAT_ID = "C-wire-chat-0000917"
TOKEN = "xoxb-wire-token-55512345"


class Messenger:
    """A messaging client holding a credential."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.sent: list[tuple[str, str]] = []


@llm_tool
def send_message(
    text: str, chat_here: ChatContext, progress_out: Emitter, client_here: Injected[Messenger]
) -> ToolResult:
    """Send a message to the current chat."""
    progress_out.emit("sending")
    client_here.sent.append((chat_here.chat_id, text))
    return ToolResult.ok(f"sent on {chat_here.channel}", user_content=text)


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("stream", [False, True])
def test_the_wire_schema_has_no_injected_parameter(api: str, stream: bool) -> None:
    served = ScriptedModel([call("send_message", text="hello team"), reply("Sent.")])
    transport = OpenAIWireTransport(served)
    client = fake_openai_client(transport, api_key="sk-e2e-injection-0123456789")
    adapter = OpenAIChatModel if api == "chat" else OpenAIResponsesModel
    messenger = Messenger(TOKEN)
    try:
        result = run(
            adapter(client, "gpt-test", stream=stream),
            "Tell the team hello.",
            tools=[send_message],
            context_objects=[ChatContext(channel="slack", chat_id=CHAT_ID), messenger],
        )
    finally:
        client.close()
    assert result.output == "Sent."
    assert messenger.sent == [(CHAT_ID, "hello team")]
    assert result.user_outputs == ["sending", "hello team"]
    bodies = [r.body for r in transport.requests]
    assert len(bodies) == 2
    for body in bodies:
        (tool,) = body["tools"]
        parameters = tool["function"]["parameters"] if api == "chat" else tool["parameters"]
        assert set(parameters["properties"]) == {"text"}
        assert parameters["required"] == ["text"]
        wire = json.dumps(body)
        for hidden in ("chat_here", "progress_out", "client_here", CHAT_ID, TOKEN):
            assert hidden not in wire
    assert "sent on slack" in json.dumps(bodies[1])  # the tool result did go back
