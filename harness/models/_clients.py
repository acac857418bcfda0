"""Which SDK client an adapter was given: the one check every SDK adapter makes.

An adapter takes the official SDK's sync or async client and drives the matching path;
anything else is a ``UsageError`` that names the classes it takes and shows one.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from harness._errors import UsageError
from harness._extras import require

__all__ = ["SDK_CLIENTS", "Sdk", "SdkClients", "client_kind"]

Sdk = Literal["openai", "anthropic", "google.genai"]


class SdkClients(NamedTuple):
    """One SDK's client classes, as the error message shows them."""

    label: str
    """The SDK's name in messages (``OpenAI``)."""
    sync: str
    """The sync client class (``OpenAI``)."""
    asynchronous: str
    """The async client class (``AsyncOpenAI``)."""
    example: str
    """The arguments an example construction shows."""


SDK_CLIENTS: dict[Sdk, SdkClients] = {
    "openai": SdkClients("OpenAI", "OpenAI", "AsyncOpenAI", "base_url=..., api_key=..."),
    "anthropic": SdkClients("Anthropic", "Anthropic", "AsyncAnthropic", "api_key=..."),
    "google.genai": SdkClients("google-genai", "Client", "client.AsyncClient", "api_key=..."),
}


def client_kind(client: Any, *, sdk: Sdk, adapter: str) -> Literal["sync", "async"]:
    """``"sync"`` or ``"async"`` for a client of ``sdk``; a ``UsageError`` naming
    ``adapter`` and the client classes it takes for anything else."""
    classes = SDK_CLIENTS[sdk]
    module = require(sdk, f"{adapter} (the {classes.label} SDK adapter)")
    if isinstance(client, _attribute(module, classes.asynchronous)):
        return "async"
    if isinstance(client, _attribute(module, classes.sync)):
        return "sync"
    raise UsageError(
        f"{adapter} needs an {sdk}.{classes.sync} or {sdk}.{classes.asynchronous} client, got "
        f"{type(client).__name__}; e.g. {adapter}({sdk}.{classes.sync}({classes.example}))"
    )


def _attribute(module: Any, dotted: str) -> Any:
    """``module.a.b`` for ``"a.b"`` (google-genai's async client is ``client.AsyncClient``)."""
    for name in dotted.split("."):
        module = getattr(module, name)
    return module
