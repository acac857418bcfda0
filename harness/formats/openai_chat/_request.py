"""Chat Completions requests, both directions: neutral -> body (the adapter) and body ->
neutral (the fake, with the API's checks; cassettes).

The pieces of a request each have their pair here: tool entries (``tool_param`` /
``tool_from_param``), ``tool_choice``, and messages (``message_to_dict`` /
``message_from_dict``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from harness._errors import UsageError
from harness._validation import assert_never
from harness.formats._history import WireHistory
from harness.formats._native_rules import NativeRules, native_problem
from harness.formats._openai import (
    check_choice_mode,
    check_schema,
    check_tools,
    json_schema_format,
    missing_name,
    missing_parameter,
    require_object,
    text_of,
    validate_strict,
)
from harness.formats._sent_tools import sent_tools
from harness.formats._server import (
    IncrementalReader,
    Strictness,
    WireError,
    WireRequest,
    count_iteration,
    invalid_type,
    require_model,
    require_stream,
)
from harness.loop import ModelRequest, ModelSettings
from harness.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from harness.tools._definitions import ToolChoice, ToolDefinition

__all__ = [
    "HISTORY_KEY",
    "NAME",
    "RequestReader",
    "message_from_dict",
    "message_to_dict",
    "messages_from_dicts",
    "messages_to_dicts",
    "request_body",
    "request_from_body",
    "tool_choice_from_param",
    "tool_choice_param",
    "tool_from_param",
    "tool_param",
]

NAME = "openai-chat"
"""The format's name (``provider_extra`` key, cassette codec name)."""
HISTORY_KEY = "messages"
"""The body field that holds the growing history (what the fake decodes incrementally)."""

_ROLES = ("system", "developer", "user", "assistant", "tool")
_KNOWN = frozenset(
    {
        "model",
        "messages",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "response_format",
        "stream",
        "stream_options",
    }
)
_FUNCTION_KEYS = frozenset({"name", "description", "parameters", "strict"})


_RULES = NativeRules(search_required=True, namespaces=False)

# -- tools ---------------------------------------------------------------------------------


def tool_param(definition: ToolDefinition) -> dict[str, Any]:
    """The ``tools`` entry of ``definition``: ``{"type": "function", "function": {...}}``.

    Chat Completions has no namespaces and no provider-run tool search (a ``UsageError``
    says so) and no per-tool cache hints (``cache_control`` is left out); a client search
    tool is an ordinary function. Deferred tools are left out by ``request_body`` until
    the history reveals them.
    """
    if definition.namespace is not None or definition.is_hosted:
        field = "namespace" if definition.namespace is not None else f"search={definition.search!r}"
        raise UsageError(
            f"tool {definition.name!r} has {field} set, which Chat Completions cannot send; "
            "use the Responses API or Anthropic Messages, or offer the tool directly"
        )
    function: dict[str, Any] = {"name": definition.name}
    if definition.description is not None:
        function["description"] = definition.description
    function["parameters"] = definition.parameters
    if definition.strict is not None:
        function["strict"] = definition.strict
    function.update(definition.extra_for(NAME))
    return {"type": "function", "function": function}


def tool_from_param(entry: Any, index: int = 0) -> ToolDefinition:
    """The ``ToolDefinition`` of a ``tools`` entry; the API's 400 when it has no name."""
    path = f"tools[{index}].function.name"
    function = entry.get("function") if isinstance(entry, Mapping) else None
    if not isinstance(function, Mapping):
        raise missing_name(path)
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise missing_name(path)
    description = function.get("description")
    strict = function.get("strict")
    extra = {k: v for k, v in function.items() if k not in _FUNCTION_KEYS}
    parameters = function.get("parameters")
    if parameters is not None and not isinstance(parameters, Mapping):
        check_schema(name, parameters, f"tools[{index}].function.parameters")
    return ToolDefinition(
        name=name,
        description=description if isinstance(description, str) else None,
        **({"parameters": parameters} if parameters is not None else {}),
        strict=strict if isinstance(strict, bool) else None,
        provider_extra={NAME: extra} if extra else {},
    )


# -- tool choice ---------------------------------------------------------------------------


