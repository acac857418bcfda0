"""The Responses API on the wire: input items to messages, responses to JSON and SSE events."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping
from typing import Any

from harness.loop import ModelRequest, ModelResponse, ModelSettings
from harness.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from harness.models._wire._common import (
    DEFAULT_CHUNK_CHARS,
    DEFAULT_MAX_CHUNKS,
    IdSource,
    WireRequest,
    count_iteration,
    fragments,
    now,
    require_model,
    require_stream,
    sse,
    text_of,
    usage_responses,
    words,
)
from harness.models._wire._errors import WireError
from harness.models._wire._validation import (
    Profile,
    responses_order,
    validate_strict,
    validate_tools,
)

__all__ = [
    "AcceptedInput",
    "parse_responses_request",
    "read_responses_request",
    "render_response",
    "stream_response",
]

_KNOWN = frozenset(
    {
        "model",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "text",
        "stream",
        "store",
        "include",
    }
)


def _role_message(item: Mapping[str, Any], where: str) -> Message:
    role = item.get("role")
    content = text_of(item.get("content"), f"{where}.content") or ""
    if role in ("system", "developer"):
        return SystemMessage(content=content)
    if role == "user":
        return UserMessage(content=content)
    if role == "assistant":
        return AssistantMessage(content=content)
    raise WireError(
        400,
        f"Invalid value: {role!r}. Supported values are: 'assistant', 'system', "
        "'developer', and 'user'.",
        param=f"{where}.role",
        code="invalid_value",
    )


@dataclasses.dataclass(frozen=True, slots=True)
class AcceptedInput:
    """The last input the server accepted, to read the next one incrementally.

    A request whose input repeats it (after the same ``instructions``) and adds
    items only has the new items read and validated. Not reused after an
    assistant message, where a new ``function_call`` item would join that message.
    """

    raw: list[Any] = dataclasses.field(default_factory=list)
    """The input items as decoded from the request body."""
    instructions: Any = None
    messages: tuple[Message, ...] = ()
    """The same input, read (``instructions`` first)."""
    names: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Tool name of each call id."""
    called: Mapping[str, bool] = dataclasses.field(default_factory=dict)
    """Every call id (all answered), as ``responses_order`` returned it."""
    assistants: int = 0
    """How many assistant messages ``messages`` holds."""

    def reusable(self, raw: Any, instructions: Any) -> int:
        """How many leading items of ``raw`` are this input (0 when it does not extend it)."""
        size = len(self.raw)
        if (
            size
            and isinstance(raw, list)
            and len(raw) >= size
            and self.messages
            and not isinstance(self.messages[-1], AssistantMessage)
            and instructions == self.instructions
            and raw[:size] == self.raw
        ):
            return size
        return 0


def _messages(
    body: Mapping[str, Any], accepted: AcceptedInput | None = None
) -> tuple[tuple[list[Message], dict[str, str]], int]:
    """The messages of ``body``, the tool name of each call id, and how many were reused."""
    instructions = body.get("instructions")
    raw = body.get("input")
    reuse = accepted.reusable(raw, instructions) if accepted is not None else 0
    if reuse and accepted is not None and isinstance(raw, list):
        return _read_items(raw, reuse, list(accepted.messages), dict(accepted.names)), reuse
    messages: list[Message] = []
    if isinstance(instructions, str) and instructions:
        messages.append(SystemMessage(content=instructions))
    if isinstance(raw, str):
        messages.append(UserMessage(content=raw))
        return (messages, {}), 0
    if not isinstance(raw, list):
        raise WireError(
            400,
            "Missing required parameter: 'input'.",
            param="input",
            code="missing_required_parameter",
        )
    return _read_items(raw, 0, messages, {}), 0


