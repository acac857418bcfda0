"""Responses API requests, both directions: neutral -> body (the adapter, stateless: the
whole input every turn) and body -> neutral (the fake, with the API's checks; cassettes).

Input items: messages, ``function_call`` items for earlier tool calls,
``function_call_output`` items for their results, and the reasoning items the model
returned before those calls (kept by the adapter and sent back in place).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from typing import Any

from harness._errors import UsageError
from harness._validation import assert_never
from harness.formats._history import TurnKey, WireHistory, message_key
from harness.formats._native_rules import (
    NativeRules,
    added_names,
    native_problem,
    offered_names,
)
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
from harness.formats.openai_responses._native import (
    DEFAULT_SEARCH_NAME,
    additional_tools_item,
    client_search_call_item,
    client_search_output_item,
    definitions_of,
    hosted_search_items,
    search_from_call,
    search_tool_from_param,
    search_tool_param,
    search_with_output,
)
from harness.loop import ModelRequest, ModelSettings
from harness.messages import (
    AssistantMessage,
    HostedSearch,
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
    "ReasoningKey",
    "RequestReader",
    "message_items",
    "message_key",
    "request_body",
    "request_from_body",
    "tool_choice_from_param",
    "tool_choice_param",
    "tool_from_param",
    "tool_param",
    "tool_params",
]

NAME = "openai-responses"
"""The format's name (``provider_extra`` key, cassette codec name)."""
HISTORY_KEY = "input"
"""The body field that holds the growing history (what the fake decodes incrementally)."""

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
_TOOL_KEYS = frozenset({"type", "name", "description", "parameters", "strict", "defer_loading"})

_RULES = NativeRules(search_required=True, namespaces=True)

ReasoningKey = TurnKey
"""Identifies an assistant turn in later histories (``message_key``)."""


# -- tools ---------------------------------------------------------------------------------


def tool_param(definition: ToolDefinition) -> dict[str, Any]:
    """The function tool entry of ``definition`` (flat: ``{"type": "function", "name",
    ...}``; ``strict`` defaults to false, as the SDK's helpers send it). Its namespace,
    if any, is applied by ``tool_params``; ``cache_control`` is not sent. A tool-search
    tool is the API's ``{"type": "tool_search"}`` entry (``execution: "client"`` for a
    search the client answers)."""
    if definition.search is not None:
        if definition.search in ("regex", "bm25"):
            raise UsageError(
                f"tool {definition.name!r} is a {definition.search} tool search, which the "
                "Responses API does not run; use search='hosted' (OpenAI's tool_search) or "
                "'client' (a search the loop answers)"
            )
        if definition.search == "client" and definition.name != DEFAULT_SEARCH_NAME:
            raise UsageError(
                f"client tool search {definition.name!r}: the Responses API names its "
                f"tool_search tool itself, and calls of it come back as {DEFAULT_SEARCH_NAME!r}; "
                f"name the tool {DEFAULT_SEARCH_NAME!r}"
            )
        return search_tool_param(definition)
    tool: dict[str, Any] = {"type": "function", "name": definition.name}
    if definition.description is not None:
        tool["description"] = definition.description
    tool["parameters"] = definition.parameters
    tool["strict"] = bool(definition.strict)
    if definition.defer_loading:
        tool["defer_loading"] = True
    tool.update(definition.extra_for(NAME))
    return tool


