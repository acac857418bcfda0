"""An httpx2 transport serving a harness model in the OpenAI wire format, sync and async.

``openai.OpenAI(base_url=..., api_key="test", http_client=httpx2.Client(transport=...))``
then works unchanged; ``fake_openai_client(model)`` builds that client for you.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from harness._extras import require
from harness.formats import Strictness
from harness.formats._server import DEFAULT_CHUNK_CHARS, DEFAULT_MAX_CHUNKS
from harness.loop import Model
from harness.models._wire._app import RecordedRequest, WireApp, WireReply

if TYPE_CHECKING:
    import httpx2
    import openai
else:  # the 'openai' extra installs httpx2; without it, an ImportError naming the extra
    httpx2 = require("httpx2", "the OpenAI wire fake (OpenAIWireTransport, fake_openai_client)")

__all__ = [
    "FAKE_BASE_URL",
    "OpenAIWireTransport",
    "fake_async_openai_client",
    "fake_openai_client",
]

FAKE_BASE_URL = "http://harness.test/v1"
"""The base URL the fake clients use (``.test`` never resolves on a real network)."""


class _Chunks(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """A response body delivered chunk by chunk (one SSE event per chunk)."""

    def __init__(self, chunks: tuple[bytes, ...]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


class OpenAIWireTransport(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """Serves ``model`` to an httpx2 client (and so to the ``openai`` SDK) without a network.

    Provider errors raised by the model become HTTP errors with OpenAI error bodies
    and ``retry-after`` headers; a ``ProviderTimeout`` becomes a read timeout. Any
    other exception from the model propagates unchanged, so script errors surface.
    """

    def __init__(
        self,
        model: Model,
        *,
        profile: Strictness = "default",
        chunk_chars: int = DEFAULT_CHUNK_CHARS,
        max_chunks: int = DEFAULT_MAX_CHUNKS,
    ) -> None:
        self.app = WireApp(model, profile=profile, chunk_chars=chunk_chars, max_chunks=max_chunks)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in order (retries included)."""
        return self.app.requests

    def _response(self, reply: WireReply, request: httpx2.Request) -> httpx2.Response:
        if reply.timeout:
            raise httpx2.ReadTimeout("simulated provider timeout (harness)", request=request)
        return httpx2.Response(
            reply.status, headers=dict(reply.headers), stream=_Chunks(reply.chunks), request=request
        )

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        body = request.read()
        reply = self.app.handle(
            request.method, request.url.raw_path.decode(), body, request.headers
        )
        return self._response(reply, request)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        reply = await self.app.ahandle(
            request.method, request.url.raw_path.decode(), body, request.headers
        )
        return self._response(reply, request)


def fake_openai_client(
    model: Model | OpenAIWireTransport,
    *,
    profile: Strictness = "default",
    max_retries: int = 0,
    **client_kwargs: Any,
) -> openai.OpenAI:
    """An ``openai.OpenAI`` client whose requests are answered by ``model`` in-process.

    ``max_retries`` defaults to 0 so provider errors surface at once; pass a number
    to exercise the SDK's own retry logic.
    """
    require("openai", "fake_openai_client")
    import openai

    transport = (
        model
        if isinstance(model, OpenAIWireTransport)
        else OpenAIWireTransport(model, profile=profile)
    )
    client_kwargs.setdefault("base_url", FAKE_BASE_URL)
    client_kwargs.setdefault("api_key", "test")
    return openai.OpenAI(
        http_client=httpx2.Client(transport=transport), max_retries=max_retries, **client_kwargs
    )


def fake_async_openai_client(
    model: Model | OpenAIWireTransport,
    *,
    profile: Strictness = "default",
    max_retries: int = 0,
    **client_kwargs: Any,
) -> openai.AsyncOpenAI:
    """The ``openai.AsyncOpenAI`` twin of ``fake_openai_client``."""
    require("openai", "fake_async_openai_client")
    import openai

    transport = (
        model
        if isinstance(model, OpenAIWireTransport)
        else OpenAIWireTransport(model, profile=profile)
    )
    client_kwargs.setdefault("base_url", FAKE_BASE_URL)
    client_kwargs.setdefault("api_key", "test")
    return openai.AsyncOpenAI(
        http_client=httpx2.AsyncClient(transport=transport),
        max_retries=max_retries,
        **client_kwargs,
    )