def tool_choice_param(choice: ToolChoice) -> str | dict[str, Any]:
    """``tool_choice`` for ``choice`` (a hosted-tool choice comes from ``provider_extra``)."""
    extra = choice.provider_extra.get(NAME)
    if extra is not None:
        return dict(extra)
    if choice.allowed is not None:
        return {
            "type": "allowed_tools",
            "allowed_tools": {
                "mode": choice.mode,
                "tools": [{"type": "function", "function": {"name": n}} for n in choice.allowed],
            },
        }
    if choice.mode == "tool":
        return {"type": "function", "function": {"name": choice.name}}
    return choice.mode


def tool_choice_from_param(value: Any) -> ToolChoice | None:
    """The ``ToolChoice`` of a ``tool_choice`` value (shapes it does not know are kept in
    ``provider_extra`` so that they encode back unchanged)."""
    if value is None:
        return None
    if value in ("auto", "none", "required"):
        return ToolChoice.of(value)
    if isinstance(value, Mapping):
        kind = value.get("type")
        function = value.get("function")
        if kind == "function" and isinstance(function, Mapping):
            name = function.get("name")
            if isinstance(name, str) and name:
                return ToolChoice.tool(name)
        inner = value.get("allowed_tools")
        if kind == "allowed_tools" and isinstance(inner, Mapping):
            entries = inner.get("tools") or ()
            names = [
                t["function"]["name"]
                for t in entries
                if isinstance(t, Mapping)
                and isinstance(t.get("function"), Mapping)
                and isinstance(t["function"].get("name"), str)
                and t["function"]["name"]
            ]
            mode = inner.get("mode", "auto")
            if names and len(names) == len(entries) and mode in ("auto", "required"):
                return ToolChoice.allowed_tools(names, mode=mode)
        return ToolChoice(mode="tool", provider_extra={NAME: dict(value)})
    raise WireError(
        400,
        f"Invalid value for 'tool_choice': {value!r}. Expected 'none', 'auto', 'required' "
        "or an object naming a function.",
        param="tool_choice",
        code="invalid_value",
    )


def check_tool_choice(value: Any) -> Any:
    """``value`` if the API takes it as ``tool_choice``, else its 400 (the server side:
    ``{"type": "function"}`` needs its ``function`` and name, an allowed subset a mode of
    ``auto`` or ``required`` and a list of tools)."""
    if not isinstance(value, Mapping):
        return value  # a string: tool_choice_from_param knows the three
    kind = value.get("type")
    if kind is None:
        raise missing_parameter("tool_choice.type")
    if not isinstance(kind, str):
        raise invalid_type("tool_choice.type", "a string", kind)
    if kind in ("function", "custom"):
        inner = value.get(kind)
        if not isinstance(inner, Mapping):
            raise missing_parameter(f"tool_choice.{kind}")
        if not isinstance(inner.get("name"), str):
            raise missing_parameter(f"tool_choice.{kind}.name")
    elif kind == "allowed_tools":
        inner = value.get("allowed_tools")
        if not isinstance(inner, Mapping):
            raise missing_parameter("tool_choice.allowed_tools")
        check_choice_mode(inner.get("mode"), "tool_choice.allowed_tools.mode")
        if not isinstance(inner.get("tools"), list):
            raise invalid_type("tool_choice.allowed_tools.tools", "an array", inner.get("tools"))
    else:
        raise WireError(
            400,
            f"Invalid value: '{kind}'. Supported values are: 'function', "
            "'allowed_tools' and 'custom'.",
            param="tool_choice.type",
            code="invalid_value",
        )
    return value


# -- messages ------------------------------------------------------------------------------


def message_to_dict(message: Message) -> dict[str, Any]:
    """The Chat Completions dict of ``message`` (a tool message keeps its ``name``).

    What Chat Completions has no field for is kept under the harness's own keys, so a
    scenario file holds it (and ``_wire_message`` drops it): ``tools`` (the definitions a
    tool result or a system message revealed), ``searches`` (hosted tool searches of an
    assistant turn) and a call's ``namespace``.
    """
    match message:
        case AssistantMessage():
            out: dict[str, Any] = {"role": "assistant", "content": message.content}
            if message.tool_calls:
                out["tool_calls"] = [_call_dict(call) for call in message.tool_calls]
            if message.refusal is not None:
                out["refusal"] = message.refusal
            if message.searches:
                out["searches"] = [
                    s.model_dump(exclude_defaults=True, exclude={"provider_data"})
                    for s in message.searches
                ]
            return out
        case ToolMessage():
            out = {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
            if message.name is not None:
                out["name"] = message.name
            if message.tools:
                out["tools"] = [t.to_data() for t in message.tools]
            return out
        case SystemMessage() | UserMessage():
            out = {"role": message.role, "content": message.content}
            if isinstance(message, SystemMessage) and message.tools:
                out["tools"] = [t.to_data() for t in message.tools]
            return out
        case _:  # pragma: no cover - the union is closed
            assert_never(message)


def _call_dict(call: ToolCall) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }
    if call.namespace is not None:
        out["namespace"] = call.namespace
    return out


