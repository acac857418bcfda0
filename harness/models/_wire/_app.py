"""The fake provider server's logic, sans-IO: a request (method, path, bytes) in, a reply out.

``WireApp`` routes each request to its wire format (``harness.formats``: the format
decodes and checks the body, encodes the answer, its errors and headers) and calls the
served model in between. The httpx2 transport and the loopback HTTP server are thin
shells around it.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Mapping
from typing import Any

from harness._errors import ProviderError, UsageError
from harness._secrets import scrub_url
from harness._validation import check_choice, check_int
from harness.formats import IdSource, Strictness, WireError, WireFormat, WireRequest, wire_formats
from harness.formats._format import RequestReader
from harness.formats._json import sse_frames
from harness.formats._openai import model_entry, model_list, response_headers as default_headers
from harness.formats._server import DEFAULT_CHUNK_CHARS, DEFAULT_MAX_CHUNKS
from harness.loop import Model, ModelResponse, choice_violation
from harness.models._wire._decode import BodyDecoder

__all__ = ["RecordedRequest", "WireApp", "WireReply"]


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
    """Serves a harness ``Model`` in every wire format of ``harness.formats``.

    Routes: ``POST /v1/chat/completions``, ``POST /v1/responses``, the Anthropic
    Messages API on ``POST /v1/messages``, Gemini on ``POST
    /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent`` (and the
    Vertex AI paths; each with its format's validation, JSON, stream and error shape),
    and ``GET /v1/models`` (the ``/v1`` prefix is optional). A path's query is not
    recorded where it holds a credential (``?key=``). ``profile="strict"``
    adds provider rules stricter than the real APIs' (a history calling a tool no
    longer declared is rejected).
    """

    def __init__(
        self,
        model: Model,
        *,
        profile: Strictness = "default",
        chunk_chars: int = DEFAULT_CHUNK_CHARS,
        max_chunks: int = DEFAULT_MAX_CHUNKS,
    ) -> None:
        if not isinstance(model, Model):
            raise UsageError(f"the fake server serves a harness Model, got {model!r}")
        check_choice(profile, Strictness, name="profile")
        self.model = model
        self.profile: Strictness = profile
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
        # the route table: a fixed path per format, or the format reads the path itself
        self._formats: dict[str, WireFormat] = {f.ROUTE: f for f in wire_formats()}
        self._path_formats = [f for f in wire_formats() if hasattr(f, "route_of")]
        # each format's reader remembers the last accepted history, to read the next fast
        self._readers: dict[str, RequestReader] = {
            f.NAME: f.RequestReader(profile=profile) for f in self._formats.values()
        }
        # bodies repeat the previous body's history: decode only what is new
        self._decoders = {f.NAME: BodyDecoder(f.HISTORY_KEY) for f in self._formats.values()}

    # -- the two halves around the model call ------------------------------------------

    def _format(self, method: str, path: str) -> tuple[WireFormat | None, Any]:
        """The format serving ``POST path`` and what the path says (its ``route_of``)."""
        if method != "POST":
            return None, None
        fmt = self._formats.get(_route(path))
        if fmt is not None:
            return fmt, None
        for candidate in self._path_formats:
            said = candidate.route_of(path)
            if said is not None and getattr(said, "converse", True):
                return candidate, said
        return None, None

    def _prepare(
        self, method: str, path: str, body: bytes, headers: Mapping[str, str]
    ) -> tuple[int, WireRequest | WireReply]:
        route = _route(path)
        fmt, said = self._format(method, path)
        decoded: Any = None
        too_deep = False
        if body:
            decoder = self._decoders.get(fmt.NAME) if fmt is not None else None
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
                    path=scrub_url(path)[0],  # a key in the query (?key=) is never kept
                    body=decoded,
                    retry_count=int(retry) if retry and retry.isdigit() else None,
                )
            )
            self.responses.append(None)
        if fmt is None:
            if method == "GET" and route == "/models":
                return index, self._json(200, model_list([self.model.name]))
            if method == "GET" and route.startswith("/models/"):
                return index, self._json(200, model_entry(route.removeprefix("/models/")))
            return index, self._error(
                WireError(404, f"Invalid URL ({method} {path.split('?', 1)[0]})")
            )
        try:
            if too_deep:
                raise WireError(
                    400,
                    "We could not parse the JSON body of your request: it is nested too "
                    "deeply. Send a JSON object with fewer nested arrays or objects.",
                    code="invalid_json",
                )
            if said is None:
                return index, self._readers[fmt.NAME].read(decoded)
            # the operation's input: the body and what the path says (model, operation)
            if isinstance(decoded, Mapping):
                decoded = said.operation_input(decoded)
            wire = self._readers[fmt.NAME].read(decoded)
            return index, dataclasses.replace(wire, model=said.model, stream=said.stream)
        except WireError as exc:
            return index, self._error(exc, fmt)
        except RecursionError:  # parsed, but too deep to validate (e.g. a tool's schema)
            return index, self._error(
                WireError(
                    400,
                    "The request is nested too deeply to validate (e.g. a tool's parameters "
                    "schema). Send fewer nested levels.",
                    code="invalid_request",
                ),
                fmt,
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
        fmt, said = self._format("POST", path)
        assert fmt is not None  # _prepare found it
        broken = choice_violation(wire.request.settings.tool_choice, response.message)
        if broken is not None:  # honour tool_choice as a provider does: it cannot be broken
            return self._error(
                WireError(
                    500,
                    f"the served model answered against the request's tool_choice: {broken}; "
                    "a real provider's model cannot (fix the served model's script)",
                    type="server_error",
                ),
                fmt,
            )
        if wire.stream:
            events = fmt.response_events(
                wire,
                response,
                self._ids,
                chunk_chars=self.chunk_chars,
                max_chunks=self.max_chunks,
            )
            frames = getattr(fmt, "stream_frames", None)  # a format that frames its own stream
            if frames is not None:
                content_type, chunks = frames(events, said)
            else:
                content_type, chunks = "text/event-stream; charset=utf-8", sse_frames(events)
            headers = {**fmt.response_headers(self._ids), "content-type": content_type}
            return WireReply(status=200, headers=headers, chunks=tuple(chunks))
        return self._json(200, fmt.response_body(wire, response, self._ids), fmt)

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
            return self._error(exc, self._format("POST", path)[0])
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
            return self._error(exc, self._format("POST", path)[0])
        return self._render(prepared, response, path, index)

    # -- helpers -----------------------------------------------------------------------

    def _json(self, status: int, data: Any, fmt: WireFormat | None = None) -> WireReply:
        made = fmt.response_headers(self._ids) if fmt is not None else default_headers(self._ids)
        headers = {**made, "content-type": "application/json"}
        return WireReply(status=status, headers=headers, chunks=(json.dumps(data).encode(),))

    def _error(self, exc: ProviderError | WireError, fmt: WireFormat | None = None) -> WireReply:
        """The error answer, in ``fmt``'s shape (OpenAI's when the route is unknown)."""
        error = fmt.error_for(exc) if fmt is not None else _as_wire_error(exc)
        made = fmt.response_headers(self._ids) if fmt is not None else default_headers(self._ids)
        headers = {**made, "content-type": "application/json", **error.headers}
        return WireReply(
            status=error.status, headers=headers, chunks=(error.body(),), timeout=error.timeout
        )


def _route(path: str) -> str:
    """The path without query, trailing slash and ``/v1`` prefix (``/chat/completions``)."""
    route = path.split("?", 1)[0].rstrip("/")
    if route.startswith("/v1/") or route == "/v1":
        route = route[3:]
    return route


def _as_wire_error(exc: ProviderError | WireError) -> WireError:
    from harness.formats._server import provider_error_to_wire

    return exc if isinstance(exc, WireError) else provider_error_to_wire(exc)
