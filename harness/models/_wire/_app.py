"""The fake OpenAI server's logic, sans-IO: a request (method, path, bytes) in, a reply out.

The httpx2 transport and the loopback HTTP server are thin shells around ``WireApp``.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Mapping
from typing import Any

from harness._errors import ProviderError, UsageError
from harness._validation import check_choice, check_int
from harness.loop import Model, ModelResponse
from harness.models._wire._chat import parse_chat_request, render_chat, stream_chat
from harness.models._wire._common import (
    DEFAULT_CHUNK_CHARS,
    DEFAULT_MAX_CHUNKS,
    AcceptedHistory,
    IdSource,
    WireRequest,
    now,
)
from harness.models._wire._decode import BodyDecoder
from harness.models._wire._errors import WireError, provider_error_to_wire
from harness.models._wire._messages import (
    is_messages_route,
    messages_error,
    messages_headers,
    parse_messages_request,
    render_message,
    stream_message,
)
from harness.models._wire._responses import (
    AcceptedInput,
    read_responses_request,
    render_response,
    stream_response,
)
from harness.models._wire._validation import Profile

__all__ = ["RecordedRequest", "WireApp", "WireReply"]

_BAD_JSON = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
    "using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was "
    "sent was not valid JSON. If you have trouble figuring out how to fix this, please contact "
    "us through our help center at help.openai.com.)"
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class WireReply:
    """What the server answers."""

    status: int
    headers: Mapping[str, str]
    chunks: tuple[bytes, ...]
    """The body: one chunk for JSON, one per event for SSE."""
    timeout: bool = False
    """Simulate a timeout instead of answering (a served ``ProviderTimeout``)."""

    @property
    def body(self) -> bytes:
        """The whole body."""
        return b"".join(self.chunks)


@dataclasses.dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    """A request the server received (no headers are kept, so no credentials)."""

    method: str
    path: str
    body: Any
    """The decoded JSON body (``None`` when absent or not JSON)."""
    retry_count: int | None = None
    """The SDK's ``x-stainless-retry-count`` header, when sent."""


