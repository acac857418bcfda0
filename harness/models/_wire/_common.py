"""Shared pieces of the fake OpenAI server: parsed requests, ids, SSE framing, usage."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from harness.loop import ModelRequest, Usage
from harness.messages import AssistantMessage, Message
from harness.models._wire._errors import WireError

__all__ = [
    "IdSource",
    "WireRequest",
    "count_iteration",
    "fragments",
    "invalid_type",
    "json_type",
    "require_model",
    "require_stream",
    "sse",
    "text_of",
    "words",
]

_WORDS = re.compile(r"\s*\S+|\s+")


@dataclasses.dataclass(frozen=True, kw_only=True)
class WireRequest:
    """A validated request of either API, ready for the served model."""

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


@dataclasses.dataclass(frozen=True, slots=True)
class AcceptedHistory:
    """The last history the server accepted for one API, to read the next one incrementally.

    An accepted history has every tool call answered, so a request that repeats
    it and adds messages only needs the new messages parsed and validated.
    """

    raw: list[Any] = dataclasses.field(default_factory=list)
    """The history as decoded from the request body."""
    messages: tuple[Message, ...] = ()
    """The same history, parsed."""
    assistants: int = 0
    """How many assistant messages ``messages`` holds."""

    def reusable(self, raw: list[Any]) -> int:
        """How many leading messages of ``raw`` are this history (0 when it does not extend it)."""
        size = len(self.raw)
        if size and len(raw) >= size and raw[:size] == self.raw:
            return size
        return 0


class IdSource:
    """Unique, readable ids (``chatcmpl-harness000001``), thread-safe."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def next(self, prefix: str) -> str:
        """A new id with ``prefix``."""
        return f"{prefix}harness{next(self._counter):06d}"


def now() -> int:
    """Unix time in seconds, as the API reports ``created``."""
    return int(time.time())


def require_model(body: Mapping[str, Any]) -> str:
    """The ``model`` field, or the API's 400 when it is missing."""
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
    """How the API names the JSON type of ``value`` in its errors ("a string", ...)."""
    return _JSON_TYPES.get(type(value), type(value).__name__)


def invalid_type(param: str, expected: str, value: Any) -> WireError:
    """The API's 400 for a field of the wrong JSON type."""
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


def text_of(content: Any, where: str) -> str | None:
    """Text of a message ``content``: a string or a list of text parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part, Mapping) and isinstance(part.get("refusal"), str):
                texts.append(part["refusal"])
        return "\n".join(texts)
    raise WireError(
        400,
        f"Invalid type for '{where}': expected one of a string or array of objects, "
        f"but got {type(content).__name__} instead.",
        param=where,
        code="invalid_type",
    )


def count_iteration(messages: Sequence[Message]) -> int:
    """1 + the number of assistant turns so far."""
    return 1 + sum(1 for m in messages if isinstance(m, AssistantMessage))


def usage_chat(usage: Usage) -> dict[str, Any]:
    """Chat Completions ``usage`` object."""
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens or usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def usage_responses(usage: Usage) -> dict[str, Any]:
    """Responses API ``usage`` object."""
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.total_tokens or usage.input_tokens + usage.output_tokens,
    }


DEFAULT_CHUNK_CHARS = 8
"""Characters per streamed argument delta: a provider sends a token or two at a time."""
DEFAULT_MAX_CHUNKS = 64
"""At most this many deltas per streamed text or argument string: longer strings get
larger deltas, so a large payload stays a few dozen events (a real provider would
send a token per delta; the SDK's cost per event makes that needlessly slow here)."""


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


def sse(data: Mapping[str, Any] | str, event: str | None = None) -> bytes:
    """One server-sent event: optional ``event:`` line, ``data:`` line, blank line."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()
