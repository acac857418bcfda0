"""The Gemini adapter over the official ``google-genai`` SDK (``client.models`` and
``client.aio.models``), for the Gemini API and Vertex AI alike.

The format itself (request body, response and chunk decoding) is
``harness.formats.gemini_generate``; this module adds the SDK call (the body as
``generate_content`` arguments: ``model``, ``contents`` and a ``GenerateContentConfig``),
the one error-mapping context manager of the sync and async paths (``gemini_errors``),
and the memory of each model turn's parts, sent back unchanged with their turn (thought
signatures included: the API refuses a Gemini 3 history whose calls lost theirs).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from harness._errors import (
    ContextLengthExceeded,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    UsageError,
)
from harness._extras import require
from harness._secrets import register_secret, scrub_message
from harness.formats import gemini_generate
from harness.formats._history import TurnKey, message_key
from harness.formats._read import not_json
from harness.loop import Model, ModelCapabilities, ModelRequest, ModelResponse
from harness.models._clients import client_kind
from harness.models._http import endpoint
from harness.models._tool_history import (
    PreparesToolHistory,
    ToolHistoryPolicy,
    ToolMemory,
    check_policy,
)

if TYPE_CHECKING:
    from google import genai

__all__ = [
    "GEMINI_CAPABILITIES",
    "GeminiModel",
    "gemini_errors",
    "map_gemini_error",
    "sdk_arguments",
]

GEMINI_CAPABILITIES = ModelCapabilities(
    supports_dynamic_tools=True,
    parallel_tool_calls=True,
    streaming=True,
    structured_output=True,
    tool_history="tools_declared",
    tool_search=(),
    allowed_tools=True,
)
"""What the Gemini API supports and demands: an allowed subset (``allowedFunctionNames``
with ``ANY`` or ``VALIDATED``, so ``AllowedTools`` never edits ``tools``), and every
function the history calls declared."""


def import_genai() -> Any:
    """The ``google.genai`` module, or an ImportError naming the extra to install."""
    return require("google.genai", "the Gemini adapter (the official google-genai SDK)")


def _secrets(client: Any) -> tuple[str, ...]:
    """The client's API key, registered so cassettes and reports scrub it too."""
    api = getattr(client, "_api_client", None)
    key = getattr(api, "api_key", None)
    if isinstance(key, str) and key:
        register_secret(key, source="a google-genai client's API key", warn=False)
        return (key,)
    return ()


def map_gemini_error(exc: BaseException, *, secrets: Iterable[str] = ()) -> ProviderError:
    """The harness ``ProviderError`` for a ``google-genai`` exception (credentials scrubbed).

    ``code`` is the API's status (``INVALID_ARGUMENT``, ``RESOURCE_EXHAUSTED``, ...);
    ``retry_after`` comes from the ``retry-after`` header; 429 and 5xx are retryable.
    """
    errors = require("google.genai.errors", "the Gemini adapter", extra="gemini")
    secrets = tuple(secrets)
    if isinstance(exc, errors.APIError):
        status = int(exc.code) if isinstance(exc.code, int) else None
        message = scrub_message(
            f"Gemini API error (status={status}, {exc.status}): {exc.message}", secrets
        )
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        retry = headers.get("retry-after") if hasattr(headers, "get") else None
        retry_after = float(retry) if isinstance(retry, str) and retry.isdigit() else None
        cls: type[ProviderError] = ProviderError
        if status == 429:
            cls = RateLimited
        elif status == 400 and "token count" in str(exc.message).lower():
            cls = ContextLengthExceeded
        retryable = status == 429 or (status is not None and status >= 500)
        return cls(
            message, status=status, code=exc.status, retry_after=retry_after, retryable=retryable
        )
    return ProviderError(scrub_message(f"google-genai SDK error: {exc}", secrets))


@contextlib.contextmanager
def gemini_errors(client: Any) -> Iterator[None]:
    """The Gemini adapter's one error-mapping context manager, shared by the sync and the
    async path: the SDK's errors go through ``map_gemini_error``; the transport's (a
    timeout, a refused connection, a body cut short) become ``ProviderTimeout`` or a
    retryable ``ProviderError`` naming the endpoint; an answer that is not JSON is a
    ``MalformedResponse``. Credentials never appear in the message."""
    errors = require("google.genai.errors", "the Gemini adapter", extra="gemini")
    import httpx2

    try:
        yield
    except errors.APIError as exc:
        raise map_gemini_error(exc, secrets=_secrets(client)) from None
    except httpx2.TimeoutException as exc:
        url = endpoint(exc, "the Gemini API")
        detail = scrub_message(f"{type(exc).__name__}: {exc}", _secrets(client))
        raise ProviderTimeout(f"Gemini request to {url} timed out ({detail})") from None
    except httpx2.HTTPError as exc:
        url = endpoint(exc, "the Gemini API")
        detail = scrub_message(f"{type(exc).__name__}: {exc}", _secrets(client))
        raise ProviderError(
            f"the connection to the Gemini endpoint {url} failed: {detail}",
            code="connection_error",
            retryable=True,
        ) from None
    except json.JSONDecodeError as exc:
        raise not_json(exc) from None


