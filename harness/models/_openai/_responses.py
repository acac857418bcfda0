"""The Responses API adapter over the official ``openai`` SDK, stateless.

Every turn sends the full input: messages, ``function_call`` items for earlier
tool calls, ``function_call_output`` items for their results, and the reasoning
items the model returned before those calls (kept by the adapter for the run).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from harness._errors import ProviderError
from harness._validation import assert_never
from harness.loop import FinishReason, ModelCapabilities, ModelRequest, ModelResponse, Usage
from harness.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from harness.models._openai._base import OpenAIAdapter
from harness.models._openai._common import (
    json_schema_format,
    tool_params,
)
from harness.models._openai._history import WireHistory
from harness.models._openai._read import checked_call, field, is_object, malformed, optional_int

if TYPE_CHECKING:
    import openai
    from openai.types.responses import Response, ResponseStreamEvent

__all__ = [
    "OPENAI_RESPONSES_CAPABILITIES",
    "OpenAIResponsesModel",
    "reasoning_items",
    "responses_params",
    "responses_response_from_events",
    "responses_response_from_response",
]

OPENAI_RESPONSES_CAPABILITIES = ModelCapabilities(
    supports_dynamic_tools=True, parallel_tool_calls=True, streaming=True, structured_output=True
)
"""What the Responses API supports."""

_CHOICES = frozenset({"auto", "none", "required"})
_TRUSTED = frozenset({"input"})  # built by _input from validated messages: plain JSON
_INCOMPLETE: dict[str, FinishReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}
_FINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})

ReasoningKey = tuple[str, ...]


def message_key(message: AssistantMessage) -> ReasoningKey:
    """Identifies an assistant turn in later histories (its call ids, else its text)."""
    if message.tool_calls:
        return ("calls", *(call.id for call in message.tool_calls))
    return ("text", message.content or "", message.refusal or "")


def _tool(definition: Mapping[str, Any]) -> dict[str, Any]:
    function = definition.get("function", definition)
    tool = {"type": "function", "name": function["name"]}
    for key in ("description", "parameters"):
        if key in function:
            tool[key] = function[key]
    tool["strict"] = bool(function.get("strict", False))
    return tool


def _tool_choice(choice: str | Mapping[str, Any]) -> str | dict[str, Any]:
    if isinstance(choice, str):
        return choice if choice in _CHOICES else {"type": "function", "name": choice}
    function = choice.get("function")
    if choice.get("type") == "function" and isinstance(function, Mapping):
        return {"type": "function", "name": function.get("name")}
    return dict(choice)


def _items(
    message: Message, reasoning: Mapping[ReasoningKey, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """The input items of one message (an assistant turn's reasoning items first)."""
    match message:
        case AssistantMessage():
            items: list[dict[str, Any]] = list(reasoning.get(message_key(message), ()))
            text = message.content if message.content is not None else message.refusal
            if text:
                items.append({"role": "assistant", "content": text})
            for call in message.tool_calls:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.arguments,
                    }
                )
            return items
        case ToolMessage():
            return [
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id,
                    "output": message.content,
                }
            ]
        case SystemMessage() | UserMessage():
            return [{"role": message.role, "content": message.content}]
        case _:  # pragma: no cover - the union is closed
            assert_never(message)