_HARNESS_KEYS = ("tools", "searches")
"""``message_to_dict`` keys that are the harness's, not the API's."""


def _wire_message(message: Message) -> dict[str, Any]:
    """``message_to_dict`` as sent to the API (a tool message's ``name`` is not sent)."""
    data = message_to_dict(message)
    if isinstance(message, ToolMessage):
        data.pop("name", None)
    revealed = [data.pop(key) for key in _HARNESS_KEYS if key in data]
    if revealed and "tool_calls" in data:
        data["tool_calls"] = [
            {k: v for k, v in c.items() if k != "namespace"} for c in data["tool_calls"]
        ]
    if isinstance(message, (ToolMessage, SystemMessage)) and message.tools and not data["content"]:
        # revealed tools have no wire form here (they are sent in ``tools``): say so
        names = ", ".join(t.name for t in message.tools)
        data["content"] = (
            f"Tools found: {names}" if isinstance(message, ToolMessage) else f"Tools added: {names}"
        )
    return data


def _wire_message_string_content(message: Message) -> dict[str, Any]:
    """``_wire_message`` with ``content: ""`` instead of ``null`` (llama.cpp's server
    refuses ``null`` beside tool calls)."""
    data = _wire_message(message)
    if data.get("content", "") is None:
        data["content"] = ""
    return data


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """The message of a Chat Completions dict (``UsageError`` naming what is wrong).

    For the dicts ``message_to_dict`` gives, ``message_from_dict(message_to_dict(m)) == m``
    (except ``ToolMessage.is_error``, which the format does not carry).
    """
    if not isinstance(data, Mapping):
        raise UsageError(f"expected a message dict, got {type(data).__name__}: {data!r}")
    payload = dict(data)
    if payload.get("role") == "assistant":
        payload["tool_calls"] = _read_tool_calls(payload.get("tool_calls"))
    if isinstance(payload.get("tools"), list):
        try:
            payload["tools"] = tuple(ToolDefinition(**t) for t in payload["tools"])
        except TypeError as exc:
            raise UsageError(f"message 'tools' must be tool definitions: {exc}") from None
    try:
        return _MESSAGE_ADAPTER.validate_python(payload)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'message'}: {err['msg']}"
            for err in exc.errors(include_url=False)
        )
        raise UsageError(
            f"not a valid chat message ({problems}); got {dict(data)!r}. Expected a dict "
            "with 'role' (system, user, assistant or tool) and that role's fields."
        ) from None


_MESSAGE_ADAPTER: TypeAdapter[Message] = TypeAdapter(Message)


def _read_tool_calls(calls: Any) -> tuple[dict[str, Any], ...]:
    if calls is None:
        return ()
    if not isinstance(calls, (list, tuple)):
        raise UsageError(f"assistant 'tool_calls' must be a list, got {calls!r}")
    converted = []
    for call in calls:
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping):
            raise UsageError(f"assistant tool call must have a 'function' object, got {call!r}")
        kind = call.get("type", "function")
        if kind != "function":
            raise UsageError(
                f"assistant tool call type must be 'function', got type={kind!r} in {call!r}"
            )
        converted.append(
            {
                "id": call.get("id"),
                "name": function.get("name"),
                "arguments": function.get("arguments", "{}"),
                **({"namespace": call["namespace"]} if call.get("namespace") else {}),
            }
        )
    return tuple(converted)