_CONFIG_KEEP = ("contents", "generationConfig", "generation_config")


def sdk_arguments(body: Mapping[str, Any]) -> dict[str, Any]:
    """A ``request_body`` as ``generate_content`` keyword arguments: ``model``,
    ``contents`` and ``config`` (the body's other fields and its ``generationConfig``'s;
    a field this SDK version does not name goes through ``http_options.extra_body``, so
    the body on the wire is the same)."""
    types = require("google.genai.types", "the Gemini adapter", extra="gemini")
    http = gemini_generate.http_body(body)
    fields = types.GenerateContentConfig.model_fields
    known = set(fields) | {f.alias for f in fields.values() if f.alias}
    config: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in http.items():
        if key not in _CONFIG_KEEP:
            (config if key in known else extra)[key] = value
    for key, value in dict(http.get("generationConfig") or {}).items():
        if key in known:
            config[key] = value
        else:
            extra.setdefault("generationConfig", {})[key] = value
    config["automaticFunctionCalling"] = {"disable": True}  # the harness runs the tools
    if extra:
        config["httpOptions"] = {"extraBody": extra}
    return {"model": body["model"], "contents": http["contents"], "config": config}


class GeminiModel(PreparesToolHistory, Model):
    """A real model behind the Gemini API (or Vertex AI), through the official
    ``google-genai`` SDK.

    Give a ``google.genai.Client``: ``run`` uses ``client.models``, ``arun``
    ``client.aio.models``. ``stream=True`` streams with ``generate_content_stream``.
    Each model turn's parts (thoughts, thought signatures, code the model ran) are kept
    for the run and sent back unchanged with their turn. ``defaults`` are body fields
    sent with every request (``{"generationConfig": {"temperature": 0}}``, built-in
    tools as ``{"tools": [{"googleSearch": {}}]}``). ``tool_history`` says what to do when
    a strategy removed tools the conversation used (the API refuses a history calling an
    undeclared function: see ``ToolHistoryPolicy``). SDK errors become ``ProviderError``
    (``RateLimited``, ``ProviderTimeout``, ...) with status, retry-after and the API's
    status as ``code``; credentials never appear.
    """

    provider_label = "the Gemini API"

    def __init__(
        self,
        client: genai.Client | genai.client.AsyncClient,
        model: str = "gemini-2.5-flash",
        *,
        stream: bool = False,
        defaults: Mapping[str, Any] | None = None,
        capabilities: ModelCapabilities | None = None,
        tool_history: ToolHistoryPolicy = "redeclare",
        name: str | None = None,
    ) -> None:
        self._kind = client_kind(client, sdk="google.genai", adapter="GeminiModel")
        if not isinstance(model, str) or not model:
            raise UsageError(
                f"model must be a model name such as 'gemini-2.5-flash', got {model!r}"
            )
        self.client = client
        _secrets(client)  # registers the client's key for scrubbing
        self.model = model
        self.stream = stream
        self.defaults = dict(defaults or {})
        self.capabilities = capabilities or GEMINI_CAPABILITIES
        self.tool_history: ToolHistoryPolicy = check_policy(tool_history)
        self.name = name or model
        self._turns: dict[TurnKey, list[dict[str, Any]]] = {}
        self._tools = ToolMemory()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"GeminiModel(model={self.model!r}, stream={self.stream})"

    def params(self, request: ModelRequest) -> dict[str, Any]:
        """The operation's input for ``request`` (``model`` and the HTTP body; policy
        applied, kept parts sent back)."""
        prepared = self.prepare(request)
        with self._lock:
            turns = dict(self._turns)
        return gemini_generate.request_body(
            prepared, model=self.model, defaults=self.defaults, turns=turns
        )

    def _read(self, answer: Any) -> ModelResponse:
        response = gemini_generate.response_from_body(answer)
        parts = gemini_generate.model_parts(answer)
        if parts:
            with self._lock:
                self._turns[message_key(response.message)] = parts
        return response

    def request(self, request: ModelRequest) -> ModelResponse:
        if self._kind != "sync":
            raise UsageError(
                "GeminiModel has an async client (client.aio): use harness.arun(...), or pass "
                "the google.genai.Client for harness.run(...)"
            )
        arguments = sdk_arguments(self.params(request))
        models: Any = self.client.models
        with gemini_errors(self.client):
            if self.stream:
                return self._read(list(models.generate_content_stream(**arguments)))
            return self._read(models.generate_content(**arguments))

    async def arequest(self, request: ModelRequest) -> ModelResponse:
        arguments = sdk_arguments(self.params(request))
        models: Any = self.client.models if self._kind == "async" else self.client.aio.models  # type: ignore[union-attr]
        with gemini_errors(self.client):
            if self.stream:
                chunks = [
                    chunk async for chunk in await models.generate_content_stream(**arguments)
                ]
                return self._read(chunks)
            return self._read(await models.generate_content(**arguments))

    def end_run(self, *, completed: bool) -> None:
        with self._lock:
            self._turns.clear()
            self._tools.clear()
