"""One codec per LLM wire format, shared by matching, the cassette model and the wire trace.

A codec reads a recorded request body into the neutral form (``ParsedRequest``:
model, harness messages, offered tools), builds the body the harness would send
for a ``ModelRequest``, and reads a recorded response (JSON or server-sent
events) into a ``ModelResponse``. The OpenAI formats reuse the adapters' and the
wire fake's own functions, so a format is implemented once. Register another
format with ``register_codec``. Anthropic Messages (``POST .../v1/messages``) reuses
the Anthropic adapter's codec the same way.
"""

from __future__ import annotations

import dataclasses
import json
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from typing import Any

from harness._errors import ProviderError, RateLimited
from harness.loop import ModelRequest, ModelResponse
from harness.messages import Message

__all__ = [
    "AnthropicMessagesCodec",
    "Codec",
    "OfferedTool",
    "ParsedRequest",
    "codec_for",
    "codecs",
    "register_codec",
    "sse_events",
]


@dataclasses.dataclass(frozen=True, kw_only=True)
class OfferedTool:
    """A tool as offered on the wire: its name and argument schema."""

    name: str
    parameters: Mapping[str, Any]
    description: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ParsedRequest:
    """An LLM request in the neutral form."""

    model: str | None
    messages: tuple[Message, ...]
    tools: tuple[OfferedTool, ...]
    stream: bool = False
    tool_choice: Any = None

    @property
    def tool_names(self) -> tuple[str, ...]:
        """Offered tool names, in order."""
        return tuple(t.name for t in self.tools)


def sse_events(body: bytes) -> Iterator[tuple[str | None, str]]:
    """``(event, data)`` for each server-sent event in ``body`` (``[DONE]`` included)."""
    text = body.decode("utf-8", errors="replace").replace("\r\n", "\n")
    for block in text.split("\n\n"):
        event: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            yield event, "\n".join(data)


def _error_from(status: int, body: bytes) -> ProviderError:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        data = None
    error = data.get("error", data) if isinstance(data, Mapping) else None
    message = body.decode("utf-8", errors="replace")[:300]
    code = None
    if isinstance(error, Mapping):
        message = str(error.get("message") or message)
        raw_code = error.get("code") or error.get("type")
        code = str(raw_code) if raw_code is not None else None
    cls = RateLimited if status == 429 else ProviderError
    return cls(
        f"recorded API error (status={status}, code={code!r}): {message}", status=status, code=code
    )


class Codec(ABC):
    """Reads and writes one LLM wire format. Subclass it and ``register_codec`` the instance."""

    name: str = "codec"
    """Short name for messages (``openai-chat``)."""

    @abstractmethod
    def handles(self, method: str, path: str) -> bool:
        """True for requests of this format (by method and URL path)."""

    @abstractmethod
    def parse_request(self, body: Mapping[str, Any]) -> ParsedRequest:
        """The neutral form of a request body (raises ``ValueError`` when it is not one)."""

    @abstractmethod
    def encode_request(self, request: ModelRequest, *, model: str, stream: bool) -> dict[str, Any]:
        """The body the harness sends for ``request``."""

    @abstractmethod
    def decode_json(self, data: Any) -> ModelResponse:
        """A whole JSON response body as a ``ModelResponse``."""

    @abstractmethod
    def decode_events(self, events: list[Any]) -> ModelResponse:
        """The decoded ``data:`` payloads of a streamed response as a ``ModelResponse``."""

    def decode_response(
        self, status: int, headers: Mapping[str, str], body: bytes
    ) -> ModelResponse:
        """The recorded response as a ``ModelResponse`` (an error status raises
        ``ProviderError``)."""
        if status >= 400:
            raise _error_from(status, body)
        if headers.get("content-type", "").startswith("text/event-stream"):
            events = [
                json.loads(data)
                for _event, data in sse_events(body)
                if data.strip() and data.strip() != "[DONE]"
            ]
            return self.decode_events(events)
        return self.decode_json(json.loads(body))


def _tools_of(tools: Any) -> tuple[OfferedTool, ...]:
    out = []
    for tool in tools or ():
        function = tool.get("function", tool)
        out.append(
            OfferedTool(
                name=str(function.get("name")),
                parameters=dict(function.get("parameters") or {}),
                description=str(function.get("description") or ""),
            )
        )
    return tuple(out)


