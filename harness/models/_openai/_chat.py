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
from harness.models._openai._common import (
    json_schema_format,
    tool_params,
)
from harness.models._openai._history import WireHistory

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
    """The harness response for a ``ChatCompletion`` (an SDK object or its JSON)."""
    from openai.types.chat import ChatCompletion

    if isinstance(completion, Mapping):  # leniently, like the SDK reads responses
        completion = ChatCompletion.model_construct(**completion)
    if not completion.choices:
        raise ProviderError(
            f"the completion {completion.id!r} has no choices; expected one choice",
            code="empty_response",
        )
    choice = completion.choices[0]
    message = choice.message
    calls = tuple(
        ToolCall(id=call.id, name=call.function.name, arguments=call.function.arguments)
        for call in message.tool_calls or ()
        if call.type == "function"
    )
    usage = Usage()
    if completion.usage is not None:
        usage = Usage(
            input_tokens=completion.usage.prompt_tokens,
            output_tokens=completion.usage.completion_tokens,
            total_tokens=completion.usage.total_tokens,
        )
    return ModelResponse(
        message=AssistantMessage(
            content=message.content, tool_calls=calls, refusal=message.refusal
        ),
        finish_reason=_FINISH.get(choice.finish_reason or "stop", "stop"),
        usage=usage,
        model_name=completion.model,
    )


def chat_response_from_chunks(
    chunks: Iterable[ChatCompletionChunk | Mapping[str, Any]],
) -> ModelResponse:
    """Accumulate streamed chunks (SDK objects or their JSON) with the SDK's own stream state."""
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    seen = False
    for chunk in chunks:
        if isinstance(chunk, Mapping):
            chunk = ChatCompletionChunk.model_construct(**chunk)
        state.handle_chunk(chunk)
        seen = True
    if not seen:
        raise ProviderError("the stream ended before its first chunk", code="empty_response")
    # the snapshot, not get_final_completion(): that one raises on `length` / `content_filter`
    return chat_response_from_completion(state.current_completion_snapshot)


class OpenAIChatModel(OpenAIAdapter):
    """A real model behind the Chat Completions API, through the official ``openai`` SDK.

    Works with any OpenAI-compatible ``base_url``. Give a sync client for ``run``,
    an async one for ``arun`` (a sync client also works there, in a worker thread).
    SDK errors become ``ProviderError`` (``RateLimited``, ``ProviderTimeout``, ...)
    with status, retry-after and code; credentials never appear in messages.
    """

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

    def _wire_exact(self) -> tuple[frozenset[str], Any]:
        from openai.types.chat.completion_create_params import CompletionCreateParamsBase

        own = type(self).params is OpenAIChatModel.params
        return (_TRUSTED if own else frozenset()), CompletionCreateParamsBase

    def _read(self, result: Any) -> ModelResponse:
        return chat_response_from_completion(result)

    def _read_stream(self, events: Iterable[Any]) -> ModelResponse:
        return chat_response_from_chunks(events)
