"""Errors of the fake OpenAI server, in the real API's JSON shape."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from harness._errors import ProviderError, ProviderTimeout

__all__ = ["WireError", "error_body", "provider_error_to_wire"]

_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    409: "invalid_request_error",
    422: "invalid_request_error",
    429: "requests",
}


class WireError(Exception):
    """An HTTP error answer of the fake server (never escapes the wire modules).

    ``timeout`` marks a simulated timeout: the transport raises a read timeout
    instead of answering, the loopback server closes the connection.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str | None = None,
        param: str | None = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type or _TYPES.get(status, "server_error")
        self.param = param
        self.code = code
        self.headers = dict(headers or {})
        self.timeout = timeout

    def body(self) -> bytes:
        """The JSON body: ``{"error": {"message", "type", "param", "code"}}``."""
        return error_body(self.message, type=self.type, param=self.param, code=self.code)


def error_body(
    message: str, *, type: str, param: str | None = None, code: str | None = None
) -> bytes:
    """The OpenAI error JSON for one error."""
    error = {"message": message, "type": type, "param": param, "code": code}
    return json.dumps({"error": error}).encode()


def _retry_after_header(seconds: float) -> str:
    if seconds == int(seconds):
        return str(int(seconds))
    return f"{seconds:g}"


def provider_error_to_wire(exc: ProviderError) -> WireError:
    """Turn a served model's ``ProviderError`` into the HTTP error a real API would send."""
    if isinstance(exc, ProviderTimeout) or (exc.status is None and exc.code == "timeout"):
        return WireError(504, str(exc) or "Request timed out.", code="timeout", timeout=True)
    status = exc.status if exc.status is not None else 500
    headers: dict[str, str] = {}
    if exc.retry_after is not None and math.isfinite(exc.retry_after) and exc.retry_after >= 0:
        headers["retry-after"] = _retry_after_header(exc.retry_after)
    if exc.retryable is False and (status == 429 or status >= 500):
        headers["x-should-retry"] = "false"
    param = "messages" if exc.code == "context_length_exceeded" else None
    return WireError(
        status,
        str(exc) or f"provider error {status}",
        param=param,
        code=exc.code,
        headers=headers,
    )
