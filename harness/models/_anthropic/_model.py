"""The Anthropic Messages adapter over the official ``anthropic`` SDK (sync and async clients).

The format itself (request body, message and event decoding) is
``harness.formats.anthropic_messages``; this module adds the SDK call, the bounded
reading of the answer (harness/models/_http.py), the one error-mapping context manager
of the sync and async paths (``anthropic_errors``), and the memory of thinking blocks.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from harness._errors import (
    ContextLengthExceeded,
    MalformedResponse,
    ProviderError,
    RateLimited,
    UsageError,
)
from harness._extras import require
from harness._secrets import hidden_values, register_secret
from harness._validation import check_int
from harness.formats import anthropic_messages
from harness.formats._read import not_json
from harness.formats.anthropic_messages import DEFAULT_MAX_TOKENS, ThinkingKey
from harness.loop import Model, ModelCapabilities, ModelRequest, ModelResponse
from harness.models._clients import client_kind
from harness.models._http import (
    DEFAULT_MAX_RESPONSE_BYTES,
    abounded,
    body_json,
    bounded,
    connection_error,
    endpoint,
    reading_error,
)
from harness.models._openai._common import (
    retry_after_seconds,
    scrub,
    secrets_of,
    unencodable,
)
from harness.models._tool_history import (
    PreparesToolHistory,
    ToolHistoryPolicy,
    ToolMemory,
    check_policy,
)

if TYPE_CHECKING:
    import anthropic

__all__ = [
    "ANTHROPIC_CAPABILITIES",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "AnthropicModel",
    "anthropic_errors",
    "import_anthropic",
    "map_anthropic_error",
]

ANTHROPIC_CAPABILITIES = ModelCapabilities(
    supports_dynamic_tools=True,
    parallel_tool_calls=True,
    streaming=True,
    structured_output=False,
    tool_history="tools_defined",
    tool_search=("regex", "bm25", "client"),
    allowed_tools=False,
    tool_additions=True,
)
"""What the Messages API supports and demands (tools must be defined once tools were used)."""


def import_anthropic() -> Any:
    """The ``anthropic`` module, or an ImportError naming the extra to install."""
    return require("anthropic", "the Anthropic adapter (the official anthropic SDK)")


def _secrets(client: Any) -> tuple[str, ...]:
    """The client's credentials (key, auth token, credential headers, URL userinfo),
    registered so cassettes and reports scrub them too."""
    token = getattr(client, "auth_token", None)
    extra = tuple(hidden_values([token])) if isinstance(token, str) else ()
    for value in extra:
        register_secret(value, source="an Anthropic client credential", warn=False)
    return (*secrets_of(client), *extra)


def map_anthropic_error(exc: BaseException, *, secrets: Iterable[str] = ()) -> ProviderError:
    """The harness ``ProviderError`` for an ``anthropic`` SDK exception (credentials scrubbed).

    ``code`` is the API's error type (``rate_limit_error``, ``overloaded_error``, ...);
    ``retry_after`` comes from the ``retry-after`` header; 429, 5xx and 529 are retryable.
    """
    anthropic = import_anthropic()
    secrets = tuple(secrets)
    if isinstance(exc, anthropic.APIConnectionError):  # APITimeoutError is one
        timed_out = isinstance(exc, anthropic.APITimeoutError)
        return connection_error(exc, "Anthropic", secrets, timed_out=timed_out)
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        code, body_message = anthropic_messages.error_details(exc.body)
        detail = body_message or exc.message
        message = scrub(f"Anthropic API error (status={status}, type={code!r}): {detail}", secrets)
        retry_after = retry_after_seconds(exc.response.headers)
        cls: type[ProviderError] = ProviderError
        if status == 429:
            cls = RateLimited
        elif status in (400, 413) and "too long" in str(detail).lower():
            cls = ContextLengthExceeded
        should_retry = exc.response.headers.get("x-should-retry")
        retryable = {"true": True, "false": False}.get(str(should_retry).lower())
        return cls(message, status=status, retry_after=retry_after, code=code, retryable=retryable)
    return ProviderError(scrub(f"Anthropic SDK error: {exc}", secrets))


@contextlib.contextmanager
def anthropic_errors(client: Any, params: Mapping[str, Any]) -> Iterator[None]:
    """The Anthropic adapter's one error-mapping context manager, shared by the sync and
    the async path: every failure of the SDK call with ``params`` and of reading its
    answer becomes a harness error. The SDK's errors go through ``map_anthropic_error``;
    the transport's, raised while the adapter reads the answer (a body cut short, a
    timeout, a body that is not the gzip it claims), through ``reading_error`` (naming the
    endpoint); a streamed event that is not JSON is a ``MalformedResponse``; a request
    text that cannot be written, ``UnencodableText``. Credentials never appear in the
    message."""
    anthropic = import_anthropic()
    import httpx2

    try:
        yield
    except anthropic.AnthropicError as exc:
        raise map_anthropic_error(exc, secrets=_secrets(client)) from None
    except httpx2.HTTPError as exc:  # raised by the answer's body, past the SDK's mapping
        url = endpoint(exc, getattr(client, "base_url", "the Anthropic API"))
        raise reading_error(exc, "Anthropic", url, _secrets(client)) from None
    except json.JSONDecodeError as exc:  # a streamed event the SDK could not parse
        raise not_json(exc) from None
    except UnicodeEncodeError as exc:  # a lone surrogate: the body cannot be written
        raise unencodable(exc, params, "Anthropic") from None


@functools.lru_cache(maxsize=16)
def _sdk_keywords(method: Any) -> frozenset[str]:
    return frozenset(inspect.signature(method).parameters)


def sdk_call_kwargs(method: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` (a request body) as keyword arguments of an SDK method: fields the SDK
    version does not name (``temperature`` on recent SDKs, new API fields on old ones) go
    through ``extra_body``, so the body on the wire is exactly ``params``."""
    known = _sdk_keywords(getattr(method, "__func__", method))
    kwargs = {k: v for k, v in params.items() if k in known}
    extra = {k: v for k, v in params.items() if k not in known}
    if extra:
        kwargs["extra_body"] = {**kwargs.get("extra_body", {}), **extra}
    betas = anthropic_messages.required_betas(params)
    if betas:  # a construct in beta (a mid-conversation tool addition)
        kwargs["extra_headers"] = {
            **kwargs.get("extra_headers", {}),
            "anthropic-beta": ",".join(betas),
        }
    return kwargs


