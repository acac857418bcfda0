"""The server side every format shares: the request the fake decoded, ids, errors, deltas.

A wire format's server half (what the in-process fake runs) decodes a request body into
a ``WireRequest`` (raising ``WireError``, the API's 4xx answer, when the API would refuse
it) and renders a ``ModelResponse`` as the API's JSON or server-sent events. The HTTP
shells (``harness.models._wire``) only route, call the model and frame the bytes.

``WireError`` renders the OpenAI error JSON by default; a format with another error
shape subclasses it (Anthropic's ``MessagesWireError``).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, Literal, TypeVar

from harness._errors import ProviderError, ProviderTimeout
from harness.loop import ModelRequest
from harness.messages import AssistantMessage, Message

__all__ = [
    "DEFAULT_CHUNK_CHARS",
    "DEFAULT_MAX_CHUNKS",
    "IdSource",
    "IncrementalReader",
    "Strictness",
    "WireError",
    "WireRequest",
    "count_iteration",
    "error_body",
    "fragments",
    "invalid_type",
    "json_type",
    "now",
    "provider_error_to_wire",
    "require_model",
    "require_stream",
    "words",
]

Strictness = Literal["default", "strict"]
"""How strict the fake is (its ``profile=`` argument): ``default`` (the API's rules) or
``strict`` (also refuses a history that calls a tool no longer declared, as some providers
and proxies do)."""

_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    409: "invalid_request_error",
    422: "invalid_request_error",
    429: "requests",
}


class WireError(Exception):
    """An HTTP error answer of the fake server (never escapes the fake).

    ``timeout`` marks a simulated timeout: the transport raises a read timeout
    instead of answering, the loopback server closes the connection.
    """

    __module__ = "harness.formats"  # the public package, in tracebacks and reprs

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str | None = None,
        param: str | None = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type or _TYPES.get(status, "server_error")
        self.param = param
        self.code = code
        self.headers = dict(headers or {})
        self.timeout = timeout

    def body(self) -> bytes:
        """The JSON body: ``{"error": {"message", "type", "param", "code"}}``."""
        return error_body(self.message, type=self.type, param=self.param, code=self.code)


def error_body(
    message: str, *, type: str, param: str | None = None, code: str | None = None
) -> bytes:
    """The OpenAI error JSON for one error."""
    error = {"message": message, "type": type, "param": param, "code": code}
    return json.dumps({"error": error}).encode()


def _retry_after_header(seconds: float) -> str:
    if seconds == int(seconds):
        return str(int(seconds))
    return f"{seconds:g}"


def provider_error_to_wire(exc: ProviderError) -> WireError:
    """Turn a served model's ``ProviderError`` into the HTTP error a real API would send."""
    if isinstance(exc, ProviderTimeout) or (exc.status is None and exc.code == "timeout"):
        return WireError(504, str(exc) or "Request timed out.", code="timeout", timeout=True)
    status = exc.status if exc.status is not None else 500
    headers: dict[str, str] = {}
    if exc.retry_after is not None and math.isfinite(exc.retry_after) and exc.retry_after >= 0:
        headers["retry-after"] = _retry_after_header(exc.retry_after)
    if exc.retryable is False and (status == 429 or status >= 500):
        headers["x-should-retry"] = "false"
    param = "messages" if exc.code == "context_length_exceeded" else None
    return WireError(
        status,
        str(exc) or f"provider error {status}",
        param=param,
        code=exc.code,
        headers=headers,
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class WireRequest:
    """A request body the fake decoded and accepted, ready for the served model."""

    model: str
    """The model name the client asked for (echoed in the response)."""
    request: ModelRequest
    """What the served harness model sees."""
    stream: bool = False
    """Whether the client asked for server-sent events."""
    include_usage: bool = False
    """Chat streaming: send a final usage-only chunk (``stream_options.include_usage``)."""
    body: Mapping[str, Any] = dataclasses.field(default_factory=dict, repr=False)
    """The decoded JSON body (echoed fields come from here)."""


class IdSource:
    """Unique, readable ids (``chatcmpl-harness000001``), thread-safe."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def next(self, prefix: str) -> str:
        """A new id with ``prefix``."""
        return f"{prefix}harness{next(self._counter):06d}"


def now() -> int:
    """Unix time in seconds, as the APIs report ``created``."""
    return int(time.time())


def require_model(body: Mapping[str, Any]) -> str:
    """The ``model`` field, or the OpenAI API's 400 when it is missing."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise WireError(400, "you must provide a model parameter")
    return model


_JSON_TYPES = {
    str: "a string",
    int: "an integer",
    float: "a decimal",
    bool: "a boolean",
    list: "an array",
    dict: "an object",
    type(None): "null",
}


def json_type(value: Any) -> str:
    """How the OpenAI API names the JSON type of ``value`` in its errors ("a string", ...)."""
    return _JSON_TYPES.get(type(value), type(value).__name__)


def invalid_type(param: str, expected: str, value: Any) -> WireError:
    """The OpenAI API's 400 for a field of the wrong JSON type."""
    return WireError(
        400,
        f"Invalid type for '{param}': expected {expected}, but got {json_type(value)} instead.",
        param=param,
        code="invalid_type",
    )


def require_stream(body: Mapping[str, Any]) -> bool:
    """The ``stream`` flag: a boolean or absent/null, else the API's 400 naming the field."""
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise invalid_type("stream", "a boolean", stream)
    options = body.get("stream_options")
    if options is not None and not isinstance(options, Mapping):
        raise invalid_type("stream_options", "an object", options)
    if options is not None and not isinstance(options.get("include_usage", False), bool):
        raise invalid_type("stream_options.include_usage", "a boolean", options["include_usage"])
    return bool(stream)


def count_iteration(messages: Sequence[Message]) -> int:
    """1 + the number of assistant turns so far."""
    return 1 + sum(1 for m in messages if isinstance(m, AssistantMessage))


DEFAULT_CHUNK_CHARS = 8
"""Characters per streamed argument delta: a provider sends a token or two at a time."""
DEFAULT_MAX_CHUNKS = 64
"""At most this many deltas per streamed text or argument string: longer strings get
larger deltas, so a large payload stays a few dozen events (a real provider would
send a token per delta; the SDK's cost per event makes that needlessly slow here)."""

_WORDS = re.compile(r"\s*\S+|\s+")


def words(text: str, max_chunks: int = DEFAULT_MAX_CHUNKS) -> list[str]:
    """Split text into word-sized deltas (leading whitespace kept), like token streaming.

    At most ``max_chunks`` deltas: when there are more words, neighbours are joined.
    """
    pieces = _WORDS.findall(text) or [text]
    if len(pieces) <= max_chunks:
        return pieces
    per = -(-len(pieces) // max(1, max_chunks))
    return ["".join(pieces[start : start + per]) for start in range(0, len(pieces), per)]


def fragments(text: str, size: int, max_chunks: int | None = None) -> Iterator[str]:
    """Split ``text`` into pieces of ``size`` characters (at least one piece).

    With ``max_chunks``, pieces grow so that there are at most that many.
    """
    if not text:
        yield ""
        return
    if max_chunks is not None:
        size = max(size, -(-len(text) // max(1, max_chunks)))
    for start in range(0, len(text), size):
        yield text[start : start + size]


Accepted = TypeVar("Accepted")
Read = Callable[[Any, Strictness, "Accepted | None"], "tuple[WireRequest, Accepted]"]


class IncrementalReader(Generic[Accepted]):
    """A format's request reader for the fake: remembers what it last accepted (the
    history of one conversation) so that the next body, which repeats it and adds a few
    messages, only has those read and checked. A refused body changes nothing."""

    def __init__(self, read: Read[Accepted], *, profile: Strictness = "default") -> None:
        self.profile: Strictness = profile
        self._read = read
        self._accepted: Accepted | None = None
        self._lock = threading.Lock()

    def read(self, body: Any) -> WireRequest:
        """The request of ``body``; ``WireError`` (the API's answer) if the API refuses it."""
        with self._lock:
            accepted = self._accepted
        wire, remembered = self._read(body, self.profile, accepted)
        with self._lock:
            self._accepted = remembered
        return wire
