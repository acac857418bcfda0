"""``anthropic`` SDK clients served in-process by a harness model (the wire transport).

``fake_anthropic_client(model)`` is ``anthropic.Anthropic`` over the same httpx2
transport as the OpenAI fakes: requests go to ``POST /v1/messages`` of the fake, which
validates them like the API and answers in its JSON or SSE format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness._extras import require
from harness.formats import Strictness
from harness.loop import Model
from harness.models._anthropic._model import import_anthropic

if TYPE_CHECKING:
    import anthropic
    import httpx2

    from harness.models._wire._transport import OpenAIWireTransport
else:  # the anthropic SDK requires httpx2 too
    httpx2 = require("httpx2", "the Anthropic wire fake (fake_anthropic_client)", extra="anthropic")

__all__ = ["FAKE_ANTHROPIC_BASE_URL", "fake_anthropic_client", "fake_async_anthropic_client"]

FAKE_ANTHROPIC_BASE_URL = "http://harness.test"
"""The base URL of the fake Anthropic clients (the SDK adds ``/v1/messages``)."""


def _transport(model: Model | OpenAIWireTransport, profile: Strictness) -> OpenAIWireTransport:
    from harness.models._wire._transport import OpenAIWireTransport

    if isinstance(model, OpenAIWireTransport):
        return model
    return OpenAIWireTransport(model, profile=profile)


def fake_anthropic_client(
    model: Model | OpenAIWireTransport,
    *,
    profile: Strictness = "default",
    max_retries: int = 0,
    **client_kwargs: Any,
) -> anthropic.Anthropic:
    """An ``anthropic.Anthropic`` client whose requests ``model`` answers in-process.

    ``profile="strict"`` also refuses histories that use tools no longer declared.
    ``max_retries`` defaults to 0 so provider errors surface at once.
    """
    sdk = import_anthropic()
    client_kwargs.setdefault("base_url", FAKE_ANTHROPIC_BASE_URL)
    client_kwargs.setdefault("api_key", "test")
    client: anthropic.Anthropic = sdk.Anthropic(
        http_client=httpx2.Client(transport=_transport(model, profile)),
        max_retries=max_retries,
        **client_kwargs,
    )
    return client


def fake_async_anthropic_client(
    model: Model | OpenAIWireTransport,
    *,
    profile: Strictness = "default",
    max_retries: int = 0,
    **client_kwargs: Any,
) -> anthropic.AsyncAnthropic:
    """The ``anthropic.AsyncAnthropic`` twin of ``fake_anthropic_client``."""
    sdk = import_anthropic()
    client_kwargs.setdefault("base_url", FAKE_ANTHROPIC_BASE_URL)
    client_kwargs.setdefault("api_key", "test")
    client: anthropic.AsyncAnthropic = sdk.AsyncAnthropic(
        http_client=httpx2.AsyncClient(transport=_transport(model, profile)),
        max_retries=max_retries,
        **client_kwargs,
    )
    return client
