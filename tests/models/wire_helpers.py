"""Shared by the OpenAI adapter and wire tests: canned models, response kinds, tool defs."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any

from harness.formats.openai_chat import tool_from_param
from harness.loop import Model, ModelRequest, ModelResponse, ModelSettings, Usage
from harness.messages import AssistantMessage, Message, ToolCall, UserMessage
from harness.tools import ToolDefinition


class Canned(Model):
    """Answers with the given responses in order; an exception item is raised instead."""

    __test__ = False
    name = "canned"

    def __init__(self, *items: ModelResponse | BaseException, repeat: bool = False) -> None:
        self.items = list(items)
        self.repeat = repeat
        self.requests: list[ModelRequest] = []

    def request(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        item = self.items[0] if self.repeat else self.items.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item


def usage(i: int, o: int) -> Usage:
    return Usage(input_tokens=i, output_tokens=o, total_tokens=i + o)


WEATHER = ToolCall(id="call_a", name="get_weather", arguments='{"city": "Paris"}')
TIME = ToolCall(id="call_b", name="get_time", arguments='{"zone": "Europe/Paris", "fmt": "24h"}')

KINDS: dict[str, ModelResponse] = {
    "text": ModelResponse(
        message=AssistantMessage(content="Hello there, it is sunny in Paris today!"),
        usage=usage(12, 9),
    ),
    "tool_call": ModelResponse(
        message=AssistantMessage(tool_calls=(WEATHER,)),
        finish_reason="tool_calls",
        usage=usage(20, 7),
    ),
    "parallel_calls": ModelResponse(
        message=AssistantMessage(tool_calls=(WEATHER, TIME)),
        finish_reason="tool_calls",
        usage=usage(20, 14),
    ),
    "text_and_call": ModelResponse(
        message=AssistantMessage(content="Let me check.", tool_calls=(WEATHER,)),
        finish_reason="tool_calls",
        usage=usage(20, 10),
    ),
    "refusal": ModelResponse(
        message=AssistantMessage(refusal="I'm sorry, I can't help with that."),
        usage=usage(8, 6),
    ),
    "length": ModelResponse(
        message=AssistantMessage(content="The answer is a very long"),
        finish_reason="length",
        usage=usage(10, 5),
    ),
    "content_filter": ModelResponse(
        message=AssistantMessage(content=""), finish_reason="content_filter", usage=usage(3, 0)
    ),
    "structured": ModelResponse(
        message=AssistantMessage(content='{"city": "Paris", "temp": 21}'), usage=usage(30, 11)
    ),
    "no_usage": ModelResponse(message=AssistantMessage(content="ok")),
}

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather of a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "Time in a zone.",
            "parameters": {
                "type": "object",
                "properties": {"zone": {"type": "string"}, "fmt": {"type": "string"}},
            },
        },
    },
]

"""``DEFINITIONS`` as Chat Completions sends them."""

DEFINITIONS = [tool_from_param(t) for t in TOOLS]
"""The neutral definitions a request carries."""

RESPONSES_TOOLS = [{"type": "function", **t["function"]} for t in TOOLS]


def model_request(
    messages: Sequence[Message] | None = None,
    *,
    tools: Sequence[ToolDefinition | dict[str, Any]] = DEFINITIONS,
    settings: ModelSettings | None = None,
    iteration: int = 1,
) -> ModelRequest:
    """A request like the loop builds (Chat Completions tool dicts are read as definitions)."""
    definitions = [t if isinstance(t, ToolDefinition) else tool_from_param(t) for t in tools]
    return ModelRequest(
        messages=list(messages or [UserMessage(content="What's the weather in Paris?")]),
        tools=definitions,
        tool_names=tuple(t.name for t in definitions),
        settings=settings or ModelSettings(),
        iteration=iteration,
    )


def read_until_closed(sock: socket.socket) -> bytes:
    """Every byte the server sends until it closes the connection (or resets it, or the
    socket's timeout passes)."""
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)
