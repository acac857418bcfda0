"""Shared by the OpenAI adapters: client checks, error mapping, secret scrubbing."""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from harness._errors import (
    ContextLengthExceeded,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    UsageError,
)
from harness._extras import require
from harness._secrets import is_credential_header, register_secret, scrub_message, scrub_url
from harness.loop import ModelRequest, ModelSettings

__all__ = [
    "client_kind",
    "json_schema_format",
    "map_openai_error",
    "output_format_name",
    "retry_after_seconds",
    "scrub",
    "secrets_of",
    "tool_params",
]

_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def client_kind(client: Any, adapter: str) -> str:
    """``"sync"`` or ``"async"`` for an ``openai`` client; ``UsageError`` for anything else."""
    require("openai", f"{adapter} (the OpenAI SDK adapter)")
    import openai

    if isinstance(client, openai.AsyncOpenAI):
        return "async"
    if isinstance(client, openai.OpenAI):
        return "sync"
    raise UsageError(
        f"{adapter} needs an openai.OpenAI or openai.AsyncOpenAI client, got "
        f"{type(client).__name__}; e.g. {adapter}(openai.OpenAI(base_url=..., api_key=...))"
    )


def secrets_of(client: Any) -> tuple[str, ...]:
    """Credentials a client holds, to scrub from error messages: its keys, organization,
    project, credential-named default headers and query parameters, and base-URL
    userinfo. Values of 8 characters or more are registered (``harness._secrets``) so
    cassettes and reports scrub them too."""
    values: list[str] = []
    for attr in ("api_key", "admin_api_key", "webhook_secret", "organization", "project"):
        value = getattr(client, attr, None)
        if isinstance(value, str):
            values.append(value)
    for attr, rule in (("_custom_headers", is_credential_header), ("_custom_query", None)):
        mapping = getattr(client, attr, None)
        if isinstance(mapping, Mapping):
            for name, value in mapping.items():
                if isinstance(value, str) and (rule is None or rule(str(name))):
                    values.append(value)
    base_url = getattr(client, "base_url", None)
    if base_url is not None:
        values.extend(scrub_url(str(base_url))[1])
    kept = tuple(dict.fromkeys(v for v in values if len(v) >= 4))
    for value in kept:
        register_secret(value, source="an OpenAI client credential", warn=False)
    return kept


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret (and every registered one, in any escaped form) and
    URL credentials (userinfo, ``?key=...``) replaced by ``[hidden]``."""
    return scrub_message(text, secrets)


def output_format_name(name: str | None) -> str:
    """A ``response_format`` name that the API accepts (``^[a-zA-Z0-9_-]{1,64}$``)."""
    cleaned = _NAME_CHARS.sub("_", name or "")[:64]
    return cleaned or "output"


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (number or HTTP date)."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))


def _body_error(body: Any) -> Mapping[str, Any]:
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            return inner
    return {}


def map_openai_error(exc: BaseException, *, secrets: Iterable[str] = ()) -> ProviderError:
    """The harness ``ProviderError`` for an ``openai`` SDK exception (credentials scrubbed)."""
    import openai

    secrets = tuple(secrets)
    if isinstance(exc, openai.APITimeoutError):
        return ProviderTimeout(scrub(f"OpenAI request timed out: {exc}", secrets))
    if isinstance(exc, openai.APIConnectionError):
        return ProviderError(
            scrub(f"could not reach the OpenAI endpoint: {exc}", secrets),
            code="connection_error",
            retryable=True,
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        error = _body_error(exc.body)
        code = exc.code or error.get("code") or exc.type or error.get("type")
        code = str(code) if code is not None else None
        detail = error.get("message") or exc.message
        message = scrub(f"OpenAI API error (status={status}, code={code!r}): {detail}", secrets)
        retry_after = retry_after_seconds(exc.response.headers)
        cls: type[ProviderError] = ProviderError
        if status == 429:
            cls = RateLimited
        elif code == "context_length_exceeded":
            cls = ContextLengthExceeded
        return cls(message, status=status, retry_after=retry_after, code=code)
    return ProviderError(scrub(f"OpenAI SDK error: {exc}", secrets))


def tool_params(
    request: ModelRequest,
    tool: Callable[[Mapping[str, Any]], dict[str, Any]],
    choice: Callable[[str | Mapping[str, Any]], str | dict[str, Any]],
) -> dict[str, Any]:
    """``tools``, ``parallel_tool_calls`` and ``tool_choice``, in one API's shapes.

    All three are left out when no tools are offered: the API rejects ``tool_choice``
    without tools.
    """
    if not request.tools:
        return {}
    settings = request.settings
    params: dict[str, Any] = {"tools": [tool(t) for t in request.tools]}
    if settings.parallel_tool_calls is not None:
        params["parallel_tool_calls"] = settings.parallel_tool_calls
    if settings.tool_choice is not None:
        params["tool_choice"] = choice(settings.tool_choice)
    return params


def json_schema_format(settings: ModelSettings) -> dict[str, Any] | None:
    """The ``json_schema`` response format for a structured-output request, if any."""
    if settings.output_schema is None:
        return None
    return {
        "name": output_format_name(settings.output_name),
        "schema": dict(settings.output_schema),
        "strict": False,
    }
