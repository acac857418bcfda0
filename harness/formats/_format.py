"""What every wire format module offers, as a protocol: the one naming scheme.

Each format is a module of ``harness.formats`` (``openai_chat``, ``openai_responses``,
``anthropic_messages``) with these names; ``tests/formats/test_naming.py`` checks that
they line up. The wire fake serves every format in ``wire_formats()``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from harness._errors import ProviderError
from harness.formats._codec import Codec
from harness.formats._json import SSEEvent
from harness.formats._prompt import PromptPiece
from harness.formats._server import IdSource, Strictness, WireError, WireRequest
from harness.loop import ModelRequest, ModelResponse, ModelSettings
from harness.messages import Message
from harness.tools._definitions import ToolChoice, ToolDefinition

__all__ = [
    "RequestReader",
    "WireFormat",
    "tool_choice_from_any_param",
    "tool_from_any_param",
    "wire_formats",
]


class RequestReader(Protocol):
    """The fake's reader of one format's request bodies (it may remember the last history)."""

    def read(self, body: Mapping[str, Any]) -> WireRequest:
        """The request of ``body``; ``WireError`` (the API's answer) if the API refuses it."""
        ...


class WireFormat(Protocol):
    """One wire format, both sides (a module of ``harness.formats``).

    A format whose path carries the model and the operation (Bedrock's
    ``/model/{modelId}/converse-stream``, Gemini's
    ``/models/{model}:streamGenerateContent?alt=sse``) also has ``route_of(path)`` (what
    the path says: ``model``, ``stream``, or ``None`` for another path), and a format that
    frames a stream its own way has ``stream_frames(events, route)`` (its ``content-type``
    and chunks: Bedrock's event-stream frames, Gemini's SSE or one JSON array); the fake
    reads both when a format has them.
    """

    NAME: str
    """The format's name (cassette codec name, ``provider_extra`` key)."""
    ROUTE: str
    """The endpoint's path after the ``/v1`` prefix (``/chat/completions``)."""
    HISTORY_KEY: str
    """The body field holding the growing history."""

    @property
    def CODEC(self) -> Codec:  # a module constant, read-only
        """The cassette codec."""
        ...

    # client side
    def request_body(
        self, request: ModelRequest, *, model: str, stream: bool = False
    ) -> dict[str, Any]:
        """The request body for ``request`` (format options are keyword arguments)."""
        ...

    def response_from_body(self, data: Any) -> ModelResponse:
        """A JSON response body (or the SDK's object) as a ``ModelResponse``."""
        ...

    def response_from_events(self, events: Any) -> ModelResponse:
        """Streamed events (their JSON or the SDK's objects) as a ``ModelResponse``."""
        ...

    def response_from_sse(self, text: str | bytes) -> ModelResponse:
        """A whole SSE body as a ``ModelResponse``."""
        ...

    def error_details(self, body: Any) -> tuple[str | None, str | None]:
        """``(code, message)`` of an error body."""
        ...

    # the prompt cache's view (harness.formats._prompt)
    def prompt_pieces(self, body: Mapping[str, Any]) -> list[PromptPiece]:
        """A request body as cache-ordered pieces, breakpoints as its marks say."""
        ...

    def prompt_tools(self, tools: Sequence[ToolDefinition]) -> list[PromptPiece]:
        """The pieces of the offered tools (those in the cached prefix)."""
        ...

    def prompt_message(self, message: Message) -> list[PromptPiece]:
        """The pieces of one message."""
        ...

    def prompt_choice(
        self, settings: ModelSettings, tools: Sequence[ToolDefinition]
    ) -> list[PromptPiece]:
        """The pieces of the tool choice, where the format caches it."""
        ...

    # both sides
    def tool_choice_from_param(self, value: Any) -> ToolChoice | None:
        """The neutral choice of this API's ``tool_choice`` value (a shape it does not know
        is kept in ``provider_extra``)."""
        ...

    # server side
    def RequestReader(self, *, profile: Strictness = "default") -> RequestReader:
        """A reader for the fake (the format's ``RequestReader`` class)."""
        ...

    def request_from_body(self, body: Any, *, profile: Strictness = "default") -> WireRequest:
        """Read and check a request body like the API."""
        ...

    def response_body(
        self, wire: WireRequest, response: ModelResponse, ids: IdSource
    ) -> dict[str, Any]:
        """The JSON answer for ``response``."""
        ...

    def response_events(
        self,
        wire: WireRequest,
        response: ModelResponse,
        ids: IdSource,
        *,
        chunk_chars: int = ...,
        max_chunks: int = ...,
    ) -> list[SSEEvent]:
        """The streamed answer for ``response``, as ``(event, data)`` pairs."""
        ...

    def error_for(self, exc: ProviderError | WireError) -> WireError:
        """The API's error answer for a served model's error."""
        ...

    def response_headers(self, ids: IdSource) -> dict[str, str]:
        """Headers sent with every answer."""
        ...


def wire_formats() -> tuple[WireFormat, ...]:
    """The built-in formats: Chat Completions, Responses, Anthropic Messages, Bedrock
    Converse, Gemini."""
    from harness.formats import (
        anthropic_messages,
        bedrock_converse,
        gemini_generate,
        openai_chat,
        openai_responses,
    )

    chat: WireFormat = openai_chat
    responses: WireFormat = openai_responses
    messages: WireFormat = anthropic_messages
    converse: WireFormat = bedrock_converse
    gemini: WireFormat = gemini_generate
    return (chat, responses, messages, converse, gemini)


def tool_choice_from_any_param(value: Mapping[str, Any]) -> ToolChoice | None:
    """The neutral choice a provider's ``tool_choice`` dict means, whichever built-in format
    spells it that way (``None`` when no format knows the shape): for inputs written
    without a format in mind, such as a scenario file's ``options``."""
    for wire_format in wire_formats():
        choice = wire_format.tool_choice_from_param(value)
        if choice is not None and not choice.provider_extra:
            return choice
    return None


def tool_from_any_param(entry: Mapping[str, Any]) -> ToolDefinition:
    """The ``ToolDefinition`` of a function tool entry in whichever built-in format's shape it
    is written: Chat Completions (``{"type": "function", "function": {...}}``), Anthropic
    Messages (``input_schema``) or the flat ``{"type": "function", "name", "parameters"}`` of
    Responses, which the OpenTelemetry GenAI conventions use for ``gen_ai.tool.definitions``.
    For records written by others (trace spans). ``WireError`` when it names no tool."""
    from harness.formats import anthropic_messages, openai_chat, openai_responses

    if isinstance(entry.get("function"), Mapping):
        return openai_chat.tool_from_param(entry)
    if "input_schema" in entry:
        if not isinstance(entry.get("name"), str) or not entry["name"]:
            raise WireError(400, "Missing required parameter: 'name'.", param="name")
        return anthropic_messages.tool_from_param(entry)
    return openai_responses.tool_from_param(entry)