class AnthropicModel(PreparesToolHistory, Model):
    """A real model behind the Anthropic Messages API, through the official ``anthropic`` SDK.

    Give a sync client (``anthropic.Anthropic``) for ``run``, an async one for ``arun``
    (a sync client also works there, in a worker thread). ``stream=True`` streams with
    the SDK's ``messages.stream`` helper. Thinking blocks the model returns are kept for
    the run and sent back unchanged with their turn. ``tool_history`` says what to do
    when a strategy removed tools the conversation used (see ``ToolHistoryPolicy``);
    the rule it enforces is ``capabilities.tool_history``. SDK errors become
    ``ProviderError`` (``RateLimited``, ``ProviderTimeout``, ...) with status,
    retry-after and the API's error type as ``code``; credentials never appear. An
    answer that cannot be read (empty, truncated, not JSON, or more than
    ``max_response_bytes`` once decompressed) is a ``MalformedResponse``.
    """

    provider_label = "the Anthropic Messages API"

    def __init__(
        self,
        client: anthropic.Anthropic | anthropic.AsyncAnthropic,
        model: str = "claude-haiku-4-5",
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        stream: bool = False,
        defaults: Mapping[str, Any] | None = None,
        capabilities: ModelCapabilities | None = None,
        tool_history: ToolHistoryPolicy = "redeclare",
        name: str | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self._kind = client_kind(client, sdk="anthropic", adapter="AnthropicModel")
        if not isinstance(model, str) or not model:
            raise UsageError(
                f"model must be a model name such as 'claude-haiku-4-5', got {model!r}"
            )
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise UsageError(
                f"max_tokens must be an int >= 1 (the API requires it), got {max_tokens!r}"
            )
        self.max_response_bytes = check_int(
            max_response_bytes, name="max_response_bytes", minimum=1
        )
        self.client = client
        _secrets(client)  # registers the client's credentials for scrubbing
        self.model = model
        self.max_tokens = max_tokens
        self.stream = stream
        self.defaults = dict(defaults or {})
        self.capabilities = capabilities or ANTHROPIC_CAPABILITIES
        self.tool_history: ToolHistoryPolicy = check_policy(tool_history)
        self.name = name or model
        self._thinking: dict[ThinkingKey, list[dict[str, Any]]] = {}
        self._tools = ToolMemory()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"AnthropicModel(model={self.model!r}, stream={self.stream})"

    def params(self, request: ModelRequest) -> dict[str, Any]:
        """The ``client.messages.create`` keyword arguments for ``request`` (policy applied)."""
        prepared = self.prepare(request)
        with self._lock:
            thinking = dict(self._thinking)
        return anthropic_messages.request_body(
            prepared,
            model=self.model,
            max_tokens=self.max_tokens,
            defaults=self.defaults,
            thinking=thinking,
        )

    def _read(self, message: Any) -> ModelResponse:
        response = anthropic_messages.response_from_body(message)
        blocks = anthropic_messages.thinking_blocks(message)
        if blocks:
            with self._lock:
                self._thinking[anthropic_messages.message_key(response.message)] = blocks
        return response

    def request(self, request: ModelRequest) -> ModelResponse:
        if self._kind != "sync":
            raise UsageError(
                "AnthropicModel has an async client: use harness.arun(...), or pass an "
                "anthropic.Anthropic client for harness.run(...)"
            )
        params = self.params(request)
        client: Any = self.client
        with anthropic_errors(client, params):
            if self.stream:
                kwargs = sdk_call_kwargs(client.messages.stream, params)
                with client.messages.stream(**kwargs) as s:
                    return self._read(_final_message(s.get_final_message))
            kwargs = sdk_call_kwargs(client.messages.create, params)
            with client.messages.with_streaming_response.create(**kwargs) as raw:
                body = bounded(raw.iter_bytes(), self.max_response_bytes, *_WHO)
            return self._read(body_json(body, "Anthropic", "a message object"))

    async def arequest(self, request: ModelRequest) -> ModelResponse:
        if self._kind == "sync":
            return await asyncio.to_thread(self.request, request)
        params = self.params(request)
        client: Any = self.client
        with anthropic_errors(client, params):
            if self.stream:
                kwargs = sdk_call_kwargs(client.messages.stream, params)
                async with client.messages.stream(**kwargs) as s:
                    return self._read(await _afinal_message(s.get_final_message()))
            kwargs = sdk_call_kwargs(client.messages.create, params)
            async with client.messages.with_streaming_response.create(**kwargs) as raw:
                body = await abounded(raw.iter_bytes(), self.max_response_bytes, *_WHO)
            return self._read(body_json(body, "Anthropic", "a message object"))

    def end_run(self, *, completed: bool) -> None:
        with self._lock:
            self._thinking.clear()
            self._tools.clear()


# -- reading the answer -------------------------------------------------------------------

_WHO = ("Anthropic", "AnthropicModel")
"""The provider and the adapter, for the error of an answer over ``max_response_bytes``."""


def _no_message() -> MalformedResponse:
    return MalformedResponse(
        "the Anthropic stream ended before its message_start event; expected a message"
    )


def _final_message(get: Callable[[], Any]) -> Any:
    """The SDK stream's final message: a stream that ended without one (no
    ``message_start`` event) fails the SDK's own ``assert``, a ``MalformedResponse`` here."""
    try:
        return get()
    except AssertionError:
        raise _no_message() from None


async def _afinal_message(final: Awaitable[Any]) -> Any:
    """``_final_message`` for an async stream."""
    try:
        return await final
    except AssertionError:
        raise _no_message() from None