def tool_params(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """The ``tools`` array: function entries, those of a namespace grouped in one
    ``{"type": "namespace", "name": ..., "tools": [...]}`` entry where its first tool was."""
    out: list[dict[str, Any]] = []
    groups: dict[str, list[dict[str, Any]]] = {}
    for definition in definitions:
        entry = tool_param(definition)
        namespace = definition.namespace
        if namespace is None:
            out.append(entry)
        elif namespace in groups:
            groups[namespace].append(entry)
        else:
            groups[namespace] = [entry]
            out.append({"type": "namespace", "name": namespace, "tools": groups[namespace]})
    return out


def tool_from_param(entry: Any, index: int = 0, *, namespace: str | None = None) -> ToolDefinition:
    """The ``ToolDefinition`` of a function tool entry; the API's 400 when it has no name."""
    name = entry.get("name") if isinstance(entry, Mapping) else None
    if not isinstance(name, str) or not name:
        raise missing_name(f"tools[{index}].name")
    description = entry.get("description")
    strict = entry.get("strict")
    parameters = entry.get("parameters")
    if parameters is not None and not isinstance(parameters, Mapping):
        check_schema(name, parameters, f"tools[{index}].parameters")
    extra = {k: v for k, v in entry.items() if k not in _TOOL_KEYS}
    return ToolDefinition(
        name=name,
        description=description if isinstance(description, str) else None,
        **({"parameters": parameters} if parameters is not None else {}),
        strict=strict if isinstance(strict, bool) else None,
        defer_loading=entry.get("defer_loading") is True,
        namespace=namespace,
        provider_extra={NAME: extra} if extra else {},
    )


def _tools_from_body(body: Mapping[str, Any]) -> list[ToolDefinition]:
    raw = body.get("tools") or []
    if not isinstance(raw, list):
        raise WireError(400, "Invalid type for 'tools': expected an array.", param="tools")
    tools = []
    for index, entry in enumerate(raw):
        if not isinstance(entry, Mapping):
            continue
        kind = entry.get("type", "function")
        if kind == "function":
            tools.append(tool_from_param(entry, index))
        elif kind == "namespace":
            namespace = entry.get("name")
            if not isinstance(namespace, str):
                raise invalid_type(f"tools[{index}].name", "a string", namespace)
            if not namespace:
                raise WireError(
                    400,
                    f"Invalid 'tools[{index}].name': empty string. Expected a string with "
                    "minimum length 1, but got an empty string instead.",
                    param=f"tools[{index}].name",
                    code="empty_string",
                )
            members = entry.get("tools")
            if not isinstance(members, list):
                raise invalid_type(f"tools[{index}].tools", "an array", members)
            deferred = entry.get("defer_loading") is True
            for member in members:
                if isinstance(member, Mapping) and member.get("type", "function") == "function":
                    tool = tool_from_param(
                        member, index, namespace=namespace if namespace else None
                    )
                    if deferred and not tool.defer_loading:
                        tool = dataclasses.replace(tool, defer_loading=True)
                    tools.append(tool)
        elif kind == "tool_search":
            tools.append(search_tool_from_param(entry))
        # other hosted tools (web search, file search, MCP servers) are the API's
    return tools


# -- tool choice ---------------------------------------------------------------------------


def tool_choice_param(choice: ToolChoice) -> str | dict[str, Any]:
    """``tool_choice`` for ``choice`` (a hosted-tool choice comes from ``provider_extra``)."""
    extra = choice.provider_extra.get(NAME)
    if extra is not None:
        return dict(extra)
    if choice.allowed is not None:
        return {
            "type": "allowed_tools",
            "mode": choice.mode,
            "tools": [{"type": "function", "name": n} for n in choice.allowed],
        }
    if choice.mode == "tool":
        return {"type": "function", "name": choice.name}
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
        if kind == "function" and isinstance(value.get("name"), str) and value["name"]:
            return ToolChoice.tool(value["name"])
        if kind == "allowed_tools":
            entries = [t for t in value.get("tools") or () if isinstance(t, Mapping)]
            names = [t["name"] for t in entries if isinstance(t.get("name"), str) and t["name"]]
            mode = value.get("mode", "auto")
            if names and len(names) == len(entries) and mode in ("auto", "required"):
                return ToolChoice.allowed_tools(names, mode=mode)
        return ToolChoice(mode="tool", provider_extra={NAME: dict(value)})
    raise WireError(
        400,
        f"Invalid value for 'tool_choice': {value!r}. Expected 'none', 'auto', 'required' "
        "or an object naming a tool.",
        param="tool_choice",
        code="invalid_value",
    )


def check_tool_choice(value: Any) -> Any:
    """``value`` if the API takes it as ``tool_choice``, else its 400 (the server side:
    a named function needs its name, an allowed subset a mode of ``auto`` or ``required``
    and a list of tools)."""
    if not isinstance(value, Mapping):
        return value  # a string: tool_choice_from_param knows the three
    kind = value.get("type")
    if kind is None:
        raise missing_parameter("tool_choice.type")
    if kind in ("function", "custom") and not isinstance(value.get("name"), str):
        raise missing_parameter("tool_choice.name")
    if kind == "allowed_tools":
        check_choice_mode(value.get("mode"), "tool_choice.mode")
        if not isinstance(value.get("tools"), list):
            raise invalid_type("tool_choice.tools", "an array", value.get("tools"))
    return value


# -- the request body: neutral -> body -----------------------------------------------------


@dataclasses.dataclass(slots=True)
class _Encoding:
    """What encoding one request's items needs to know about its tools."""

    definitions: Mapping[str, ToolDefinition]
    """The request's tools by name (a hosted search's found definitions)."""
    client_search: frozenset[str]
    """Client search tools, whose calls are ``tool_search_call`` items."""
    search_calls: set[str] = dataclasses.field(default_factory=set)
    """Ids of the client search calls met (their outputs are ``tool_search_output``)."""

    def definition(self, name: str) -> ToolDefinition:
        found = self.definitions.get(name)
        return found if found is not None else ToolDefinition(name=name)

    @classmethod
    def of(cls, tools: Iterable[ToolDefinition]) -> _Encoding:
        definitions = {t.name: t for t in tools}
        return cls(
            definitions=definitions,
            client_search=frozenset(n for n, t in definitions.items() if t.search == "client"),
        )


def _call_item(call: ToolCall, encoding: _Encoding) -> dict[str, Any]:
    if call.name in encoding.client_search:
        encoding.search_calls.add(call.id)
        return client_search_call_item(call)
    item = {
        "type": "function_call",
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments,
    }
    if call.namespace is not None:
        item["namespace"] = call.namespace
    return item


def message_items(message: Message) -> list[dict[str, Any]]:
    """The input items of one message on its own (no reasoning items; a result is a
    ``function_call_output``: which calls were client searches needs the request)."""
    return _items(message, {}, _Encoding.of(()))


def _items(
    message: Message,
    reasoning: Mapping[ReasoningKey, list[dict[str, Any]]],
    encoding: _Encoding,
) -> list[dict[str, Any]]:
    """The input items of one message (an assistant turn's reasoning items first, then
    its hosted searches)."""
    match message:
        case AssistantMessage():
            items: list[dict[str, Any]] = list(reasoning.get(message_key(message), ()))
            for search in message.searches:
                items.extend(hosted_search_items(search, encoding.definition))
            text = message.content if message.content is not None else message.refusal
            if text:
                items.append({"role": "assistant", "content": text})
            items.extend(_call_item(call, encoding) for call in message.tool_calls)
            return items
        case ToolMessage():
            searched = message.tool_call_id in encoding.search_calls or (
                message.name is not None and message.name in encoding.client_search
            )
            if searched:
                return [client_search_output_item(message)]
            items = [
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id,
                    "output": message.content,
                }
            ]
            if message.tools:  # revealed by a result that is no native search: added
                items.append(additional_tools_item(message.tools))
            return items
        case SystemMessage():
            items = []
            if message.content or not message.tools:
                items.append({"role": "system", "content": message.content})
            if message.tools:
                items.append(additional_tools_item(message.tools))
            return items
        case UserMessage():
            return [{"role": message.role, "content": message.content}]
        case _:  # pragma: no cover - the union is closed
            assert_never(message)


