"""What the OpenAI SDK adapters share: client handling, the call, streaming and errors."""

from __future__ import annotations

import asyncio
import json
from abc import abstractmethod
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from harness._errors import UsageError
from harness.formats._read import not_json
from harness.loop import Model, ModelCapabilities, ModelRequest, ModelResponse
from harness.models._clients import client_kind
from harness.models._openai._common import map_openai_error, secrets_of, unencodable
from harness.models._openai._fast import post_args

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAIAdapter", "raw_stream_class"]


def raw_stream_class(stream_cls: Any) -> Any:
    """``Stream[object]`` for ``Stream[X]`` (``AsyncStream`` likewise): each event's JSON as
    is. The SDK still parses the server-sent events and raises on an ``error`` event;
    only the per-event model object (``construct_type``) is skipped: 1,000 streamed
    parallel tool calls (4,000 events) went from 1.4 s to 0.5 s on the shared machine."""
    import typing

    import openai

    origin = typing.get_origin(stream_cls) or stream_cls
    return openai.AsyncStream[object] if origin is openai.AsyncStream else openai.Stream[object]


class OpenAIAdapter(Model):
    """Base of the SDK adapters: subclasses say how to build params and read results."""

    default_capabilities: ClassVar[ModelCapabilities]
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
    ) -> None:
        self._kind = client_kind(client, sdk="openai", adapter=type(self).__name__)
        if not isinstance(model, str) or not model:
            raise UsageError(f"model must be a model name such as 'gpt-4o-mini', got {model!r}")
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

    def _send(self, params: dict[str, Any]) -> Any:
        """Post ``params`` like the SDK's ``create`` would, skipping its request transform.

        Returns what ``create`` returns (awaitable with an async client).
        """
        resource = self._resource(self.client)
        trusted, params_type = self._wire_exact()
        fast = post_args(
            resource,
            params,
            trusted=trusted,
            params_type=params_type,
            encoded=self._encoded(params) if trusted else None,
        )
        if fast is None:
            return resource.create(**params)
        path, arguments = fast
        if self.json_stream_events and arguments.get("stream_cls") is not None:
            arguments = {**arguments, "stream_cls": raw_stream_class(arguments["stream_cls"])}
        return resource._post(path, **arguments)

    @abstractmethod
    def _read(self, result: Any) -> ModelResponse:
        """A non-streamed SDK result as a ``ModelResponse``."""

    @abstractmethod
    def _read_stream(self, events: Iterable[Any]) -> ModelResponse:
        """Streamed SDK events (chunks) as a ``ModelResponse``."""

    def request(self, request: ModelRequest) -> ModelResponse:
        if self._kind != "sync":
            raise UsageError(
                f"{type(self).__name__} has an async client: use harness.arun(...), or pass "
                "an openai.OpenAI client for harness.run(...)"
            )
        import openai

        params = self.params(request)
        try:
            if self.stream:
                with self._send(params) as stream:
                    return self._read_stream(stream)
            return self._read(self._send(params))
        except openai.OpenAIError as exc:
            raise map_openai_error(exc, secrets=secrets_of(self.client)) from None
        except json.JSONDecodeError as exc:  # the SDK parses the body before we see it
            raise not_json(exc) from None
        except UnicodeEncodeError as exc:  # a lone surrogate: the body cannot be written
            raise unencodable(exc, params, "OpenAI") from None

    async def arequest(self, request: ModelRequest) -> ModelResponse:
        if self._kind == "sync":
            return await asyncio.to_thread(self.request, request)
        import openai

        params = self.params(request)
        try:
            if self.stream:
                async with await self._send(params) as stream:
                    events = [event async for event in stream]
                return self._read_stream(events)
            return self._read(await self._send(params))
        except openai.OpenAIError as exc:
            raise map_openai_error(exc, secrets=secrets_of(self.client)) from None
        except json.JSONDecodeError as exc:  # the SDK parses the body before we see it
            raise not_json(exc) from None
        except UnicodeEncodeError as exc:  # a lone surrogate: the body cannot be written
            raise unencodable(exc, params, "OpenAI") from None