class _OpenAIWireCodec(Codec):
    """The OpenAI codecs read requests with the wire fake's own parser for their route."""

    route: str

    def handles(self, method: str, path: str) -> bool:
        return method.upper() == "POST" and path.rstrip("/").endswith(self.route)

    def _parse_wire(self, body: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    def parse_request(self, body: Mapping[str, Any]) -> ParsedRequest:
        from harness.models._wire._errors import WireError

        try:
            wire = self._parse_wire(body)
        except WireError as exc:
            raise ValueError(exc.message) from None
        return ParsedRequest(
            model=wire.model,
            messages=tuple(wire.request.messages),
            tools=_tools_of(wire.request.tools),
            stream=wire.stream,
            tool_choice=body.get("tool_choice"),
        )


class OpenAIChatCodec(_OpenAIWireCodec):
    """``POST /chat/completions``."""

    name = "openai-chat"
    route = "/chat/completions"

    def _parse_wire(self, body: Mapping[str, Any]) -> Any:
        from harness.models._wire._chat import parse_chat_request

        return parse_chat_request(body)

    def encode_request(self, request: ModelRequest, *, model: str, stream: bool) -> dict[str, Any]:
        from harness.models import chat_params

        return chat_params(request, model=model, stream=stream)

    def decode_json(self, data: Any) -> ModelResponse:
        from harness.models import chat_response_from_completion

        return chat_response_from_completion(data)

    def decode_events(self, events: list[Any]) -> ModelResponse:
        from harness.models import chat_response_from_chunks

        return chat_response_from_chunks(events)


class OpenAIResponsesCodec(_OpenAIWireCodec):
    """``POST /responses``."""

    name = "openai-responses"
    route = "/responses"

    def _parse_wire(self, body: Mapping[str, Any]) -> Any:
        from harness.models._wire._responses import parse_responses_request

        return parse_responses_request(body)

    def encode_request(self, request: ModelRequest, *, model: str, stream: bool) -> dict[str, Any]:
        from harness.models import responses_params

        return responses_params(request, model=model, stream=stream, include_reasoning=False)

    def decode_json(self, data: Any) -> ModelResponse:
        from harness.models import responses_response_from_response

        return responses_response_from_response(data)

    def decode_events(self, events: list[Any]) -> ModelResponse:
        from harness.models import responses_response_from_events

        return responses_response_from_events(events)


class AnthropicMessagesCodec(Codec):
    """``POST /v1/messages`` (Anthropic Messages; a query such as ``?beta=true`` is ignored).

    The system prompt becomes a system message, ``tool_use`` / ``tool_result`` blocks
    become tool calls and tool messages, ``input_schema`` the offered tool's schema;
    ``metadata``, ``stream``, ``cache_control`` and other volatile fields carry no meaning.
    """

    name = "anthropic-messages"

    def handles(self, method: str, path: str) -> bool:
        return method.upper() == "POST" and path.split("?", 1)[0].rstrip("/").endswith(
            "/v1/messages"
        )

    def parse_request(self, body: Mapping[str, Any]) -> ParsedRequest:
        from harness.models._anthropic._codec import request_from_body

        if not isinstance(body, Mapping):
            raise ValueError(f"the body is {type(body).__name__}, expected a JSON object")
        messages = body.get("messages")
        if not isinstance(messages, list):
            raise ValueError("'messages' must be an array of {role, content} objects")
        for i, message in enumerate(messages):
            if not isinstance(message, Mapping) or message.get("role") not in (
                "user",
                "assistant",
            ):
                raise ValueError(f"messages[{i}] needs role 'user' or 'assistant'")
        tools = body.get("tools")
        if tools is not None and not isinstance(tools, list):
            raise ValueError("'tools' must be an array of tool definitions")
        request = request_from_body(body)
        model = body.get("model")
        return ParsedRequest(
            model=str(model) if model is not None else None,
            messages=tuple(request.messages),
            tools=_tools_of(request.tools),
            stream=body.get("stream") is True,
            tool_choice=body.get("tool_choice"),
        )

    def encode_request(self, request: ModelRequest, *, model: str, stream: bool) -> dict[str, Any]:
        from harness.models._anthropic._codec import messages_params

        return messages_params(request, model=model, stream=stream)

    def decode_json(self, data: Any) -> ModelResponse:
        from harness.models._anthropic._codec import response_from_message

        return response_from_message(data)

    def decode_events(self, events: list[Any]) -> ModelResponse:
        from harness.models._anthropic._codec import response_from_events

        return response_from_events(events)


_CODECS: list[Codec] = [OpenAIChatCodec(), OpenAIResponsesCodec(), AnthropicMessagesCodec()]


def register_codec(codec: Codec) -> None:
    """Add a wire format (tried before the built-in ones)."""
    if not isinstance(codec, Codec):
        raise TypeError(f"register_codec needs a harness.cassettes.Codec, got {codec!r}")
    _CODECS.insert(0, codec)


def codecs() -> tuple[Codec, ...]:
    """The registered codecs, in the order they are tried."""
    return tuple(_CODECS)


def codec_for(method: str, path: str) -> Codec | None:
    """The codec for a request, or ``None`` when it is not an LLM call the harness reads."""
    for codec in _CODECS:
        if codec.handles(method, path):
            return codec
    return None
