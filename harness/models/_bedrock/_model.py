"""The Bedrock Converse adapter over ``boto3``'s ``bedrock-runtime`` client.

The format itself (the call's arguments, the answer, the stream's events) is
``harness.formats.bedrock_converse``; this module adds the SDK call (``converse`` or
``converse_stream``), the one error-mapping context manager (``bedrock_errors``), the
client check, and the memory of reasoning blocks. boto3 has no async client: ``arequest``
runs the sync call in a worker thread (as pydantic-ai's Bedrock model does).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from harness._errors import (
    ContextLengthExceeded,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    UsageError,
)
from harness._extras import require
from harness._secrets import register_secret, scrub_message
from harness.formats import bedrock_converse
from harness.formats.bedrock_converse import ReasoningKey
from harness.loop import Model, ModelCapabilities, ModelRequest, ModelResponse
from harness.models._openai._common import retry_after_seconds, unencodable
from harness.models._tool_history import (
    PreparesToolHistory,
    ToolHistoryPolicy,
    ToolMemory,
    check_policy,
)

__all__ = [
    "BEDROCK_CAPABILITIES",
    "BedrockConverseModel",
    "bedrock_errors",
    "bedrock_runtime_client",
    "map_bedrock_error",
]

BEDROCK_CAPABILITIES = ModelCapabilities(
    supports_dynamic_tools=True,
    parallel_tool_calls=True,
    streaming=True,
    structured_output=False,
    tool_history="tools_defined",
    tool_search=(),
    allowed_tools=False,
)
"""What Converse supports and demands: tools may change per request, ``toolConfig`` must
be sent once the history holds tool blocks; no tool search, no allowed subset, no native
tool additions."""

_RETRYABLE_CODES = frozenset(
    {
        "ThrottlingException",
        "ServiceUnavailableException",
        "InternalServerException",
        "ModelNotReadyException",
        "ModelTimeoutException",
    }
)
_TOO_LONG = ("too long", "context length", "context window", "maximum context")


def bedrock_runtime_client(client: Any, *, adapter: str) -> Any:
    """``client`` when it is a boto3 ``bedrock-runtime`` client; else a ``UsageError``
    naming ``adapter`` and showing how to make one."""
    require("boto3", f"{adapter} (the boto3 bedrock-runtime adapter)")
    from botocore.client import BaseClient

    service = getattr(
        getattr(getattr(client, "meta", None), "service_model", None), "service_name", None
    )
    if isinstance(client, BaseClient) and service == "bedrock-runtime":
        return client
    got = f"a boto3 {service!r} client" if isinstance(client, BaseClient) else type(client).__name__
    raise UsageError(
        f"{adapter} needs a boto3 'bedrock-runtime' client, got {got}; e.g. "
        f"{adapter}(boto3.client('bedrock-runtime', region_name='us-east-1'), 'model-id')"
    )


def _secrets(client: Any) -> tuple[str, ...]:
    """The client's credentials (key id, secret, session token), registered so cassettes,
    reports and error messages scrub them."""
    signer = getattr(client, "_request_signer", None)
    credentials = getattr(signer, "_credentials", None)
    if credentials is None:
        return ()
    try:
        frozen = credentials.get_frozen_credentials()
    except Exception:  # a provider that cannot refresh now: nothing known to scrub
        return ()
    values = tuple(v for v in (frozen.secret_key, frozen.token, frozen.access_key) if v)
    for value in values:
        register_secret(value, source="an AWS credential of the Bedrock client", warn=False)
    return values


def map_bedrock_error(exc: BaseException, *, secrets: Iterable[str] = ()) -> ProviderError:
    """The harness ``ProviderError`` for a botocore exception (credentials scrubbed).

    ``code`` is Bedrock's error type (``ThrottlingException``, ``ValidationException``,
    ...); a throttling error is ``RateLimited``; an input too long for the model is
    ``ContextLengthExceeded``; timeouts are ``ProviderTimeout``; connection failures are
    retryable ``connection_error``s.
    """
    from botocore import exceptions as aws

    secrets = tuple(secrets)
    if isinstance(exc, aws.ClientError):
        response: Mapping[str, Any] = exc.response or {}
        metadata = response.get("ResponseMetadata") or {}
        status = metadata.get("HTTPStatusCode")
        code, detail = bedrock_converse.error_details(response)
        code = code or type(exc).__name__
        message = scrub_message(
            f"Bedrock error (status={status}, type={code!r}): {detail or exc}", secrets
        )
        retry_after = retry_after_seconds(metadata.get("HTTPHeaders") or {})
        cls: type[ProviderError] = ProviderError
        if code in ("ThrottlingException", "ModelNotReadyException") or status == 429:
            cls = RateLimited
        elif code == "ModelTimeoutException":
            cls = ProviderTimeout
        elif code == "ValidationException" and any(t in str(detail).lower() for t in _TOO_LONG):
            cls = ContextLengthExceeded
        retryable = code in _RETRYABLE_CODES or (isinstance(status, int) and status >= 500)
        return cls(
            message,
            status=status if isinstance(status, int) else None,
            retry_after=retry_after,
            code=code,
            retryable=retryable,
        )
    if isinstance(exc, (aws.ReadTimeoutError, aws.ConnectTimeoutError)):
        return ProviderTimeout(scrub_message(f"Bedrock request timed out: {exc}", secrets))
    if isinstance(exc, (aws.EndpointConnectionError, aws.ConnectionClosedError)):
        return ProviderError(
            scrub_message(f"could not reach the Bedrock endpoint: {exc}", secrets),
            code="connection_error",
            retryable=True,
        )
    return ProviderError(scrub_message(f"Bedrock SDK error: {exc}", secrets))


@contextlib.contextmanager
def bedrock_errors(client: Any, params: Mapping[str, Any]) -> Iterator[None]:
    """The Bedrock adapter's one error-mapping context manager: botocore's service errors
    (raised by the call, or by a stream's exception event) and transport errors become
    harness errors through ``map_bedrock_error``; arguments botocore refuses (a field the
    service does not have, missing credentials) are a ``UsageError`` naming the fix; a
    request text that cannot be written, ``UnencodableText``. Credentials never appear
    in the message."""
    from botocore import exceptions as aws

    try:
        yield
    except aws.ParamValidationError as exc:
        raise UsageError(
            f"boto3 refused the Converse arguments: {exc}. Check the adapter's defaults and "
            "the request's settings.extra (they are sent as top-level fields)"
        ) from None
    except aws.NoCredentialsError:
        raise UsageError(
            "the bedrock-runtime client has no AWS credentials; configure them (environment, "
            "profile) or pass aws_access_key_id/aws_secret_access_key to boto3.client"
        ) from None
    except (aws.ClientError, aws.BotoCoreError) as exc:
        raise map_bedrock_error(exc, secrets=_secrets(client)) from None
    except UnicodeEncodeError as exc:
        raise unencodable(exc, params, "Bedrock") from None


class BedrockConverseModel(PreparesToolHistory, Model):
    """A real model behind AWS Bedrock's Converse API, through ``boto3``.

    Give a ``boto3.client("bedrock-runtime", ...)`` and a model id (or inference profile,
    or ARN). ``stream=True`` calls ``converse_stream`` and reads its events. boto3 has no
    async client: ``arun`` runs each call in a worker thread. ``defaults`` are Converse
    fields sent with every request (``inferenceConfig``, ``additionalModelRequestFields``,
    ...). ``reasoningContent`` blocks the model returns are kept for the run and sent back
    unchanged with their turn. ``tool_history`` says what to do when a strategy removed
    the tools the conversation used (Converse needs ``toolConfig`` once tool blocks were
    sent). botocore errors become ``ProviderError`` (``RateLimited``, ``ProviderTimeout``,
    ...) with the status and Bedrock's error type as ``code``; credentials never appear.
    botocore reads the whole answer itself (retries and its own limits): there is no
    ``max_response_bytes`` here.
    """

    provider_label = "Bedrock Converse"

    def __init__(
        self,
        client: Any,
        model: str = "anthropic.claude-3-5-haiku-20241022-v1:0",
        *,
        stream: bool = False,
        defaults: Mapping[str, Any] | None = None,
        capabilities: ModelCapabilities | None = None,
        tool_history: ToolHistoryPolicy = "redeclare",
        name: str | None = None,
    ) -> None:
        self.client = bedrock_runtime_client(client, adapter="BedrockConverseModel")
        if not isinstance(model, str) or not model:
            raise UsageError(
                "model must be a Bedrock model id such as "
                f"'anthropic.claude-3-5-haiku-20241022-v1:0', got {model!r}"
            )
        _secrets(client)  # registers the client's credentials for scrubbing
        self.model = model
        self.stream = stream
        self.defaults = dict(defaults or {})
        self.capabilities = capabilities or BEDROCK_CAPABILITIES
        self.tool_history: ToolHistoryPolicy = check_policy(tool_history)
        self.name = name or model
        self._reasoning: dict[ReasoningKey, list[dict[str, Any]]] = {}
        self._tools = ToolMemory()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"BedrockConverseModel(model={self.model!r}, stream={self.stream})"

    def params(self, request: ModelRequest) -> dict[str, Any]:
        """The ``client.converse`` keyword arguments for ``request`` (policy applied)."""
        prepared = self.prepare(request)
        with self._lock:
            reasoning = dict(self._reasoning)
        return bedrock_converse.request_body(
            prepared, model=self.model, defaults=self.defaults, reasoning=reasoning
        )

    def _read(self, answer: Any) -> ModelResponse:
        response = bedrock_converse.response_from_body(answer)
        blocks = bedrock_converse.reasoning_blocks(answer)
        if blocks:
            with self._lock:
                self._reasoning[bedrock_converse.message_key(response.message)] = blocks
        return response

    def request(self, request: ModelRequest) -> ModelResponse:
        params = self.params(request)
        client = self.client
        with bedrock_errors(client, params):
            if self.stream:
                answer = client.converse_stream(**params)
                stream = answer["stream"]
                try:
                    return self._read(bedrock_converse.accumulate(stream))
                finally:
                    stream.close()
            return self._read(client.converse(**params))

    async def arequest(self, request: ModelRequest) -> ModelResponse:
        return await asyncio.to_thread(self.request, request)

    def end_run(self, *, completed: bool) -> None:
        with self._lock:
            self._reasoning.clear()
            self._tools.clear()
