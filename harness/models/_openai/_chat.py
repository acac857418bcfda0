"""The Chat Completions adapter over the official ``openai`` SDK (sync and async clients)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from harness._errors import ProviderError
from harness.loop import (
    FinishReason,
    ModelCapabilities,
    ModelRequest,
    ModelResponse,
    Usage,
)
from harness.messages import AssistantMessage, Message, ToolCall, ToolMessage, to_openai
from harness.models._openai._base import OpenAIAdapter
from harness.models._openai._chat_stream import ChatStream
from harness.models._openai._common import (
    json_schema_format,
    tool_params,
)
from harness.models._openai._history import WireHistory
from harness.models._openai._read import (
    checked_call,
    error_body_message,
    field,
    is_object,
    malformed,
    optional_int,
    optional_str,
)

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

__all__ = [
    "OPENAI_CHAT_CAPABILITIES",
    "OpenAIChatModel",
    "chat_params",
    "chat_response_from_chunks",
    "chat_response_from_completion",
]

OPENAI_CHAT_CAPABILITIES = ModelCapabilities(
    supports_dynamic_tools=True, parallel_tool_calls=True, streaming=True, structured_output=True
)
"""What the Chat Completions API supports."""

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}
_CHOICES = frozenset({"auto", "none", "required"})
_TRUSTED = frozenset({"messages"})  # built by to_openai from validated messages: plain JSON


def _tool_choice(choice: str | Mapping[str, Any]) -> str | dict[str, Any]:
    if isinstance(choice, str) and choice not in _CHOICES:
        return {"type": "function", "function": {"name": choice}}
    return choice if isinstance(choice, str) else dict(choice)


def _wire_message(message: Message) -> dict[str, Any]:
    data = to_openai(message)
    if isinstance(message, ToolMessage):
        data.pop("name", None)
    return data


def chat_params(
    request: ModelRequest,
    *,
    model: str,
    stream: bool = False,
    defaults: Mapping[str, Any] | None = None,
    history: WireHistory | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``client.chat.completions.create`` for one request.

    ``defaults`` (temperature, max_tokens, ...) apply first; the request's
    ``settings.extra`` overrides them. ``history`` converts only the messages
    added since the previous request.
    """
    if history is not None:
        messages = history.convert(request.messages)
    else:
        messages = [_wire_message(message) for message in request.messages]
    params: dict[str, Any] = {"model": model, "messages": messages}
    settings = request.settings
    params.update(tool_params(request, dict, _tool_choice))
    output_format = json_schema_format(settings)
    if output_format is not None:
        params["response_format"] = {"type": "json_schema", "json_schema": output_format}
    params.update(defaults or {})
    params.update(settings.extra)
    if stream:
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
    return params


def chat_response_from_completion(completion: ChatCompletion | Mapping[str, Any]) -> ModelResponse:
    """The harness response for a ``ChatCompletion`` (an SDK object or its JSON).

    Every field used is checked: a body that is not a completion (a list, an error
    body, a tool call whose ``arguments`` is not a string) is a ``ProviderError`` with
    ``code="malformed_response"`` naming the field.
    """
    what = "chat completion"
    if not is_object(completion):
        raise malformed(what, "the response body", "a JSON object", completion)
    choices = field(completion, "choices")
    error = error_body_message(completion)
    if error is not None and not choices:
        raise ProviderError(
            f"the response is an error body, not a chat completion: {error}", code="error_body"
        )
    if choices is None:
        choices = []
    if not isinstance(choices, (list, tuple)):
        raise malformed(what, "choices", "an array", choices)
    if not choices:
        raise ProviderError(
            f"the completion {field(completion, 'id')!r} has no choices; expected one choice",
            code="empty_response",
        )
    choice = choices[0]
    if not is_object(choice):
        raise malformed(what, "choices[0]", "an object", choice)
    message = field(choice, "message")
    if not is_object(message):
        raise malformed(what, "choices[0].message", "an object", message)
    where = "choices[0].message"
    content = optional_str(message, "content", where, what)
    refusal = optional_str(message, "refusal", where, what)
    finish = optional_str(choice, "finish_reason", "choices[0]", what)
    return ModelResponse(
        message=AssistantMessage(
            content=content, tool_calls=_read_calls(message, where, what), refusal=refusal
        ),
        finish_reason=_FINISH.get(finish or "stop", "stop"),
        usage=_read_usage(field(completion, "usage"), what),
        model_name=optional_str(completion, "model", "completion", what),
    )