def _read_items(
    raw: list[Any], start: int, messages: list[Message], names: dict[str, str]
) -> tuple[list[Message], dict[str, str]]:
    for index in range(start, len(raw)):
        item = raw[index]
        where = f"input[{index}]"
        if not isinstance(item, Mapping):
            raise WireError(400, f"Invalid type for '{where}': expected an object.", param=where)
        kind = item.get("type", "message")
        if kind == "message":
            messages.append(_role_message(item, where))
        elif kind == "function_call":
            call = ToolCall(
                id=str(item.get("call_id")),
                name=str(item.get("name")),
                arguments=str(item.get("arguments", "{}")),
            )
            names[call.id] = call.name
            last = messages[-1] if messages else None
            if isinstance(last, AssistantMessage):
                messages[-1] = last.model_copy(update={"tool_calls": (*last.tool_calls, call)})
            else:
                messages.append(AssistantMessage(tool_calls=(call,)))
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            output = text_of(item.get("output"), f"{where}.output") or ""
            messages.append(
                ToolMessage(tool_call_id=call_id, content=output, name=names.get(call_id))
            )
        elif kind != "reasoning":
            raise WireError(
                400,
                f"Invalid value: {kind!r}. The fake server supports 'message', 'function_call', "
                "'function_call_output' and 'reasoning' input items.",
                param=f"{where}.type",
                code="invalid_value",
            )
    return messages, names


