"""What the OpenAI SDK adapters share: client handling, the call, streaming and errors.

A non-streamed answer is taken unread and read here, bounded by ``max_response_bytes``
once decompressed (harness/models/_http.py); every failure of the call or of the reading
goes through one context manager, ``openai_errors``, in ``request`` and ``arequest`` alike.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import abstractmethod
from collections.abc import AsyncIterator, Awaitable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from harness._errors import UsageError
from harness._validation import check_int
from harness.loop import Model, ModelCapabilities, ModelRequest, ModelResponse
from harness.models._clients import client_kind
from harness.models._http import DEFAULT_MAX_RESPONSE_BYTES, abounded, body_json, bounded
from harness.models._openai._common import openai_errors, secrets_of
from harness.models._openai._fast import post_args, unread

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAIAdapter", "raw_stream_class"]


def raw_stream_class(stream_cls: Any) -> Any:
    """``Stream[object]`` for ``Stream[X]`` (``AsyncStream`` likewise): each event's JSON as
    is. The SDK still parses the server-sent events and raises on an ``error`` event;
    only the per-event model object (``construct_type``) is skipped, about 0.2 ms an
    event (1,000 streamed parallel tool calls are 4,000 events: 0.5 s instead of 1.4)."""
    import typing

    import openai

    origin = typing.get_origin(stream_cls) or stream_cls
    return openai.AsyncStream[object] if origin is openai.AsyncStream else openai.Stream[object]


@contextlib.asynccontextmanager
async def _closing(answer: Awaitable[Any]) -> AsyncIterator[Any]:
    """The awaited ``AsyncAPIResponse``, closed on the way out."""
    response = await answer
    try:
        yield response
    finally:
        await response.close()


class OpenAIAdapter(Model):
    """Base of the SDK adapters: subclasses say how to build params and read results."""

    default_capabilities: ClassVar[ModelCapabilities]
    answer_kind: ClassVar[str]
    """What a non-streamed answer body is, for the error when it is empty."""
    json_stream_events: ClassVar[bool] = False
    """Read streamed events as their JSON (``_read_stream`` then gets dicts): the SDK
    builds no model object per event, about 0.2 ms each (see ``raw_stream_class``)."""

    def __init__(
        self,
        client: openai.OpenAI | openai.AsyncOpenAI,
        model: str = "gpt-4o-mini",
        *,
        stream: bool = False,
        defaults: Mapping[str, Any] | None = None,
        capabilities: ModelCapabilities | None = None,
        name: str | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self._kind = client_kind(client, sdk="openai", adapter=type(self).__name__)
        if not isinstance(model, str) or not model:
            raise UsageError(f"model must be a model name such as 'gpt-4o-mini', got {model!r}")
        self.max_response_bytes = check_int(
            max_response_bytes, name="max_response_bytes", minimum=1
        )
        """The largest non-streamed answer read, once decompressed; a larger one is a
        ``MalformedResponse`` (a compression bomb, a runaway proxy)."""
        self.client = client
        secrets_of(client)  # registers the client's credentials for scrubbing
        self.model = model
        self.stream = stream
        self.defaults = dict(defaults or {})
        self.capabilities = capabilities or self.default_capabilities
        self.name = name or model

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, stream={self.stream})"

    @abstractmethod
    def params(self, request: ModelRequest) -> dict[str, Any]:
        """The SDK call's keyword arguments for ``request``."""

    @abstractmethod
    def _resource(self, client: Any) -> Any:
        """The SDK resource whose ``create`` this API uses (e.g. ``client.responses``)."""

    @abstractmethod
    def _wire_exact(self) -> tuple[frozenset[str], Any]:
        """Params this adapter builds as plain JSON, and the SDK's params ``TypedDict``.

        ``params()`` builds the history as plain JSON; a subclass that overrides
        ``params()`` trusts nothing, so every value is checked before the fast path.
        """

    def _encoded(self, params: Mapping[str, Any]) -> dict[str, str] | None:
        """JSON text of the trusted params, when known (the history's, joined from pieces)."""
        return None

    def _post_args(
        self, resource: Any, params: dict[str, Any]
    ) -> tuple[str, dict[str, Any]] | None:
        """``_post`` arguments that send ``params`` like ``create`` would, skipping its request
        transform (``None``: call ``create``)."""
        trusted, params_type = self._wire_exact()
        return post_args(
            resource,
            params,
            trusted=trusted,
            params_type=params_type,
            encoded=self._encoded(params) if trusted else None,
        )

    def _send(self, params: dict[str, Any]) -> Any:
        """Send a streamed call: what ``create`` returns, a stream (awaitable with an async
        client)."""
        resource = self._resource(self.client)
        fast = self._post_args(resource, params)
        if fast is None:
            return resource.create(**params)
        path, arguments = fast
        if self.json_stream_events and arguments.get("stream_cls") is not None:
            arguments = {**arguments, "stream_cls": raw_stream_class(arguments["stream_cls"])}
        return resource._post(path, **arguments)

    def _answer(self, params: dict[str, Any]) -> Any:
        """Send a non-streamed call: a context manager (``async with`` for an async client)
        giving the SDK's ``APIResponse`` with the body unread, for the caller to read bounded."""
        resource = self._resource(self.client)
        fast = self._post_args(resource, params)
        arguments = unread(fast[1]) if fast is not None else None
        if fast is None or arguments is None:
            return resource.with_streaming_response.create(**params)
        if self._kind == "sync":
            return contextlib.closing(resource._post(fast[0], **arguments))
        return _closing(resource._post(fast[0], **arguments))

    def _json(self, body: bytes) -> Any:
        return body_json(body, "OpenAI", self.answer_kind)

    @abstractmethod
    def _read(self, result: Any) -> ModelResponse:
        """A non-streamed answer (its JSON) as a ``ModelResponse``."""

    @abstractmethod
    def _read_stream(self, events: Iterable[Any]) -> ModelResponse:
        """Streamed SDK events (chunks) as a ``ModelResponse``."""

    def request(self, request: ModelRequest) -> ModelResponse:
        if self._kind != "sync":
            raise UsageError(
                f"{type(self).__name__} has an async client: use harness.arun(...), or pass "
                "an openai.OpenAI client for harness.run(...)"
            )
        params = self.params(request)
        limit, adapter = self.max_response_bytes, type(self).__name__
        with openai_errors(self.client, params):
            if self.stream:
                with self._send(params) as stream:
                    return self._read_stream(stream)
            with self._answer(params) as answer:
                body = bounded(answer.iter_bytes(), limit, "OpenAI", adapter)
            return self._read(self._json(body))

    async def arequest(self, request: ModelRequest) -> ModelResponse:
        if self._kind == "sync":
            return await asyncio.to_thread(self.request, request)
        params = self.params(request)
        limit, adapter = self.max_response_bytes, type(self).__name__
        with openai_errors(self.client, params):
            if self.stream:
                async with await self._send(params) as stream:
                    events = [event async for event in stream]
                return self._read_stream(events)
            async with self._answer(params) as answer:
                body = await abounded(answer.iter_bytes(), limit, "OpenAI", adapter)
            return self._read(self._json(body))