class WireApp:
    """Serves a harness ``Model`` in the OpenAI wire format.

    Routes: ``POST /v1/chat/completions``, ``POST /v1/responses``, ``GET /v1/models``
    (the ``/v1`` prefix is optional), and the Anthropic Messages API on
    ``POST /v1/messages`` (its validation, SSE and error shape). ``profile="strict"``
    adds provider rules stricter than the real APIs' (a history calling a tool no
    longer declared is rejected).
    """

    def __init__(
        self,
        model: Model,
        *,
        profile: Profile = "default",
        chunk_chars: int = DEFAULT_CHUNK_CHARS,
        max_chunks: int = DEFAULT_MAX_CHUNKS,
    ) -> None:
        if not isinstance(model, Model):
            raise UsageError(f"the fake server serves a harness Model, got {model!r}")
        check_choice(profile, Profile, name="profile")
        self.model = model
        self.profile: Profile = profile
        for name, value in (("chunk_chars", chunk_chars), ("max_chunks", max_chunks)):
            check_int(value, name=name, minimum=1)
        self.chunk_chars = chunk_chars
        """Characters per streamed argument delta."""
        self.max_chunks = max_chunks
        """At most this many deltas per streamed text or argument (larger deltas beyond)."""
        self.requests: list[RecordedRequest] = []
        """Every request received, in order (retries included)."""
        self.responses: list[ModelResponse | None] = []
        """The model's answer to each request of ``requests`` (``None`` when it had none)."""
        self._ids = IdSource()
        self._lock = threading.Lock()
        self._accepted = AcceptedHistory()  # the last chat history, to read the next one fast
        self._accepted_input = AcceptedInput()  # the same for the Responses API
        # bodies repeat the previous body's history: decode only what is new
        self._decoders = {
            "/chat/completions": BodyDecoder("messages"),
            "/responses": BodyDecoder("input"),
        }

    # -- the two halves around the model call ------------------------------------------

    def _prepare(
        self, method: str, path: str, body: bytes, headers: Mapping[str, str]
    ) -> tuple[int, WireRequest | WireReply]:
        route = path.split("?", 1)[0].rstrip("/")
        if route.startswith("/v1/") or route == "/v1":
            route = route[3:]
        decoded: Any = None
        too_deep = False
        if body:
            decoder = self._decoders.get(route) if method == "POST" else None
            try:
                decoded = decoder.decode(body) if decoder is not None else json.loads(body)
            except (ValueError, UnicodeDecodeError):
                decoded = None
            except RecursionError:  # e.g. 100,000 nested arrays: the client's fault, a 400
                decoded, too_deep = None, True
        retry = headers.get("x-stainless-retry-count")
        with self._lock:
            index = len(self.requests)
            self.requests.append(
                RecordedRequest(
                    method=method,
                    path=path,
                    body=decoded,
                    retry_count=int(retry) if retry and retry.isdigit() else None,
                )
            )
            self.responses.append(None)
        try:
            if method == "GET" and route == "/models":
                return index, self._json(200, self._models())
            if method == "GET" and route.startswith("/models/"):
                return index, self._json(200, self._model_entry(route.removeprefix("/models/")))
            if method == "POST" and is_messages_route(route):
                try:
                    return index, parse_messages_request(decoded, profile=self.profile)
                except WireError as exc:
                    raise messages_error(exc) from None
            if method != "POST" or route not in ("/chat/completions", "/responses"):
                raise WireError(404, f"Invalid URL ({method} {path.split('?', 1)[0]})")
            if too_deep:
                raise WireError(
                    400,
                    "We could not parse the JSON body of your request: it is nested too "
                    "deeply. Send a JSON object with fewer nested arrays or objects.",
                    code="invalid_json",
                )
            if not isinstance(decoded, dict):
                raise WireError(400, _BAD_JSON)
            if route == "/chat/completions":
                with self._lock:
                    accepted = self._accepted
                wire = parse_chat_request(decoded, profile=self.profile, accepted=accepted)
                with self._lock:
                    self._accepted = AcceptedHistory(
                        raw=decoded["messages"],
                        messages=tuple(wire.request.messages),
                        assistants=wire.request.iteration - 1,
                    )
                return index, wire
            with self._lock:
                accepted_input = self._accepted_input
            wire, accepted_input = read_responses_request(
                decoded, profile=self.profile, accepted=accepted_input
            )
            with self._lock:
                self._accepted_input = accepted_input
            return index, wire
        except WireError as exc:
            return index, self._error(exc)
        except RecursionError:  # parsed, but too deep to validate (e.g. a tool's schema)
            return index, self._error(
                WireError(
                    400,
                    "The request is nested too deeply to validate (e.g. a tool's parameters "
                    "schema). Send fewer nested levels.",
                    code="invalid_request",
                )
            )

    def _render(
        self, wire: WireRequest, response: ModelResponse, path: str, index: int
    ) -> WireReply:
        if not isinstance(response, ModelResponse):
            raise TypeError(
                f"the served model must return a ModelResponse, got {type(response).__name__}"
            )
        with self._lock:
            self.responses[index] = response
        chat = path.split("?", 1)[0].rstrip("/").endswith("/chat/completions")
        if _messages(path):
            headers = {**self._headers(), **messages_headers(self._ids)}
            if wire.stream:
                headers["content-type"] = "text/event-stream; charset=utf-8"
                chunks = stream_message(wire, response, self._ids, chunk_chars=self.chunk_chars)
            else:
                headers["content-type"] = "application/json"
                chunks = [json.dumps(render_message(wire, response, self._ids)).encode()]
            return WireReply(status=200, headers=headers, chunks=tuple(chunks))
        if wire.stream:
            stream = stream_chat if chat else stream_response
            chunks = stream(
                wire,
                response,
                self._ids,
                chunk_chars=self.chunk_chars,
                max_chunks=self.max_chunks,
            )
            headers = {**self._headers(), "content-type": "text/event-stream; charset=utf-8"}
            return WireReply(status=200, headers=headers, chunks=tuple(chunks))
        data = (render_chat if chat else render_response)(wire, response, self._ids)
        return self._json(200, data)

    # -- entry points ------------------------------------------------------------------

    def handle(
        self, method: str, path: str, body: bytes = b"", headers: Mapping[str, str] | None = None
    ) -> WireReply:
        """Answer one request, calling the model synchronously (serialised by a lock)."""
        index, prepared = self._prepare(method, path, body, headers or {})
        if isinstance(prepared, WireReply):
            return prepared
        try:
            with self._lock:
                response = self.model.request(prepared.request)
        except ProviderError as exc:
            return self._error(
                messages_error(exc) if _messages(path) else provider_error_to_wire(exc)
            )
        return self._render(prepared, response, path, index)

    async def ahandle(
        self, method: str, path: str, body: bytes = b"", headers: Mapping[str, str] | None = None
    ) -> WireReply:
        """Answer one request, awaiting the model's ``arequest``."""
        index, prepared = self._prepare(method, path, body, headers or {})
        if isinstance(prepared, WireReply):
            return prepared
        try:
            response = await self.model.arequest(prepared.request)
        except ProviderError as exc:
            return self._error(
                messages_error(exc) if _messages(path) else provider_error_to_wire(exc)
            )
        return self._render(prepared, response, path, index)

    # -- helpers -----------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        return {
            "x-request-id": self._ids.next("req_"),
            "openai-processing-ms": "0",
            "openai-version": "2020-10-01",
        }

    def _json(self, status: int, data: Any) -> WireReply:
        headers = {**self._headers(), "content-type": "application/json"}
        return WireReply(status=status, headers=headers, chunks=(json.dumps(data).encode(),))

    def _error(self, exc: WireError) -> WireReply:
        headers = {**self._headers(), "content-type": "application/json", **exc.headers}
        return WireReply(
            status=exc.status, headers=headers, chunks=(exc.body(),), timeout=exc.timeout
        )

    def _model_entry(self, model_id: str) -> dict[str, Any]:
        return {"id": model_id, "object": "model", "created": now(), "owned_by": "harness"}

    def _models(self) -> dict[str, Any]:
        return {"object": "list", "data": [self._model_entry(self.model.name)]}


def _messages(path: str) -> bool:
    """Whether ``path`` is the Anthropic Messages route (``/v1`` optional, query ignored)."""
    return is_messages_route(path.split("?", 1)[0].rstrip("/"))