def _tools(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    raw = body.get("tools") or []
    if not isinstance(raw, list):
        raise WireError(400, "Invalid type for 'tools': expected an array.", param="tools")
    tools = []
    for tool in raw:
        if isinstance(tool, Mapping) and tool.get("type", "function") == "function":
            function = {k: v for k, v in tool.items() if k != "type"}
            tools.append({"type": "function", "function": function})
    return tools


def _settings(body: Mapping[str, Any]) -> ModelSettings:
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") == "function":
        choice = {"type": "function", "function": {"name": choice.get("name")}}
    text = body.get("text") or {}
    fmt = text.get("format") if isinstance(text, Mapping) else None
    schema = name = None
    if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
        schema, name = fmt.get("schema"), fmt.get("name")
    return ModelSettings(
        tool_choice=choice,
        parallel_tool_calls=body.get("parallel_tool_calls"),
        output_schema=schema,
        output_name=name,
        extra={k: v for k, v in body.items() if k not in _KNOWN},
    )


def parse_responses_request(
    body: Mapping[str, Any], *, profile: Profile = "default"
) -> WireRequest:
    """Validate a ``POST /v1/responses`` body (stateless: full input each turn)."""
    return read_responses_request(body, profile=profile)[0]


def read_responses_request(
    body: Mapping[str, Any],
    *,
    profile: Profile = "default",
    accepted: AcceptedInput | None = None,
) -> tuple[WireRequest, AcceptedInput]:
    """``parse_responses_request``, reading only the items added to ``accepted``'s input.

    Also returns what to pass as ``accepted`` next time.
    """
    model = require_model(body)
    stream = require_stream(body)
    (messages, call_names), reuse = _messages(body, accepted)
    tools = _tools(body)
    validate_tools(tools, api="responses")
    if reuse and accepted is not None:
        called = responses_order(messages, start=len(accepted.messages), called=accepted.called)
        assistants = accepted.assistants + count_iteration(messages[len(accepted.messages) :]) - 1
    else:
        called = responses_order(messages)
        assistants = count_iteration(messages) - 1
    names = tuple(str(t["function"]["name"]) for t in tools)
    if profile == "strict":
        validate_strict(messages, names, api="responses")
    request = ModelRequest(
        messages=messages,
        tools=tools,
        tool_names=names,
        settings=_settings(body),
        iteration=assistants + 1,
    )
    raw = body.get("input")
    remembered = AcceptedInput(
        raw=raw if isinstance(raw, list) else [],
        instructions=body.get("instructions"),
        messages=tuple(messages),
        names=call_names,
        called=called,
        assistants=assistants,
    )
    return WireRequest(model=model, request=request, stream=stream, body=body), remembered


def _items(response: ModelResponse, ids: IdSource) -> list[dict[str, Any]]:
    message = response.message
    items: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    if message.content or (not message.tool_calls and message.refusal is None):
        text = message.content or ""
        parts.append({"type": "output_text", "text": text, "annotations": [], "logprobs": []})
    if message.refusal is not None:
        parts.append({"type": "refusal", "refusal": message.refusal})
    if parts:
        items.append(
            {
                "id": ids.next("msg_"),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": parts,
            }
        )
    for call in message.tool_calls:
        items.append(
            {
                "id": ids.next("fc_"),
                "type": "function_call",
                "status": "completed",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
            }
        )
    return items


def _envelope(wire: WireRequest, response_id: str, created: int) -> dict[str, Any]:
    body = wire.body
    tools = [{"type": "function", "strict": False, **t["function"]} for t in wire.request.tools]
    return {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "status": "in_progress",
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": wire.model,
        "output": [],
        "parallel_tool_calls": body.get("parallel_tool_calls", True) is not False,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": bool(body.get("store", False)),
        "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": tools,
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": None,
        "user": None,
        "metadata": {},
    }


def _finish(envelope: dict[str, Any], response: ModelResponse, items: list[dict[str, Any]]) -> None:
    reason = {"length": "max_output_tokens", "content_filter": "content_filter"}.get(
        response.finish_reason
    )
    envelope.update(
        status="incomplete" if reason else "completed",
        incomplete_details={"reason": reason} if reason else None,
        output=items,
        usage=usage_responses(response.usage),
        completed_at=None if reason else envelope["created_at"],
    )


def render_response(wire: WireRequest, response: ModelResponse, ids: IdSource) -> dict[str, Any]:
    """The ``response`` JSON for one model response."""
    envelope = _envelope(wire, ids.next("resp_"), now())
    _finish(envelope, response, _items(response, ids))
    return envelope


def stream_response(
    wire: WireRequest,
    response: ModelResponse,
    ids: IdSource,
    *,
    chunk_chars: int = DEFAULT_CHUNK_CHARS,
    max_chunks: int = DEFAULT_MAX_CHUNKS,
) -> list[bytes]:
    """The Responses API event stream (``event:`` + ``data:`` lines) for one response."""
    counter = itertools.count()
    events: list[bytes] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append(sse({"type": kind, **fields, "sequence_number": next(counter)}, kind))

    envelope = _envelope(wire, ids.next("resp_"), now())
    emit("response.created", response=dict(envelope))
    emit("response.in_progress", response=dict(envelope))
    items = _items(response, ids)
    for index, item in enumerate(items):
        if item["type"] == "message":
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            for part_index, part in enumerate(item["content"]):
                _stream_part(emit, item["id"], index, part_index, part, max_chunks)
        else:
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            for piece in fragments(item["arguments"], chunk_chars, max_chunks):
                if piece:
                    emit(
                        "response.function_call_arguments.delta",
                        item_id=item["id"],
                        output_index=index,
                        delta=piece,
                    )
            emit(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=index,
                arguments=item["arguments"],
            )
        emit("response.output_item.done", output_index=index, item=item)
    _finish(envelope, response, items)
    done = "response.incomplete" if envelope["status"] == "incomplete" else "response.completed"
    emit(done, response=envelope)
    return events


def _stream_part(
    emit: Any,
    item_id: str,
    index: int,
    part_index: int,
    part: dict[str, Any],
    max_chunks: int = DEFAULT_MAX_CHUNKS,
) -> None:
    where = {"item_id": item_id, "output_index": index, "content_index": part_index}
    if part["type"] == "output_text":
        emit(
            "response.content_part.added",
            **where,
            part={"type": "output_text", "text": "", "annotations": [], "logprobs": []},
        )
        for piece in words(part["text"], max_chunks):
            emit("response.output_text.delta", **where, delta=piece, logprobs=[])
        emit("response.output_text.done", **where, text=part["text"], logprobs=[])
    else:
        emit("response.content_part.added", **where, part={"type": "refusal", "refusal": ""})
        for piece in words(part["refusal"], max_chunks):
            emit("response.refusal.delta", **where, delta=piece)
        emit("response.refusal.done", **where, refusal=part["refusal"])
    emit("response.content_part.done", **where, part=part)
