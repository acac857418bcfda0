"""A loopback HTTP server speaking the OpenAI wire format, for out-of-process clients."""

from __future__ import annotations

import contextlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from harness._errors import UsageError
from harness._validation import check_int
from harness.formats import Profile, WireError
from harness.formats._server import DEFAULT_CHUNK_CHARS, DEFAULT_MAX_CHUNKS
from harness.loop import Model
from harness.models._wire._app import RecordedRequest, WireApp

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_CONNECTIONS", "LOOPBACK_HOSTS", "WireServer"]

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
"""Largest request body the server reads (4 MiB); larger ones get a 413."""
DEFAULT_MAX_CONNECTIONS = 64
"""Most connections served at once; more get a 503 with ``retry-after``."""

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
"""The only hosts the server binds to: it is a test fake, never a public service."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "harness-fake-openai"
    timeout = 30
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _serve(self) -> None:
        body = self._read_body()
        if body is None:
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        app = self.server.app
        try:
            reply = app.handle(self.command, self.path, body, headers)
        except Exception as exc:  # the served model broke: answer like a real 500
            self.server.errors.append(exc)
            error = WireError(500, f"the served model raised {type(exc).__name__}: {exc}")
            self._send(500, {"content-type": "application/json"}, [error.body()])
            return
        if reply.timeout:
            self.close_connection = True
            return
        self._send(reply.status, reply.headers, list(reply.chunks))

    def _read_body(self) -> bytes | None:
        """The request body, or ``None`` after answering a bad length with an error."""
        raw = self.headers.get("content-length")
        limit = self.server.max_body_bytes
        if raw is None:
            if self.headers.get("transfer-encoding"):
                self._refuse(
                    411,
                    "A Content-Length header is required (chunked bodies are "
                    "not supported by this fake).",
                    code="missing_content_length",
                )
                return None
            return b""
        text = raw.strip()
        if not text.isascii() or not text.isdigit():
            self._refuse(
                400,
                f"Invalid Content-Length header {raw[:40]!r}: expected a non-negative integer.",
                code="invalid_content_length",
            )
            return None
        length = int(text)
        if length > limit:
            self._refuse(
                413,
                f"The request body is {length} bytes, more than the limit of "
                f"{limit} bytes (max_body_bytes). Send a smaller request.",
                code="request_too_large",
            )
            return None
        return self.rfile.read(length) if length else b""

    def _refuse(self, status: int, message: str, *, code: str) -> None:
        """Answer an unreadable request and close the connection (its body is not read)."""
        self.close_connection = True
        error = WireError(status, message, code=code)
        self._send(
            status, {"content-type": "application/json", "connection": "close"}, [error.body()]
        )

    def _send(self, status: int, headers: Any, chunks: list[bytes]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(sum(len(c) for c in chunks)))
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(chunk)
            self.wfile.flush()

    do_GET = _serve
    do_POST = _serve
    do_PUT = _serve
    do_DELETE = _serve
    do_PATCH = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    app: WireApp
    errors: list[BaseException]
    max_body_bytes: int
    slots: threading.BoundedSemaphore

    def process_request(self, request: Any, client_address: Any) -> None:
        # at most max_connections connections are served at once; others get a 503 at once
        if not self.slots.acquire(blocking=False):
            _busy(request)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


def _busy(connection: socket.socket) -> None:
    """Answer an over-limit connection with a 503 without reading its request."""
    body = WireError(
        503,
        "The server is handling too many connections (max_connections); retry shortly.",
        code="too_many_connections",
    ).body()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nretry-after: 1\r\nconnection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        connection.settimeout(1.0)
        connection.sendall(head.encode() + body)


class _Server6(_Server):
    address_family = socket.AF_INET6


class WireServer:
    """Serves a harness ``Model`` over real HTTP on the loopback interface, one thread per client.

    ``with WireServer(model) as server:`` starts it on a free port; point any
    OpenAI-compatible client at ``server.url``. Model calls are serialised, so a
    stateful fake (a script) sees one request at a time.

    Hostile input gets the API's answers: a bad ``Content-Length`` a 400, a body over
    ``max_body_bytes`` a 413 (unread), JSON nested too deeply a 400, and connections
    beyond ``max_connections`` a 503; an idle connection is closed after 30 s.
    """

    def __init__(
        self,
        model: Model,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        profile: Profile = "default",
        chunk_chars: int = DEFAULT_CHUNK_CHARS,
        max_chunks: int = DEFAULT_MAX_CHUNKS,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        for name, value in (
            ("max_body_bytes", max_body_bytes),
            ("max_connections", max_connections),
        ):
            check_int(value, name=name, minimum=1)
        self.max_body_bytes = max_body_bytes
        self.max_connections = max_connections
        if host not in LOOPBACK_HOSTS:
            raise UsageError(
                f"the fake server only binds to loopback, got host={host!r}; "
                f"use one of {sorted(LOOPBACK_HOSTS)}"
            )
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise UsageError(f"port must be 0 (any free port) to 65535, got {port!r}")
        self.app = WireApp(model, profile=profile, chunk_chars=chunk_chars, max_chunks=max_chunks)
        self._address = (host, port)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._serving = threading.Event()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in order."""
        return self.app.requests

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions the served model raised (answered as HTTP 500)."""
        return self._server.errors if self._server is not None else []

    @property
    def port(self) -> int:
        """The bound port (after ``bind``/``start``)."""
        if self._server is None:
            raise UsageError("the server is not bound yet: call start() or use it as a context")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The base URL for OpenAI clients, e.g. ``http://127.0.0.1:8123/v1``."""
        host = self._address[0]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.port}/v1"

    def bind(self) -> WireServer:
        """Bind the socket (``port=0`` picks a free port); does not serve yet."""
        if self._server is None:
            server_class = _Server6 if ":" in self._address[0] else _Server
            server = server_class(self._address, _Handler)
            server.app = self.app
            server.errors = []
            server.max_body_bytes = self.max_body_bytes
            server.slots = threading.BoundedSemaphore(self.max_connections)
            self._server = server
        return self

    def start(self) -> WireServer:
        """Serve in a background thread."""
        self.bind()
        assert self._server is not None
        if self._thread is None:
            self._serving.set()
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="harness-wire-server",
                daemon=True,
            )
            self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until ``stop()`` (from another thread) or KeyboardInterrupt."""
        self.bind()
        assert self._server is not None
        self._serving.set()
        try:
            self._server.serve_forever(poll_interval=0.05)
        finally:
            self._serving.clear()
            self._close()

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is None:
            return
        if self._serving.is_set():
            self._serving.clear()
            self._server.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._close()

    def _close(self) -> None:
        if self._server is not None:
            self._server.server_close()

    def __enter__(self) -> WireServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
