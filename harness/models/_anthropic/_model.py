"""The Anthropic Messages adapter over the official ``anthropic`` SDK (sync and async clients)."""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from harness._errors import (
    ContextLengthExceeded,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    UsageError,
)
from harness._extras import require
from harness._secrets import register_secret
from harness.loop import Model, ModelCapabilities, ModelRequest, ModelResponse
from harness.models._anthropic._codec import (
    DEFAULT_MAX_TOKENS,
    ThinkingKey,
    message_key,
    messages_params,
    response_from_message,
    thinking_blocks,
)
from harness.models._openai._common import retry_after_seconds, scrub, secrets_of
from harness.models._tool_history import (
    ToolHistoryPolicy,
    ToolMemory,
    apply_tool_history,
    check_policy,
)

if TYPE_CHECKING:
    import anthropic

__all__ = [
    "ANTHROPIC_CAPABILITIES",
    "AnthropicModel",
    "import_anthropic",
    "map_anthropic_error",
]

ANTHROPIC_CAPABILITIES = ModelCapabilities(
    supports_dynamic_tools=True,
    parallel_tool_calls=True,
    streaming=True,
    structured_output=False,
    tool_history="tools_defined",
)
"""What the Messages API supports and demands (tools must be defined once tools were used)."""


def import_anthropic() -> Any:
    """The ``anthropic`` module, or an ImportError naming the extra to install."""
    return require("anthropic", "the Anthropic adapter (the official anthropic SDK)")


def _client_kind(client: Any) -> str:
    anthropic = import_anthropic()
    if isinstance(client, anthropic.AsyncAnthropic):
        return "async"
    if isinstance(client, anthropic.Anthropic):
        return "sync"
    raise UsageError(
        f"AnthropicModel needs an anthropic.Anthropic or anthropic.AsyncAnthropic client, got "
        f"{type(client).__name__}; e.g. AnthropicModel(anthropic.Anthropic(api_key=...))"
    )


def _secrets(client: Any) -> tuple[str, ...]:
    """The client's credentials (key, auth token, credential headers, URL userinfo),
    registered so cassettes and reports scrub them too."""
    token = getattr(client, "auth_token", None)
    extra = (token,) if isinstance(token, str) and len(token) >= 4 else ()
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
    if isinstance(exc, anthropic.APITimeoutError):
        return ProviderTimeout(scrub(f"Anthropic request timed out: {exc}", secrets))
    if isinstance(exc, anthropic.APIConnectionError):
        return ProviderError(
            scrub(f"could not reach the Anthropic endpoint: {exc}", secrets),
            code="connection_error",
            retryable=True,
        )
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        body: Mapping[str, Any] = exc.body if isinstance(exc.body, Mapping) else {}
        inner = body.get("error")
        error: Mapping[str, Any] = inner if isinstance(inner, Mapping) else {}
        code = error.get("type") or body.get("type")
        code = str(code) if code is not None else None
        detail = error.get("message") or exc.message
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
    return kwargs


class AnthropicModel(Model):
    """A real model behind the Anthropic Messages API, through the official ``anthropic`` SDK.

    Give a sync client (``anthropic.Anthropic``) for ``run``, an async one for ``arun``
    (a sync client also works there, in a worker thread). ``stream=True`` streams with
    the SDK's ``messages.stream`` helper. Thinking blocks the model returns are kept for
    the run and sent back unchanged with their turn. ``tool_history`` says what to do
    when a strategy removed tools the conversation used (see ``ToolHistoryPolicy``);
    the rule it enforces is ``capabilities.tool_history``. SDK errors become
    ``ProviderError`` (``RateLimited``, ``ProviderTimeout``, ...) with status,
    retry-after and the API's error type as ``code``; credentials never appear.
    """

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
    ) -> None:
        self._kind = _client_kind(client)
        if not isinstance(model, str) or not model:
            raise UsageError(
                f"model must be a model name such as 'claude-haiku-4-5', got {model!r}"
            )
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise UsageError(
                f"max_tokens must be an int >= 1 (the API requires it), got {max_tokens!r}"
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

    def prepare(self, request: ModelRequest) -> ModelRequest:
        """``request`` after the tool-history policy (what is actually sent)."""
        with self._lock:
            self._tools.remember(request.tools)
            return apply_tool_history(
                request,
                rule=self.capabilities.tool_history,
                policy=self.tool_history,
                memory=self._tools,
                provider="the Anthropic Messages API",
            )

    def params(self, request: ModelRequest) -> dict[str, Any]:
        """The ``client.messages.create`` keyword arguments for ``request`` (policy applied)."""
        prepared = self.prepare(request)
        with self._lock:
            thinking = dict(self._thinking)
        return messages_params(
            prepared,
            model=self.model,
            max_tokens=self.max_tokens,
            defaults=self.defaults,
            thinking=thinking,
        )

    def _read(self, message: Any) -> ModelResponse:
        response = response_from_message(message)
        blocks = thinking_blocks(message)
        if blocks:
            with self._lock:
                self._thinking[message_key(response.message)] = blocks
        return response

    def request(self, request: ModelRequest) -> ModelResponse:
        if self._kind != "sync":
            raise UsageError(
                "AnthropicModel has an async client: use harness.arun(...), or pass an "
                "anthropic.Anthropic client for harness.run(...)"
            )
        anthropic = import_anthropic()
        params = self.params(request)
        client: Any = self.client
        try:
            if self.stream:
                with client.messages.stream(**sdk_call_kwargs(client.messages.stream, params)) as s:
                    return self._read(s.get_final_message())
            return self._read(
                client.messages.create(**sdk_call_kwargs(client.messages.create, params))
            )
        except anthropic.AnthropicError as exc:
            raise map_anthropic_error(exc, secrets=_secrets(self.client)) from None

    async def arequest(self, request: ModelRequest) -> ModelResponse:
        if self._kind == "sync":
            return await asyncio.to_thread(self.request, request)
        anthropic = import_anthropic()
        params = self.params(request)
        client: Any = self.client
        try:
            if self.stream:
                kwargs = sdk_call_kwargs(client.messages.stream, params)
                async with client.messages.stream(**kwargs) as s:
                    return self._read(await s.get_final_message())
            kwargs = sdk_call_kwargs(client.messages.create, params)
            return self._read(await client.messages.create(**kwargs))
        except anthropic.AnthropicError as exc:
            raise map_anthropic_error(exc, secrets=_secrets(self.client)) from None

    def end_run(self, *, completed: bool) -> None:
        with self._lock:
            self._thinking.clear()
            self._tools.clear()