def request_body(
    request: ModelRequest,
    *,
    model: str,
    stream: bool = False,
    defaults: Mapping[str, Any] | None = None,
    reasoning: Mapping[ReasoningKey, list[dict[str, Any]]] | None = None,
    include_reasoning: bool = True,
    history: WireHistory | None = None,
) -> dict[str, Any]:
    """The body of ``POST /responses`` (= ``client.responses.create`` keyword arguments)
    for ``request``, stateless (``store=False``).

    ``reasoning`` maps assistant turns (``message_key``) to the reasoning items to send
    back before them; ``history`` converts only the messages added since the previous
    request. ``tools``, ``parallel_tool_calls`` and ``tool_choice`` are left out when no
    tool is offered.
    """
    known = reasoning or {}
    encoding = _Encoding.of(request.tools)

    def convert(message: Message) -> list[dict[str, Any]]:
        return _items(message, known, encoding)

    if history is not None:
        items = history.convert(request.messages, convert)
    else:
        items = [item for message in request.messages for item in convert(message)]
    body: dict[str, Any] = {"model": model, "input": items, "store": False}
    if include_reasoning:
        body["include"] = ["reasoning.encrypted_content"]
    settings = request.settings
    if request.tools:
        body["tools"] = tool_params(request.tools)
        if settings.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = settings.parallel_tool_calls
        if settings.tool_choice is not None:
            body["tool_choice"] = tool_choice_param(settings.tool_choice)
    output_format = json_schema_format(settings)
    if output_format is not None:
        body["text"] = {"format": {"type": "json_schema", **output_format}}
    body.update(defaults or {})
    body.update(settings.extra)
    if stream:
        body["stream"] = True
    return body


