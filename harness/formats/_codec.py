"""The cassette codec: one per wire format, as recordings are read and matched.

A codec reads a recorded request body into the neutral form (``ParsedRequest``:
model, harness messages, offered ``ToolDefinition``s, ``ToolChoice``), builds the body
the harness would send for a ``ModelRequest``, and reads a recorded response (JSON or
server-sent events, or an error status) into a ``ModelResponse``. Each format module
of ``harness.formats`` defines its codec with its own encoders and decoders, so a
recording is read exactly as the adapter and the fake read that format. Register
another format with ``register_codec``.
"""

from __future__ import annotations

import dataclasses
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

from harness._errors import ProviderError, RateLimited
from harness.formats._json import is_sse, sse_data
from harness.formats._server import WireError, WireRequest
from harness.loop import ModelRequest, ModelResponse, ModelSettings
from harness.messages import Message
from harness.tools._definitions import ToolChoice, ToolDefinition

__all__ = [
    "Codec",
    "FormatCodec",
    "ParsedRequest",
    "codec_for",
    "codecs",
    "register_codec",
]


@dataclasses.dataclass(frozen=True, kw_only=True)
class ParsedRequest:
    """An LLM request in the neutral form."""

    model: str | None
    messages: tuple[Message, ...]
    tools: tuple[ToolDefinition, ...]
    stream: bool = False
    tool_choice: ToolChoice | None = None

    @property
    def tool_names(self) -> tuple[str, ...]:
        """Offered tool names, in order."""
        return tuple(t.name for t in self.tools)

    def as_model_request(self) -> ModelRequest:
        """The request as the loop would have built it (for tool states)."""
        return ModelRequest(
            messages=self.messages,
            tools=self.tools,
            tool_names=self.tool_names,
            settings=ModelSettings(tool_choice=self.tool_choice),
            iteration=1,
        )

    @classmethod
    def of(cls, wire: WireRequest) -> ParsedRequest:
        """The neutral form of a request a format's server side decoded."""
        return cls(
            model=wire.model,
            messages=tuple(wire.request.messages),
            tools=tuple(wire.request.tools),
            stream=wire.stream,
            tool_choice=wire.request.settings.tool_choice,
        )


def error_from(status: int, body: bytes) -> ProviderError:
    """The ``ProviderError`` of a recorded error answer (``{"error": {...}}`` in either
    provider's shape: the code is the error's ``code``, else its ``type``)."""
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
    compared_fields: frozenset[str] = frozenset(
        {"model", "messages", "input", "instructions", "system", "tools"}
    )
    """Body fields ``parse_request`` reads (compared by meaning, not by the ``strict`` matcher's
    field-by-field check)."""
    volatile_fields: frozenset[str] = frozenset(
        {
            "stream_options",
            "user",
            "metadata",
            "store",
            "include",
            "service_tier",
            "prompt_cache_key",
            "stream",
        }
    )
    """Body fields that change between runs, not between meanings (no matcher compares them)."""

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

    def model_of(self, path: str) -> str | None:
        """The model a request's path names, for formats that put it there (Bedrock's
        ``/model/{modelId}/converse``); ``None`` when the body names it."""
        return None

    def decode_response(
        self, status: int, headers: Mapping[str, str], body: bytes
    ) -> ModelResponse:
        """The recorded response as a ``ModelResponse`` (an error status raises
        ``ProviderError``)."""
        if status >= 400:
            raise error_from(status, body)
        if is_sse(headers, body):  # by content too: some recordings kept no headers
            return self.decode_events(sse_data(body))
        return self.decode_json(json.loads(body))


class FormatCodec(Codec):
    """A built-in format's codec, made of that format's own functions.

    ``read`` is the format's request reader (``request_from_body``: the fake's reading,
    with the API's checks; a refusal becomes the ``ValueError`` codecs raise) or a
    lenient reader returning a ``ParsedRequest``; ``path_suffix`` is how the request's
    path ends (a query is ignored).
    """

    def __init__(
        self,
        *,
        name: str,
        path_suffix: str,
        read: Callable[[Any], WireRequest | ParsedRequest],
        encode: Callable[..., dict[str, Any]],
        decode_json: Callable[[Any], ModelResponse],
        decode_events: Callable[[Any], ModelResponse],
    ) -> None:
        self.name = name
        self.path_suffix = path_suffix
        self._read = read
        self._encode = encode
        self._decode_json = decode_json
        self._decode_events = decode_events

    def handles(self, method: str, path: str) -> bool:
        return method.upper() == "POST" and path.split("?", 1)[0].rstrip("/").endswith(
            self.path_suffix
        )

    def parse_request(self, body: Mapping[str, Any]) -> ParsedRequest:
        try:
            read = self._read(body)
        except WireError as exc:
            raise ValueError(exc.message) from None
        return read if isinstance(read, ParsedRequest) else ParsedRequest.of(read)

    def encode_request(self, request: ModelRequest, *, model: str, stream: bool) -> dict[str, Any]:
        return self._encode(request, model=model, stream=stream)

    def decode_json(self, data: Any) -> ModelResponse:
        return self._decode_json(data)

    def decode_events(self, events: list[Any]) -> ModelResponse:
        return self._decode_events(events)

    def __repr__(self) -> str:
        return f"FormatCodec({self.name!r})"


_CODECS: list[Codec] = []


def register_codec(codec: Codec) -> None:
    """Add a wire format (tried before the built-in ones)."""
    if not isinstance(codec, Codec):
        raise TypeError(f"register_codec needs a harness.formats.Codec, got {codec!r}")
    _CODECS.insert(0, codec)


def _builtin() -> list[Codec]:
    """The built-in formats' codecs, imported on first use."""
    from harness.formats.anthropic_messages import CODEC as ANTHROPIC
    from harness.formats.bedrock_converse import CODEC as CONVERSE, INVOKE_CODEC as INVOKE
    from harness.formats.gemini_generate import CODEC as GEMINI
    from harness.formats.openai_chat import CODEC as CHAT
    from harness.formats.openai_responses import CODEC as RESPONSES

    return [CHAT, RESPONSES, ANTHROPIC, CONVERSE, INVOKE, GEMINI]


_BUILTIN: list[Codec] = []


def codecs() -> tuple[Codec, ...]:
    """The registered codecs, in the order they are tried (registered ones first)."""
    if not _BUILTIN:
        _BUILTIN.extend(_builtin())
    return (*_CODECS, *_BUILTIN)


def codec_for(method: str, path: str) -> Codec | None:
    """The codec for a request, or ``None`` when it is not an LLM call the harness reads."""
    for codec in codecs():
        if codec.handles(method, path):
            return codec
    return None
