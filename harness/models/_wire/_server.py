"""A loopback HTTP server speaking the OpenAI wire format, for out-of-process clients."""

from __future__ import annotations

import contextlib
import io
import socket
import sys
import threading
import time
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from harness._errors import UsageError
from harness._validation import check_int, is_int
from harness.formats import Strictness, WireError
from harness.formats._server import DEFAULT_CHUNK_CHARS, DEFAULT_MAX_CHUNKS
from harness.loop import Model
from harness.models._wire._app import RecordedRequest, WireApp

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_CONNECTIONS", "LOOPBACK_HOSTS", "WireServer"]

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
"""Largest request body the server reads (4 MiB); larger ones get a 413."""
DEFAULT_MAX_CONNECTIONS = 64
"""Most connections served at once; more get a 503 with ``retry-after``."""
READ_TIMEOUT = 10.0
"""Seconds a client has to send a whole request (line, headers and body) once its first
byte arrived: a client trickling its headers is cut off then (a 408 when it is still
reading). Between requests, an idle keep-alive connection waits up to ``IDLE_TIMEOUT``."""
IDLE_TIMEOUT = 30.0
"""Seconds a connection may wait between requests."""
QUEUE_WAIT = 5.0
"""Seconds a connection beyond ``max_connections`` waits for a slot before its 503."""
QUEUED_PER_SLOT = 8
"""Connections that may wait for a slot, per slot; beyond them a newcomer gets its 503
at once (so a burst is served, and nothing waits without bound)."""
EVICT_AFTER = 1.0
"""Seconds a connection must have waited (idle, or still sending its request) before a
newcomer may take its slot: a client of a burst, whose request is on its way, is not."""
LISTEN_BACKLOG = 1024
"""Connections the kernel queues before ``accept`` (socketserver's default is 5: a burst
of 500 connects left most to SYN retransmits, 1 s, 3 s, 7 s later)."""
_CLIENT_GONE = (ConnectionError, TimeoutError)
"""What a client that went away mid-answer raises: never worth a traceback."""

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
"""The only hosts the server binds to: it is a test fake, never a public service."""


class _DeadlineReader(io.RawIOBase):
    """The connection's reads, bounded in total: once a request's first byte arrived,
    the rest of it (line, headers, body) must arrive within ``READ_TIMEOUT``."""

    def __init__(self, connection: socket.socket) -> None:
        self.connection = connection
        self.deadline: float | None = None
        """When the request being read must be complete (``None``: waiting between
        requests, each read bounded by ``IDLE_TIMEOUT``)."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        deadline = self.deadline
        if deadline is None:
            self.connection.settimeout(IDLE_TIMEOUT)
        else:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("the client did not send its request in time")
            self.connection.settimeout(remaining)
        count = self.connection.recv_into(buffer)
        if count and deadline is None:
            self.deadline = time.monotonic() + READ_TIMEOUT  # the request has begun
        return count

    def request_read(self) -> None:
        """The request is in: writing the answer is bounded by ``IDLE_TIMEOUT`` again."""
        self.deadline = None
        self.connection.settimeout(IDLE_TIMEOUT)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "harness-fake-openai"
    timeout = IDLE_TIMEOUT
    disable_nagle_algorithm = True
    """``TCP_NODELAY`` on each accepted connection: an answer's segments leave at once
    instead of waiting for the client's delayed ACK of the previous one (about 40 ms)."""
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the socket's own file: reads go through the deadline instead
        self._reader = _DeadlineReader(self.connection)
        self.rfile = io.BufferedReader(self._reader)

    def handle_one_request(self) -> None:
        self.server.waiting(self.connection)  # evictable until its request is read
        self._reader.deadline = None
        super().handle_one_request()

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a garbage request line, an unsupported method or
        version, headers too long) in the API's JSON error shape, never its HTML page."""
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # unparsable line: answer as HTTP/1.1
            self.request_version = "HTTP/1.1"
        try:
            status = HTTPStatus(code)
            text = message or status.phrase
        except ValueError:
            text = message or "error"
        if explain and explain not in text:
            text = f"{text}: {explain}"
        error = WireError(code, text, code="bad_request" if code == 400 else None)
        with contextlib.suppress(*_CLIENT_GONE):
            self._send(
                code, {"content-type": "application/json", "connection": "close"}, [error.body()]
            )

    def _serve(self) -> None:
        body = self._read_body()
        self._reader.request_read()
        if body is None:
            return
        self.server.busy(self.connection)
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
        try:
            return self.rfile.read(length) if length else b""
        except TimeoutError:
            self._refuse(
                408,
                f"The request body did not arrive within {READ_TIMEOUT:g}s of the request's "
                "first byte; send the whole request at once.",
                code="request_timeout",
            )
            return None

    def _refuse(self, status: int, message: str, *, code: str) -> None:
        """Answer an unreadable request and close the connection (its body is not read)."""
        self.close_connection = True
        error = WireError(status, message, code=code)
        self._send(
            status, {"content-type": "application/json", "connection": "close"}, [error.body()]
        )

    def _send(self, status: int, headers: Any, chunks: list[bytes]) -> None:
        """Write an answer; a client that went away meanwhile just ends the connection."""
        try:
            self._write(status, headers, chunks)
        except _CLIENT_GONE:
            self.close_connection = True

    def _write(self, status: int, headers: Mapping[str, str], chunks: list[bytes]) -> None:
        """The head and the first chunk in one send, then one send per further chunk (one
        SSE event each): with ``TCP_NODELAY`` every send leaves at once, and a plain
        answer is a single segment the client reads whole."""
        head = self._head(status, headers, sum(len(c) for c in chunks))
        send = self.connection.sendall
        send(head + chunks[0] if chunks else head)
        for chunk in chunks[1:]:
            send(chunk)

    def _head(self, status: int, headers: Mapping[str, str], length: int) -> bytes:
        """The status line and headers (``Server``, ``Date``, the answer's own and its
        ``content-length``), as ``send_response`` and ``send_header`` would buffer them
        (nothing for an HTTP/0.9 request, whose answer is the bare body)."""
        for name, value in headers.items():
            if name.lower() == "connection" and value.lower() in ("close", "keep-alive"):
                self.close_connection = value.lower() == "close"
        if self.request_version == "HTTP/0.9":
            return b""
        phrase = self.responses.get(status, ("",))[0]
        lines = [
            f"{self.protocol_version} {status} {phrase}",
            f"Server: {self.version_string()}",
            f"Date: {self.date_time_string()}",
            *(f"{name}: {value}" for name, value in headers.items()),
            f"content-length: {length}\r\n\r\n",
        ]
        return "\r\n".join(lines).encode("latin-1")

    do_GET = _serve
    do_POST = _serve
    do_PUT = _serve
    do_DELETE = _serve
    do_PATCH = _serve


