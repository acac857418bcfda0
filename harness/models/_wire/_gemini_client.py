"""``google-genai`` clients served in-process by a harness model (the wire transport).

``fake_gemini_client(model)`` is a ``google.genai.Client`` whose sync and async calls
(``client.models`` and ``client.aio.models``) go over the same httpx2 transport as the
OpenAI and Anthropic fakes to ``POST /v1beta/models/{model}:generateContent`` (and
``:streamGenerateContent?alt=sse``) of the fake, which checks them like the Gemini API
and answers in its JSON, stream and error shapes. ``vertexai=True`` makes the client
speak Vertex AI's paths (``/v1beta1/publishers/google/models/...``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness._extras import require
from harness.formats import Strictness
from harness.loop import Model

if TYPE_CHECKING:
    import httpx2
    from google import genai

    from harness.models._wire._transport import OpenAIWireTransport
else:  # google-genai requires httpx2 too
    httpx2 = require("httpx2", "the Gemini wire fake (fake_gemini_client)", extra="gemini")

__all__ = ["FAKE_GEMINI_BASE_URL", "fake_gemini_client"]

FAKE_GEMINI_BASE_URL = "http://harness.test/"
"""The base URL of the fake Gemini clients (the SDK adds ``v1beta/models/...``)."""


def _transport(model: Model | OpenAIWireTransport, profile: Strictness) -> OpenAIWireTransport:
    from harness.models._wire._transport import OpenAIWireTransport

    if isinstance(model, OpenAIWireTransport):
        return model
    return OpenAIWireTransport(model, profile=profile)


def fake_gemini_client(
    model: Model | OpenAIWireTransport,
    *,
    profile: Strictness = "default",
    vertexai: bool = False,
    base_url: str = FAKE_GEMINI_BASE_URL,
    **client_kwargs: Any,
) -> genai.Client:
    """A ``google.genai.Client`` whose requests ``model`` answers in-process (sync calls and
    ``client.aio`` alike), with retries off so provider errors surface at once.

    ``profile="strict"`` is accepted for symmetry (the Gemini API itself refuses calls to
    undeclared functions); ``vertexai=True`` speaks Vertex AI's paths.
    """
    sdk: Any = require("google.genai", "fake_gemini_client (the google-genai SDK)", extra="gemini")
    types = sdk.types

    transport = _transport(model, profile)
    options = types.HttpOptions(
        base_url=base_url,
        httpx_client=httpx2.Client(transport=transport),
        httpx_async_client=httpx2.AsyncClient(transport=transport),
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    client_kwargs.setdefault("api_key", "harness-fake-key")
    client: genai.Client = sdk.Client(vertexai=vertexai, http_options=options, **client_kwargs)
    return client
