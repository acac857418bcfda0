"""``boto3`` ``bedrock-runtime`` clients served in-process by a harness model.

botocore signs each request and then emits ``before-send``; a handler that returns a
response replaces the HTTP call (the hook botocore's own stubs are built on). The
handler here gives the signed request to the fake (``WireApp``: the same routes, checks
and answers as ``harness serve``) and hands its reply back to botocore, which parses it
as it parses Bedrock's: JSON, event-stream frames for ConverseStream, and errors by
their ``x-amzn-ErrorType``. No socket is opened; the credentials are dummies, the region
is given, and the endpoint is a reserved name that never resolves.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from harness._extras import require
from harness.formats import Strictness
from harness.loop import Model
from harness.models._wire._app import RecordedRequest, WireApp, WireReply

__all__ = [
    "FAKE_BEDROCK_ENDPOINT",
    "FAKE_BEDROCK_REGION",
    "BedrockWireHook",
    "fake_bedrock_client",
]

FAKE_BEDROCK_ENDPOINT = "https://bedrock-runtime.harness.invalid"
"""The endpoint of the fake clients (``.invalid`` never resolves)."""
FAKE_BEDROCK_REGION = "us-east-1"
"""The region the fake clients name (set, so botocore looks nothing up)."""


class _Body:
    """A reply's body as botocore reads one: whole (``read``) or chunk by chunk
    (``stream``, one event-stream frame per chunk)."""

    def __init__(self, chunks: tuple[bytes, ...]) -> None:
        self._chunks = chunks

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield from self._chunks

    def read(self, *_: Any, **__: Any) -> bytes:
        return b"".join(self._chunks)

    def close(self) -> None:
        return None


class BedrockWireHook:
    """The ``before-send`` handler that answers a botocore client's requests with a
    ``WireApp`` (register it with ``client.meta.events.register("before-send.*", hook)``;
    ``fake_bedrock_client`` does)."""

    def __init__(self, model: Model | WireApp, *, profile: Strictness = "default") -> None:
        self.app = model if isinstance(model, WireApp) else WireApp(model, profile=profile)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in order (retries included; no headers kept)."""
        return self.app.requests

    def __call__(self, request: Any, **_: Any) -> Any:
        from botocore.awsrequest import AWSResponse
        from botocore.exceptions import ReadTimeoutError

        body = request.body
        if hasattr(body, "read"):
            body = body.read()
        if isinstance(body, str):
            body = body.encode()
        url = urlsplit(request.url)
        path = url.path + (f"?{url.query}" if url.query else "")
        headers = {str(k).lower(): _text(v) for k, v in request.headers.items()}
        reply: WireReply = self.app.handle(request.method, path, body or b"", headers)
        if reply.timeout:
            raise ReadTimeoutError(endpoint_url=request.url)
        return AWSResponse(request.url, reply.status, dict(reply.headers), _Body(reply.chunks))


def _text(value: Any) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


def fake_bedrock_client(
    model: Model | WireApp | BedrockWireHook,
    *,
    profile: Strictness = "default",
    max_attempts: int = 1,
    **client_kwargs: Any,
) -> Any:
    """A ``boto3`` ``bedrock-runtime`` client whose requests ``model`` answers in-process.

    ``profile="strict"`` also refuses histories that use tools no longer declared.
    ``max_attempts`` (botocore's retries, the first attempt included) defaults to 1 so
    provider errors surface at once. Pass a ``WireApp`` (or a ``BedrockWireHook``) to read
    the requests it received. Other keyword arguments go to ``boto3.client`` (a ``config``
    given there replaces the retry setting).
    """
    boto3 = require("boto3", "fake_bedrock_client (the boto3 bedrock-runtime fake)")
    from botocore.config import Config

    hook = model if isinstance(model, BedrockWireHook) else BedrockWireHook(model, profile=profile)
    client_kwargs.setdefault("region_name", FAKE_BEDROCK_REGION)
    client_kwargs.setdefault("endpoint_url", FAKE_BEDROCK_ENDPOINT)
    client_kwargs.setdefault("aws_access_key_id", "harness-fake-key")
    client_kwargs.setdefault("aws_secret_access_key", "harness-fake-secret")
    client_kwargs.setdefault("config", Config(retries={"total_max_attempts": max_attempts}))
    client = boto3.client("bedrock-runtime", **client_kwargs)
    client.meta.events.register("before-send.bedrock-runtime", hook)
    return client