# -- the request body: body -> neutral (the fake, with the API's checks) -------------------


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
class _Accepted:
    """The last input the fake accepted, to read the next one incrementally.

    A request whose input repeats it (after the same ``instructions``) and adds items
    only has the new items read and checked. Not reused after an assistant message,
    where a new ``function_call`` item would join that message.
    """

    raw: list[Any] = dataclasses.field(default_factory=list)
    instructions: Any = None
    messages: tuple[Message, ...] = ()
    names: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Tool name of each call id."""
    called: Mapping[str, bool] = dataclasses.field(default_factory=dict)
    """Every call id (all answered), as ``_check_order`` returned it."""
    assistants: int = 0
    raw_tools: Any = None
    """The ``tools`` of that body, and their definitions (the same tools come every turn:
    they are read and checked once)."""
    tools: tuple[ToolDefinition, ...] = ()
    added: tuple[str, ...] = ()
    """Names the input's additions (``additional_tools`` items) made callable."""

    def reusable(self, raw: Any, instructions: Any) -> int:
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
    body: Mapping[str, Any], accepted: _Accepted | None, deferred: frozenset[str] = frozenset()
) -> tuple[tuple[list[Message], dict[str, str]], int]:
    """The messages of ``body``, the tool name of each call id, and how many were reused
    (``deferred``: the request's deferred tools, which an ``additional_tools`` item right
    after a function's output reveals as that result's)."""
    instructions = body.get("instructions")
    raw = body.get("input")
    reuse = accepted.reusable(raw, instructions) if accepted is not None else 0
    if reuse and accepted is not None and isinstance(raw, list):
        read = _read_items(raw, reuse, list(accepted.messages), dict(accepted.names), deferred)
        return read, reuse
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
    return _read_items(raw, 0, messages, {}, deferred), 0