def messages_to_dicts(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """A history as Chat Completions dicts."""
    return [message_to_dict(m) for m in messages]


def messages_from_dicts(data: Iterable[Mapping[str, Any]]) -> list[Message]:
    """A history of Chat Completions dicts as messages."""
    return [message_from_dict(d) for d in data]


# -- the request body: neutral -> body -----------------------------------------------------


def request_body(
    request: ModelRequest,
    *,
    model: str,
    stream: bool = False,
    defaults: Mapping[str, Any] | None = None,
    history: WireHistory | None = None,
    string_content: bool = False,
) -> dict[str, Any]:
    """The body of ``POST /chat/completions`` (= ``client.chat.completions.create``
    keyword arguments) for ``request``.

    ``defaults`` (temperature, max_tokens, ...) apply first; the request's
    ``settings.extra`` overrides them. ``history`` converts only the messages added
    since the previous request (give each option its own ``WireHistory``).
    ``string_content`` sends ``content: ""`` instead of ``null`` (for servers that refuse
    ``null``, such as llama.cpp's). ``tools``, ``parallel_tool_calls`` and
    ``tool_choice`` are left out when no tool is offered (the API rejects
    ``tool_choice`` without tools).
    """
    convert = _wire_message_string_content if string_content else _wire_message
    if history is not None:
        messages = history.convert(request.messages, convert)
    else:
        messages = [convert(message) for message in request.messages]
    body: dict[str, Any] = {"model": model, "messages": messages}
    settings = request.settings
    tools = sent_tools(request)
    if tools:
        body["tools"] = [tool_param(t) for t in tools]
        if settings.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = settings.parallel_tool_calls
        if settings.tool_choice is not None:
            body["tool_choice"] = tool_choice_param(settings.tool_choice)
    output_format = json_schema_format(settings)
    if output_format is not None:
        body["response_format"] = {"type": "json_schema", "json_schema": output_format}
    body.update(defaults or {})
    body.update(settings.extra)
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


# -- the request body: body -> neutral (the fake, with the API's checks) -------------------


def _message(data: Any, index: int) -> Message:
    where = f"messages[{index}]"
    if not isinstance(data, Mapping):
        raise WireError(
            400,
            f"Invalid type for '{where}': expected an object, but got "
            f"{type(data).__name__} instead.",
            param=where,
            code="invalid_type",
        )
    role = data.get("role")
    if role not in _ROLES:
        raise WireError(
            400,
            f"Invalid value: {role!r}. Supported values are: 'system', 'assistant', 'user', "
            "'function', 'tool', and 'developer'.",
            param=f"{where}.role",
            code="invalid_value",
        )
    content = text_of(data.get("content"), f"{where}.content")
    clean: dict[str, Any] = {"role": "system" if role == "developer" else role}
    if role == "assistant":
        clean["content"] = content
        if data.get("tool_calls"):
            clean["tool_calls"] = data["tool_calls"]
        if isinstance(data.get("refusal"), str):
            clean["refusal"] = data["refusal"]
    elif role == "tool":
        clean.update(content=content or "", tool_call_id=data.get("tool_call_id"))
    else:
        if content is None:
            raise WireError(
                400,
                f"Missing required parameter: '{where}.content'.",
                param=f"{where}.content",
                code="missing_required_parameter",
            )
        clean["content"] = content
    try:
        return message_from_dict(clean)
    except UsageError as exc:
        raise WireError(
            400, f"Invalid '{where}': {exc}", param=where, code="invalid_value"
        ) from None


def _settings(body: Mapping[str, Any]) -> ModelSettings:
    output_schema = None
    output_name = None
    response_format = body.get("response_format")
    if isinstance(response_format, Mapping) and response_format.get("type") == "json_schema":
        spec = response_format.get("json_schema") or {}
        output_schema = spec.get("schema")
        output_name = spec.get("name")
    return ModelSettings(
        tool_choice=tool_choice_from_param(check_tool_choice(body.get("tool_choice"))),
        parallel_tool_calls=body.get("parallel_tool_calls"),
        output_schema=output_schema,
        output_name=output_name,
        extra={k: v for k, v in body.items() if k not in _KNOWN},
    )


def _validate_order(messages: list[Message], start: int) -> None:
    """Every tool result answers a call of the assistant message just before; every call
    is answered (the API's 400 otherwise). ``start`` skips an accepted prefix."""
    pending: dict[str, None] = {}
    opened_at = 0
    for index in range(start, len(messages)):
        message = messages[index]
        if isinstance(message, ToolMessage):
            if message.tool_call_id not in pending:
                raise WireError(
                    400,
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    param=f"messages.[{index}].role",
                )
            del pending[message.tool_call_id]
            continue
        if pending:
            _unanswered(list(pending), opened_at)
        if isinstance(message, AssistantMessage) and message.tool_calls:
            pending = {call.id: None for call in message.tool_calls}
            opened_at = index
    if pending:
        _unanswered(list(pending), opened_at)


def _unanswered(ids: list[str], index: int) -> None:
    raise WireError(
        400,
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(ids),
        param=f"messages.[{index}].role",
    )


@dataclasses.dataclass(frozen=True, slots=True)
class _Accepted:
    """The last history the fake accepted: a request that repeats it (every call in it is
    answered) only needs the new messages read and checked."""

    raw: list[Any] = dataclasses.field(default_factory=list)
    messages: tuple[Message, ...] = ()
    assistants: int = 0
    raw_tools: Any = None
    """The ``tools`` of that body, and their definitions (the same tools come every turn:
    they are read and checked once)."""
    tools: tuple[ToolDefinition, ...] = ()

    def reusable(self, raw: list[Any]) -> int:
        size = len(self.raw)
        if size and len(raw) >= size and raw[:size] == self.raw:
            return size
        return 0


def _tools(raw: Any) -> tuple[ToolDefinition, ...]:
    """The definitions of a ``tools`` array, checked like the API."""
    if not isinstance(raw, list):
        raise WireError(400, "Invalid type for 'tools': expected an array.", param="tools")
    tools = tuple(tool_from_param(t, i) for i, t in enumerate(raw))
    check_tools(
        tools,
        name_path=lambda i: f"tools[{i}].function.name",
        parameters_path=lambda i: f"tools[{i}].function.parameters",
    )
    return tools


def _read(
    body: Any, profile: Strictness, accepted: _Accepted | None
) -> tuple[WireRequest, _Accepted]:
    body = require_object(body)
    model = require_model(body)
    raw_messages = body.get("messages")
    if raw_messages is not None and not isinstance(raw_messages, list):
        raise invalid_type("messages", "an array", raw_messages)
    stream = require_stream(body)
    if not isinstance(raw_messages, list) or not raw_messages:
        raise WireError(
            400,
            "Missing required parameter: 'messages'."
            if raw_messages is None
            else "Invalid 'messages': empty array. Expected an array with minimum length 1, "
            "but got an empty array instead.",
            param="messages",
            code="missing_required_parameter" if raw_messages is None else "empty_array",
        )
    reuse = accepted.reusable(raw_messages) if accepted is not None else 0
    messages = list(accepted.messages[:reuse]) if accepted is not None else []
    messages.extend(_message(m, i) for i, m in enumerate(raw_messages[reuse:], reuse))
    raw_tools = body.get("tools") or []
    if accepted is not None and accepted.raw_tools is not None and raw_tools == accepted.raw_tools:
        tools = accepted.tools
    else:
        tools = _tools(raw_tools)
    _validate_order(messages, reuse)
    names = tuple(t.name for t in tools)
    if profile == "strict":
        validate_strict(
            messages, names, call_path=lambda i, j: f"messages[{i}].tool_calls[{j}].function.name"
        )
    stream_options = body.get("stream_options") or {}
    request = ModelRequest(
        messages=messages,
        tools=tools,
        tool_names=names,
        settings=_settings(body),
        iteration=(accepted.assistants if reuse and accepted is not None else 0)
        + count_iteration(messages[reuse:]),
    )
    problem = native_problem(request, _RULES)
    if problem is not None:
        raise WireError(400, problem.message, param=problem.param, code="invalid_value")
    wire = WireRequest(
        model=model,
        request=request,
        stream=stream,
        include_usage=bool(stream_options.get("include_usage")),
        body=body,
    )
    remembered = _Accepted(
        raw=raw_messages,
        messages=tuple(messages),
        assistants=request.iteration - 1,
        raw_tools=raw_tools,
        tools=tools,
    )
    return wire, remembered


def request_from_body(body: Any, *, profile: Strictness = "default") -> WireRequest:
    """Read a ``POST /chat/completions`` body like the API; ``WireError`` (its 400) if invalid."""
    return _read(body, profile, None)[0]


class RequestReader(IncrementalReader[_Accepted]):
    """``request_from_body`` for a fake serving one conversation after another: a body whose
    history repeats the last accepted one only has its new messages read and checked."""

    def __init__(self, *, profile: Strictness = "default") -> None:
        super().__init__(_read, profile=profile)