def _input(
    messages: Iterable[Message], reasoning: Mapping[ReasoningKey, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    return [item for message in messages for item in _items(message, reasoning)]


def responses_params(
    request: ModelRequest,
    *,
    model: str,
    stream: bool = False,
    defaults: Mapping[str, Any] | None = None,
    reasoning: Mapping[ReasoningKey, list[dict[str, Any]]] | None = None,
    include_reasoning: bool = True,
    history: WireHistory | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``client.responses.create`` for one request (``store=False``).

    ``history`` converts only the messages added since the previous request.
    """
    known = reasoning or {}
    if history is not None:
        items = history.convert(request.messages, lambda message: _items(message, known))
    else:
        items = _input(request.messages, known)
    params: dict[str, Any] = {"model": model, "input": items, "store": False}
    if include_reasoning:
        params["include"] = ["reasoning.encrypted_content"]
    settings = request.settings
    params.update(tool_params(request, _tool, _tool_choice))
    output_format = json_schema_format(settings)
    if output_format is not None:
        params["text"] = {"format": {"type": "json_schema", **output_format}}
    params.update(defaults or {})
    params.update(settings.extra)
    if stream:
        params["stream"] = True
    return params


def _as_response(response: Response | Mapping[str, Any]) -> Response:
    from openai.types.responses import Response

    if isinstance(response, Mapping):  # leniently, like the SDK reads responses
        return Response.model_construct(**response)
    return response


def responses_response_from_response(response: Response | Mapping[str, Any]) -> ModelResponse:
    """The harness response for a Responses API ``Response`` (an SDK object or its JSON).

    Every field used is checked: a wrongly shaped body is a ``ProviderError`` with
    ``code="malformed_response"`` naming the field.
    """
    what = "Responses API response"
    if not is_object(response):
        raise malformed(what, "the response body", "a JSON object", response)
    error = field(response, "error")
    if error is not None:
        message = field(error, "message") if is_object(error) else error
        code = field(error, "code") if is_object(error) else None
        raise ProviderError(f"the response failed: {message}", code=str(code))
    output = field(response, "output")
    if output is None:
        output = []
    if not isinstance(output, (list, tuple)):
        raise malformed(what, "output", "an array", output)
    texts: list[str] = []
    refusals: list[str] = []
    calls: list[ToolCall] = []
    for index, item in enumerate(output):
        path = f"output[{index}]"
        if not is_object(item):
            raise malformed(what, path, "an object", item)
        kind = field(item, "type")
        if kind == "message":
            _read_parts(item, path, texts, refusals)
        elif kind == "function_call":
            calls.append(
                checked_call(
                    what,
                    (f"{path}.call_id", f"{path}.name", f"{path}.arguments"),
                    field(item, "call_id"),
                    field(item, "name"),
                    field(item, "arguments"),
                )
            )
    finish: FinishReason = "tool_calls" if calls else "stop"
    if field(response, "status") == "incomplete":
        details = field(response, "incomplete_details")
        reason = field(details, "reason") if is_object(details) else None
        finish = _INCOMPLETE.get(reason if isinstance(reason, str) else "", "length")
    usage = Usage()
    raw_usage = field(response, "usage")
    if raw_usage is not None:
        if not is_object(raw_usage):
            raise malformed(what, "usage", "an object or null", raw_usage)
        usage = Usage(
            input_tokens=optional_int(raw_usage, "input_tokens", "usage", what),
            output_tokens=optional_int(raw_usage, "output_tokens", "usage", what),
            total_tokens=optional_int(raw_usage, "total_tokens", "usage", what),
        )
    message = AssistantMessage(
        content="".join(texts) if texts else None,
        tool_calls=tuple(calls),
        refusal="".join(refusals) if refusals else None,
    )
    model = field(response, "model")
    return ModelResponse(
        message=message,
        finish_reason=finish,
        usage=usage,
        model_name=str(model) if model is not None else None,
    )


def _read_parts(item: Any, path: str, texts: list[str], refusals: list[str]) -> None:
    what = "Responses API response"
    content = field(item, "content")
    if content is None:
        return
    if not isinstance(content, (list, tuple)):
        raise malformed(what, f"{path}.content", "an array", content)
    for index, part in enumerate(content):
        where = f"{path}.content[{index}]"
        if not is_object(part):
            raise malformed(what, where, "an object", part)
        kind = field(part, "type")
        if kind == "output_text":
            text = field(part, "text")
            if not isinstance(text, str):
                raise malformed(what, f"{where}.text", "a string", text)
            texts.append(text)
        elif kind == "refusal":
            refusal = field(part, "refusal")
            if not isinstance(refusal, str):
                raise malformed(what, f"{where}.refusal", "a string", refusal)
            refusals.append(refusal)


def reasoning_items(response: Response | Mapping[str, Any]) -> list[dict[str, Any]]:
    """The reasoning items of a response, as input items to send back next turn."""
    response = _as_response(response)
    return [
        item.model_dump(mode="json", exclude_none=True)
        for item in response.output
        if item.type == "reasoning"
    ]


def final_response(events: Iterable[ResponseStreamEvent | Mapping[str, Any]]) -> Response:
    """The final ``Response`` of an event stream (``response.completed`` and kin)."""
    final: Any = None
    for event in events:
        data = event if isinstance(event, Mapping) else None
        kind = data.get("type") if data is not None else event.type  # type: ignore[union-attr]
        if kind == "error":
            message = data.get("message") if data is not None else getattr(event, "message", "")
            raise ProviderError(f"the response stream reported an error: {message}")
        if kind in _FINAL_EVENTS:
            final = data["response"] if data is not None else event.response  # type: ignore[union-attr]
    if final is None:
        raise ProviderError(
            "the response stream ended without response.completed", code="empty_response"
        )
    return _as_response(final)


def responses_response_from_events(
    events: Iterable[ResponseStreamEvent | Mapping[str, Any]],
) -> ModelResponse:
    """The harness response for a Responses API event stream (SDK events or their JSON)."""
    return responses_response_from_response(final_response(events))


class OpenAIResponsesModel(OpenAIAdapter):
    """A real model behind the Responses API (stateless), through the official SDK.

    Each request sends the whole conversation (``store=False``); reasoning items
    returned by reasoning models are kept for the run and sent back in place.
    """

    default_capabilities = OPENAI_RESPONSES_CAPABILITIES
    json_stream_events = True  # final_response reads the events' JSON

    def __init__(
        self,
        client: openai.OpenAI | openai.AsyncOpenAI,
        model: str = "gpt-4o-mini",
        *,
        stream: bool = False,
        defaults: Mapping[str, Any] | None = None,
        include_reasoning: bool = True,
        capabilities: ModelCapabilities | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(
            client, model, stream=stream, defaults=defaults, capabilities=capabilities, name=name
        )
        self.include_reasoning = include_reasoning
        self._reasoning: dict[ReasoningKey, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._history = WireHistory(lambda message: _items(message, {}))

    def params(self, request: ModelRequest) -> dict[str, Any]:
        """The SDK call's keyword arguments for ``request``."""
        with self._lock:
            reasoning = dict(self._reasoning)
        return responses_params(
            request,
            model=self.model,
            stream=self.stream,
            defaults=self.defaults,
            reasoning=reasoning,
            include_reasoning=self.include_reasoning,
            history=self._history,
        )

    def _resource(self, client: Any) -> Any:
        return client.responses

    def _encoded(self, params: Mapping[str, Any]) -> dict[str, str] | None:
        text = self._history.encoded(params.get("input"))
        return None if text is None else {"input": text}

    def _wire_exact(self) -> tuple[frozenset[str], Any]:
        from openai.types.responses.response_create_params import ResponseCreateParamsBase

        own = type(self).params is OpenAIResponsesModel.params
        return (_TRUSTED if own else frozenset()), ResponseCreateParamsBase

    def _read(self, result: Any) -> ModelResponse:
        response: Response = result
        model_response = responses_response_from_response(response)
        items = reasoning_items(response)
        if items:
            key = message_key(model_response.message)
            with self._lock:
                replaced = key in self._reasoning
                self._reasoning[key] = items
            if replaced:  # a remembered turn may carry other items now: convert afresh
                self._history.clear()
        return model_response

    def _read_stream(self, events: Iterable[Any]) -> ModelResponse:
        return self._read(final_response(events))

    def end_run(self, *, completed: bool) -> None:
        with self._lock:
            self._reasoning.clear()
        self._history.clear()