def _read_items(
    raw: list[Any],
    start: int,
    messages: list[Message],
    names: dict[str, str],
    deferred: frozenset[str] = frozenset(),
    search_name: str = DEFAULT_SEARCH_NAME,
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
            namespace = item.get("namespace")
            call = ToolCall(
                id=str(item.get("call_id")),
                name=str(item.get("name")),
                arguments=str(item.get("arguments", "{}")),
                namespace=namespace if isinstance(namespace, str) and namespace else None,
            )
            _add_call(messages, names, call)
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            output = text_of(item.get("output"), f"{where}.output") or ""
            messages.append(
                ToolMessage(tool_call_id=call_id, content=output, name=names.get(call_id))
            )
        elif kind == "tool_search_call":
            if item.get("execution") == "client":
                arguments = item.get("arguments")
                call = ToolCall(
                    id=str(item.get("call_id")),
                    name=search_name,
                    arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
                )
                _add_call(messages, names, call)
            else:
                _add_search(messages, search_from_call(item, search_name))
        elif kind == "tool_search_output":
            if item.get("execution") == "client":
                call_id = str(item.get("call_id"))
                messages.append(
                    ToolMessage(
                        tool_call_id=call_id,
                        content="",
                        name=names.get(call_id),
                        tools=definitions_of(item.get("tools"), tool_from_param),
                    )
                )
            else:
                _complete_search(messages, item)
        elif kind == "additional_tools":
            added = definitions_of(item.get("tools"), tool_from_param)
            last = messages[-1] if messages else None
            if (
                isinstance(last, ToolMessage)
                and not last.tools
                and added
                and all(t.name in deferred for t in added)
            ):
                # right after a function's output, deferred tools: that result revealed
                # them (how ``request_body`` sends a result that reveals tools); tools the
                # request does not declare are the client's addition
                messages[-1] = last.model_copy(update={"tools": added})
            else:
                messages.append(SystemMessage(content="", tools=added))
        elif kind != "reasoning":
            raise WireError(
                400,
                f"Invalid value: {kind!r}. The fake server supports 'message', 'function_call', "
                "'function_call_output', 'tool_search_call', 'tool_search_output', "
                "'additional_tools' and 'reasoning' input items.",
                param=f"{where}.type",
                code="invalid_value",
            )
    return messages, names


def _add_call(messages: list[Message], names: dict[str, str], call: ToolCall) -> None:
    names[call.id] = call.name
    last = messages[-1] if messages else None
    if isinstance(last, AssistantMessage):
        messages[-1] = last.model_copy(update={"tool_calls": (*last.tool_calls, call)})
    else:
        messages.append(AssistantMessage(tool_calls=(call,)))


def _add_search(messages: list[Message], search: HostedSearch) -> None:
    last = messages[-1] if messages else None
    if isinstance(last, AssistantMessage) and not last.tool_calls and last.content is None:
        messages[-1] = last.model_copy(update={"searches": (*last.searches, search)})
    else:
        messages.append(AssistantMessage(searches=(search,)))


def _complete_search(messages: list[Message], item: Mapping[str, Any]) -> None:
    last = messages[-1] if messages else None
    if isinstance(last, AssistantMessage) and last.searches and not last.searches[-1].complete:
        done = search_with_output(last.searches[-1], item)
        messages[-1] = last.model_copy(update={"searches": (*last.searches[:-1], done)})
    else:
        _add_search(messages, search_with_output(None, item))


def _check_order(
    messages: list[Message], *, start: int = 0, called: Mapping[str, bool] | None = None
) -> dict[str, bool]:
    """The API's order rule (each output after its call; every call answered); returns
    every call id seen. ``start`` and ``called`` continue from an accepted input."""
    seen: dict[str, bool] = dict(called) if called else {}
    pending = 0
    for index in range(start, len(messages)):
        message = messages[index]
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if seen.get(call.id) is not False:
                    pending += 1
                seen[call.id] = False
        elif isinstance(message, ToolMessage):
            answered = seen.get(message.tool_call_id)
            if answered is None:
                raise WireError(
                    400,
                    "No tool call found for function call output with call_id "
                    f"{message.tool_call_id}.",
                    param="input",
                )
            if answered is False:
                pending -= 1
            seen[message.tool_call_id] = True
    if pending:
        for call_id, answered in seen.items():
            if not answered:
                raise WireError(
                    400, f"No tool output found for function call {call_id}.", param="input"
                )
    return seen


def _settings(body: Mapping[str, Any]) -> ModelSettings:
    text = body.get("text") or {}
    fmt = text.get("format") if isinstance(text, Mapping) else None
    schema = name = None
    if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
        schema, name = fmt.get("schema"), fmt.get("name")
    return ModelSettings(
        tool_choice=tool_choice_from_param(check_tool_choice(body.get("tool_choice"))),
        parallel_tool_calls=body.get("parallel_tool_calls"),
        output_schema=schema,
        output_name=name,
        extra={k: v for k, v in body.items() if k not in _KNOWN},
    )


def _read(
    body: Any, profile: Strictness, accepted: _Accepted | None
) -> tuple[WireRequest, _Accepted]:
    body = require_object(body)
    model = require_model(body)
    stream = require_stream(body)
    raw_tools = body.get("tools")
    if accepted is not None and accepted.raw_tools is not None and raw_tools == accepted.raw_tools:
        tools = accepted.tools
    else:
        tools = tuple(_tools_from_body(body))
        check_tools(
            # the cap counts the tools loaded up front: deferred ones wait for a search
            # (the tool search guide's catalogs are larger than any cap)
            tools,
            loaded=[t for t in tools if not t.defer_loading],
            name_path=lambda i: f"tools[{i}].name",
            parameters_path=lambda i: f"tools[{i}].parameters",
        )
    deferred = frozenset(t.name for t in tools if t.defer_loading)
    (messages, call_names), reuse = _messages(body, accepted, deferred)
    if reuse and accepted is not None:
        called = _check_order(messages, start=len(accepted.messages), called=accepted.called)
        assistants = accepted.assistants + count_iteration(messages[len(accepted.messages) :]) - 1
    else:
        called = _check_order(messages)
        assistants = count_iteration(messages) - 1
    if reuse and accepted is not None:
        added = (*accepted.added, *added_names(messages, len(accepted.messages)))
    else:
        added = added_names(messages)
    names = offered_names(tools, added)
    if profile == "strict":
        validate_strict(messages, names, call_path=lambda i, j: "input")
    request = ModelRequest(
        messages=messages,
        tools=tools,
        tool_names=names,
        settings=_settings(body),
        iteration=assistants + 1,
    )
    problem = native_problem(request, _RULES)
    if problem is not None:
        raise WireError(400, problem.message, param=problem.param, code="invalid_value")
    raw = body.get("input")
    remembered = _Accepted(
        raw=raw if isinstance(raw, list) else [],
        instructions=body.get("instructions"),
        messages=tuple(messages),
        names=call_names,
        called=called,
        assistants=assistants,
        raw_tools=raw_tools,
        tools=tools,
        added=added,
    )
    return WireRequest(model=model, request=request, stream=stream, body=body), remembered


def request_from_body(body: Any, *, profile: Strictness = "default") -> WireRequest:
    """Read a ``POST /responses`` body like the API; ``WireError`` (its 400) if invalid."""
    return _read(body, profile, None)[0]


class RequestReader(IncrementalReader[_Accepted]):
    """``request_from_body`` for a fake serving one conversation after another: an input
    that repeats the last accepted one only has its new items read and checked."""

    def __init__(self, *, profile: Strictness = "default") -> None:
        super().__init__(_read, profile=profile)
