"""Fixtures shared by every test folder: a bound on hanging code, a counting loopback server."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

Bounded = Callable[[float], contextlib.AbstractContextManager[None]]


class Hung(Exception):
    """A block ran past its bound (raised by the ``bounded`` fixture)."""


@pytest.fixture
def bounded() -> Bounded:
    """``with bounded(seconds):`` fails the test when the block runs longer.

    SIGALRM interrupts the main thread even inside a regular-expression search, so a
    regression that hangs fails instead of stalling the suite.
    """

    @contextlib.contextmanager
    def within(seconds: float) -> Iterator[None]:
        def expire(signum: int, frame: object) -> None:
            raise Hung(f"the block did not finish within {seconds:g}s")

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    return within


class CountingServer:
    """A loopback HTTP server answering every GET with a valid JSON Schema, counting them."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests.append(self.path)
                body = b'{"type": "string"}'
                self.send_response(200)
                self.send_header("Content-Type", "application/schema+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def counting_server() -> Iterator[CountingServer]:
    """A loopback server that counts the requests it gets (for "never fetched" tests)."""
    server = CountingServer()
    yield server
    server.close()