class _Server(ThreadingHTTPServer):
    """At most ``max_connections`` connections at once. When all are taken, a newcomer
    takes the slot of the connection that has waited longest (``EVICT_AFTER`` or more)
    without a request being served (idle between requests, or still sending one): slow
    or idle clients cannot keep others out. Otherwise it waits up to ``QUEUE_WAIT`` for
    a slot (at most ``QUEUED_PER_SLOT`` per slot wait), then gets a 503."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG
    app: WireApp
    errors: list[BaseException]
    max_body_bytes: int
    slots: threading.BoundedSemaphore

    def configure(self, app: WireApp, *, max_body_bytes: int, max_connections: int) -> None:
        """What the handlers read, and the connection limits (before serving)."""
        self.app = app
        self.errors = []
        self.max_body_bytes = max_body_bytes
        self.slots = threading.BoundedSemaphore(max_connections)
        self._queue = threading.BoundedSemaphore(QUEUED_PER_SLOT * max_connections)
        self._lock = threading.Lock()
        self._waiting: dict[socket.socket, float] = {}
        """Connections not being served, with the time they began waiting (oldest first)."""

    def waiting(self, connection: socket.socket) -> None:
        with self._lock:
            self._waiting[connection] = time.monotonic()

    def busy(self, connection: socket.socket) -> None:
        with self._lock:
            self._waiting.pop(connection, None)

    def _evict_one(self) -> bool:
        """Shut the connection that has waited longest, if that is ``EVICT_AFTER`` or
        more; True if there was one."""
        with self._lock:
            if not self._waiting:
                return False
            oldest = min(self._waiting, key=self._waiting.__getitem__)
            if time.monotonic() - self._waiting[oldest] < EVICT_AFTER:
                return False
            del self._waiting[oldest]
        with contextlib.suppress(OSError):
            oldest.shutdown(socket.SHUT_RDWR)  # its blocked read returns: the slot frees
        return True

    def process_request(self, request: Any, client_address: Any) -> None:
        if self.slots.acquire(blocking=False) or (
            self._evict_one() and self.slots.acquire(timeout=1.0)
        ):
            queued = False
        elif self._queue.acquire(blocking=False):
            queued = True  # its thread waits up to QUEUE_WAIT for a slot
        else:
            _busy(request)
            self.shutdown_request(request)
            return
        thread = threading.Thread(
            target=self._serve_connection,
            args=(request, client_address, queued),
            name="harness-wire-connection",
            daemon=True,
        )
        thread.start()

    def _wait_for_slot(self) -> bool:
        """Up to ``QUEUE_WAIT`` seconds: a slot that frees, or one taken from a connection
        that meanwhile waited ``EVICT_AFTER`` (a slow client)."""
        end = time.monotonic() + QUEUE_WAIT
        while (remaining := end - time.monotonic()) > 0:
            if self.slots.acquire(timeout=min(remaining, 0.1)):
                return True
            self._evict_one()
        return False

    def _serve_connection(self, request: Any, client_address: Any, queued: bool) -> None:
        if queued:
            got_slot = self._wait_for_slot()
            self._queue.release()
            if not got_slot:
                _busy(request)
                self.shutdown_request(request)
                return
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.busy(request)
            self.shutdown_request(request)
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away is no error worth a traceback; anything else is."""
        if isinstance(sys.exc_info()[1], _CLIENT_GONE):
            return
        super().handle_error(request, client_address)


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
    """Serves a harness ``Model`` over real HTTP on the loopback interface, one thread per
    connection (kept alive between requests).

    ``with WireServer(model) as server:`` starts it on a free port; point any
    OpenAI-compatible client at ``server.url``. Model calls are serialised, so a
    stateful fake (a script) sees one request at a time. Every route answers the same
    way, whatever its format: with ``TCP_NODELAY`` on the connection, a plain answer in
    one send, a streamed one in one send per event (the head with the first).

    Hostile input gets the API's answers: a bad ``Content-Length`` a 400, a body over
    ``max_body_bytes`` a 413 (unread), JSON nested too deeply a 400, a garbage request
    line a JSON 400; a request not complete ``READ_TIMEOUT`` after its first byte is cut
    off; beyond ``max_connections`` a newcomer takes a slow or idle client's slot, or
    waits for one, then gets a 503; an idle connection is closed after 30 s.
    """

    def __init__(
        self,
        model: Model,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        profile: Strictness = "default",
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
        if not is_int(port, minimum=0) or port > 65535:
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
            server.configure(
                self.app,
                max_body_bytes=self.max_body_bytes,
                max_connections=self.max_connections,
            )
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