def _read_calls(message: Any, where: str, what: str) -> tuple[ToolCall, ...]:
    raw = field(message, "tool_calls")
    if raw is None:
        return ()
    if not isinstance(raw, (list, tuple)):
        raise malformed(what, f"{where}.tool_calls", "an array or null", raw)
    calls = []
    for index, call in enumerate(raw):
        path = f"{where}.tool_calls[{index}]"
        if not is_object(call):
            raise malformed(what, path, "an object", call)
        if field(call, "type") not in (None, "function"):
            continue  # custom tools: not harness tools
        function = field(call, "function")
        if not is_object(function):
            raise malformed(what, f"{path}.function", "an object", function)
        calls.append(
            checked_call(
                what,
                (f"{path}.id", f"{path}.function.name", f"{path}.function.arguments"),
                field(call, "id"),
                field(function, "name"),
                field(function, "arguments"),
            )
        )
    return tuple(calls)


def _read_usage(usage: Any, what: str) -> Usage:
    if usage is None:
        return Usage()
    if not is_object(usage):
        raise malformed(what, "usage", "an object or null", usage)
    return Usage(
        input_tokens=optional_int(usage, "prompt_tokens", "usage", what),
        output_tokens=optional_int(usage, "completion_tokens", "usage", what),
        total_tokens=optional_int(usage, "total_tokens", "usage", what),
    )


def chat_response_from_chunks(
    chunks: Iterable[ChatCompletionChunk | Mapping[str, Any]],
) -> ModelResponse:
    """Accumulate streamed chunks (SDK objects or their JSON) in linear time
    (``harness.models._openai._chat_stream``; the SDK's own stream state is quadratic
    in the number of parallel tool calls)."""
    stream = ChatStream()
    seen = False
    for index, chunk in enumerate(chunks):
        _check_chunk(chunk, index)
        stream.add(chunk, index)
        seen = True
    if not seen:
        raise ProviderError("the stream ended before its first chunk", code="empty_response")
    return chat_response_from_completion(stream.completion())


def _check_chunk(chunk: Any, index: int) -> None:
    """The shape the SDK's stream state relies on (it warns, then fails, on anything else)."""
    what = f"stream chunk {index}"
    if not is_object(chunk):
        raise malformed(what, "the chunk", "a JSON object", chunk)
    choices = field(chunk, "choices")
    if choices is None:
        return
    if not isinstance(choices, (list, tuple)):
        raise malformed(what, "choices", "an array", choices)
    for n, choice in enumerate(choices):
        if not is_object(choice):
            raise malformed(what, f"choices[{n}]", "an object", choice)
        delta = field(choice, "delta")
        if delta is not None and not is_object(delta):
            raise malformed(what, f"choices[{n}].delta", "an object", delta)


class OpenAIChatModel(OpenAIAdapter):
    """A real model behind the Chat Completions API, through the official ``openai`` SDK.

    Works with any OpenAI-compatible ``base_url``. Give a sync client for ``run``,
    an async one for ``arun`` (a sync client also works there, in a worker thread).
    SDK errors become ``ProviderError`` (``RateLimited``, ``ProviderTimeout``, ...)
    with status, retry-after and code; credentials never appear in messages.
    """

    json_stream_events = True  # chat_response_from_chunks reads the chunks' JSON

    default_capabilities = OPENAI_CHAT_CAPABILITIES

    _history: WireHistory | None = None

    def params(self, request: ModelRequest) -> dict[str, Any]:
        """The SDK call's keyword arguments for ``request``."""
        if self._history is None:
            self._history = WireHistory(_wire_message)
        return chat_params(
            request,
            model=self.model,
            stream=self.stream,
            defaults=self.defaults,
            history=self._history,
        )

    def end_run(self, *, completed: bool) -> None:
        if self._history is not None:
            self._history.clear()

    def _resource(self, client: Any) -> Any:
        return client.chat.completions

    def _encoded(self, params: Mapping[str, Any]) -> dict[str, str] | None:
        text = self._history.encoded(params.get("messages")) if self._history else None
        return None if text is None else {"messages": text}

    def _wire_exact(self) -> tuple[frozenset[str], Any]:
        from openai.types.chat.completion_create_params import CompletionCreateParamsBase

        own = type(self).params is OpenAIChatModel.params
        return (_TRUSTED if own else frozenset()), CompletionCreateParamsBase

    def _read(self, result: Any) -> ModelResponse:
        return chat_response_from_completion(result)

    def _read_stream(self, events: Iterable[Any]) -> ModelResponse:
        return chat_response_from_chunks(events)
