"""Bedrock Converse requests, both directions: neutral -> the ``converse`` call's keyword
arguments (the adapter) and a body -> neutral (the fake, after ``validate_body``;
recordings, leniently).

System messages become ``system`` text blocks; tool results become ``toolResult``
blocks of a user turn; consecutive turns of one role are merged (the API alternates
roles). Tools go in ``toolConfig.tools`` as ``toolSpec`` entries, a tool's
``cache_control`` as a ``cachePoint`` entry after it. Converse has no tool namespaces,
no tool search and no allowed subset (a ``UsageError`` says so), no ``none`` choice
once the history holds tool blocks, and no switch for parallel calls (left out).
Deferred tools are sent once the history revealed them, as in Chat Completions.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness._errors import UsageError
from harness.formats._history import TurnKey, message_key
from harness.formats._sent_tools import sent_tools
from harness.formats._server import IncrementalReader, Strictness, WireRequest
from harness.formats.bedrock_converse._validation import (
    Checked,
    ConverseWireError,
    validate_from,
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
    "ReasoningKey",
    "RequestReader",
    "cache_point",
    "message_key",
    "read_request",
    "request_body",
    "request_from_body",
    "text_of",
    "tool_choice_from_param",
    "tool_choice_param",
    "tool_from_param",
    "tool_param",
    "tool_use_block",
]

NAME = "bedrock-converse"
"""The format's name (``provider_extra`` key, cassette codec name)."""
HISTORY_KEY = "messages"
"""The body field that holds the growing history."""

_KNOWN = frozenset({"modelId", "messages", "system", "toolConfig"})
_SPEC_KEYS = frozenset({"name", "description", "inputSchema"})
_EMPTY_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}

ReasoningKey = TurnKey
"""Identifies an assistant turn in later histories (``message_key``): the turn whose
``reasoningContent`` blocks the adapter sends back."""


def cache_point(hint: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``cachePoint`` block of a neutral cache hint (Anthropic's ``cache_control``:
    its ``ttl`` kept, its ``type`` is Bedrock's only one, ``default``)."""
    point: dict[str, Any] = {"type": "default"}
    if hint and "ttl" in hint:
        point["ttl"] = hint["ttl"]
    return {"cachePoint": point}


def _hint(point: Any) -> dict[str, Any]:
    """The neutral cache hint of a ``cachePoint`` value."""
    hint: dict[str, Any] = {"type": "ephemeral"}
    if isinstance(point, Mapping) and "ttl" in point:
        hint["ttl"] = point["ttl"]
    return hint


# -- tools ---------------------------------------------------------------------------------


def tool_param(definition: ToolDefinition) -> dict[str, Any]:
    """The ``toolConfig.tools`` entry of ``definition``: ``{"toolSpec": {name, description,
    inputSchema: {json}}}``. Converse has no namespaces and no tool search (a
    ``UsageError`` says so); ``strict`` is not sent (no such field); a ``cache_control``
    hint is the ``cachePoint`` entry ``request_body`` puts after it."""
    if definition.namespace is not None or definition.search is not None:
        field = (
            f"namespace={definition.namespace!r}"
            if definition.namespace is not None
            else f"search={definition.search!r}"
        )
        raise UsageError(
            f"tool {definition.name!r} has {field}, which Bedrock Converse cannot send; "
            "offer the tool directly (or use a format that has it)"
        )
    spec: dict[str, Any] = {"name": definition.name}
    if definition.description is not None:
        spec["description"] = definition.description
    spec["inputSchema"] = {"json": dict(definition.parameters)}
    spec.update(definition.extra_for(NAME))
    return {"toolSpec": spec}


def tool_from_param(entry: Mapping[str, Any], cached: Any = None) -> ToolDefinition:
    """The ``ToolDefinition`` of a ``toolSpec`` entry; ``cached`` is the ``cachePoint``
    that followed it, if any."""
    spec = entry["toolSpec"]
    description = spec.get("description")
    schema = spec.get("inputSchema")
    parameters = schema.get("json") if isinstance(schema, Mapping) else None
    extra = {k: v for k, v in spec.items() if k not in _SPEC_KEYS}
    return ToolDefinition(
        name=str(spec["name"]),
        description=description if isinstance(description, str) else None,
        parameters=parameters if isinstance(parameters, Mapping) else _EMPTY_SCHEMA,
        cache_control=_hint(cached) if cached is not None else None,
        provider_extra={NAME: extra} if extra else {},
    )


def _tool_entries(tools: Sequence[ToolDefinition]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for definition in tools:
        entries.append(tool_param(definition))
        if definition.cache_control is not None:
            entries.append(cache_point(definition.cache_control))
    return entries


def tools_from_config(config: Any) -> list[ToolDefinition]:
    """The tools of a ``toolConfig`` (``cachePoint`` entries read as the hint of the tool
    before them; ``systemTool`` and other entries are the API's, left out)."""
    entries = config.get("tools") if isinstance(config, Mapping) else None
    tools: list[ToolDefinition] = []
    pending: Mapping[str, Any] | None = None
    for entry in [*(entries or ()), None]:
        if isinstance(entry, Mapping) and "cachePoint" in entry and pending is not None:
            tools.append(tool_from_param(pending, entry["cachePoint"]))
            pending = None
            continue
        if pending is not None:
            tools.append(tool_from_param(pending))
            pending = None
        spec = entry.get("toolSpec") if isinstance(entry, Mapping) else None
        if isinstance(spec, Mapping) and "name" in spec:
            pending = entry
    return tools


# -- tool choice ---------------------------------------------------------------------------


def tool_choice_param(choice: ToolChoice | None) -> dict[str, Any] | None:
    """``toolConfig.toolChoice`` for ``choice``: ``{"auto": {}}``, ``{"any": {}}`` or
    ``{"tool": {"name": ...}}`` (``None`` when nothing is chosen, or for ``none``, which
    Converse says by sending no ``toolConfig``). Converse has no allowed subset."""
    if choice is None or choice.mode == "none":
        return None
    if NAME in choice.provider_extra:
        return dict(choice.provider_extra[NAME])
    if choice.allowed is not None:
        raise UsageError(
            f"tool_choice allows only {list(choice.allowed)!r}, which Bedrock Converse "
            "cannot say; offer only those tools, or use ToolChoice.auto()/required()"
        )
    if choice.mode == "tool":
        return {"tool": {"name": choice.name}}
    return {"any": {}} if choice.mode == "required" else {"auto": {}}


def tool_choice_from_param(value: Any) -> ToolChoice | None:
    """The ``ToolChoice`` of a ``toolChoice`` union (a member it does not know is kept in
    ``provider_extra``)."""
    if not isinstance(value, Mapping) or len(value) != 1:
        return None
    (member, inner), *_ = value.items()
    if member == "auto":
        return ToolChoice.auto()
    if member == "any":
        return ToolChoice.required()
    if member == "tool" and isinstance(inner, Mapping) and isinstance(inner.get("name"), str):
        return ToolChoice.tool(inner["name"])
    return ToolChoice(mode="tool", provider_extra={NAME: dict(value)})


# -- the request: neutral -> keyword arguments ------------------------------------------


def _input(arguments: str) -> Any:
    """Tool-use ``input`` (a JSON document) from the neutral JSON string; malformed text is
    kept as ``{"_raw_arguments": text}``."""
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {"_raw_arguments": arguments}


def tool_use_block(call: ToolCall) -> dict[str, Any]:
    """The ``toolUse`` block of a call."""
    return {"toolUse": {"toolUseId": call.id, "name": call.name, "input": _input(call.arguments)}}


def _assistant_blocks(
    message: AssistantMessage, reasoning: Mapping[ReasoningKey, Sequence[Mapping[str, Any]]]
) -> list[dict[str, Any]]:
    blocks = [dict(b) for b in reasoning.get(message_key(message), ())]
    text = message.content if message.content else message.refusal
    if text:
        blocks.append({"text": text})
    blocks.extend(tool_use_block(call) for call in message.tool_calls)
    if not blocks:
        blocks.append({"text": message.content or ""})
    return blocks


def _tool_result(message: ToolMessage) -> dict[str, Any]:
    return {
        "toolResult": {
            "toolUseId": message.tool_call_id,
            "content": [{"text": message.content}],
            "status": "error" if message.is_error else "success",
        }
    }


def _append(out: list[dict[str, Any]], role: str, block: list[dict[str, Any]]) -> None:
    """Consecutive turns of one role become one message (the API alternates roles)."""
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(block)
    else:
        out.append({"role": role, "content": block})


def _messages(
    messages: Iterable[Message], reasoning: Mapping[ReasoningKey, Sequence[Mapping[str, Any]]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    system: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            system.append({"text": message.content})
        elif isinstance(message, UserMessage):
            _append(out, "user", [{"text": message.content}])
        elif isinstance(message, ToolMessage):
            _append(out, "user", [_tool_result(message)])
        else:
            _append(out, "assistant", _assistant_blocks(message, reasoning))
    return system, out


def _has_tool_blocks(messages: Sequence[Message]) -> bool:
    return any(
        isinstance(m, ToolMessage) or (isinstance(m, AssistantMessage) and m.tool_calls)
        for m in messages
    )


def _tool_config(request: ModelRequest) -> dict[str, Any] | None:
    choice = request.settings.tool_choice
    tools = sent_tools(request)
    if choice is not None and choice.mode == "none" and tools:
        if _has_tool_blocks(request.messages):
            raise UsageError(
                "tool_choice 'none' cannot be said on Bedrock Converse once the history "
                "holds tool calls: the API has no 'none' choice and needs toolConfig "
                "whenever toolUse or toolResult blocks are sent; use 'auto' there"
            )
        return None  # no toolConfig: the model cannot call a tool
    if not tools:
        return None
    config: dict[str, Any] = {"tools": _tool_entries(tools)}
    chosen = tool_choice_param(choice)
    if chosen is not None:
        config["toolChoice"] = chosen
    return config


def request_body(
    request: ModelRequest,
    *,
    model: str,
    stream: bool = False,
    defaults: Mapping[str, Any] | None = None,
    reasoning: Mapping[ReasoningKey, Sequence[Mapping[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``client.converse`` / ``client.converse_stream`` for
    ``request`` (``modelId`` included; the HTTP body is the rest, ``modelId`` goes in the
    path). ``stream`` chooses the operation, not a field: the same arguments serve both.
    ``defaults`` (``inferenceConfig``, ...) apply first, the request's ``settings.extra``
    overrides them; ``reasoning`` maps assistant turns (``message_key``) to the
    ``reasoningContent`` blocks to send back unchanged."""
    system, messages = _messages(request.messages, reasoning or {})
    body: dict[str, Any] = {"modelId": model, "messages": messages}
    if system:
        body["system"] = system
    config = _tool_config(request)
    if config is not None:
        body["toolConfig"] = config
    body.update(defaults or {})
    body.update(request.settings.extra)
    return body


# -- the request: body -> neutral -----------------------------------------------------------


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def text_of(blocks: Any) -> str:
    """The text of a list of content blocks (``json`` blocks as their JSON text, other
    blocks as ``[kind]`` markers)."""
    if isinstance(blocks, str):
        return blocks
    parts = []
    for block in blocks or ():
        if not isinstance(block, Mapping):
            continue
        if isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif "json" in block:
            parts.append(_json_text(block["json"]))
        elif block and "cachePoint" not in block:
            parts.append(f"[{next(iter(block))}]")
    return "\n".join(parts)


def _call(block: Mapping[str, Any]) -> ToolCall:
    use = block["toolUse"]
    return ToolCall(
        id=str(use.get("toolUseId")),
        name=str(use.get("name")),
        arguments=json.dumps(use["input"]) if "input" in use else "{}",
    )


def _read_message(data: Mapping[str, Any]) -> list[Message]:
    blocks = [b for b in data.get("content") or () if isinstance(b, Mapping)]
    if data.get("role") == "assistant":
        texts = [b["text"] for b in blocks if isinstance(b.get("text"), str)]
        calls = tuple(_call(b) for b in blocks if isinstance(b.get("toolUse"), Mapping))
        return [AssistantMessage(content="".join(texts) if texts else None, tool_calls=calls)]
    out: list[Message] = []
    for block in blocks:
        result = block.get("toolResult")
        if isinstance(result, Mapping):
            call_id = str(result.get("toolUseId"))
            out.append(
                ToolMessage(
                    tool_call_id=call_id,
                    content=text_of(result.get("content")),
                    is_error=result.get("status") == "error",
                )
            )
        elif isinstance(block.get("text"), str):
            out.append(UserMessage(content=block["text"]))
        elif block and "cachePoint" not in block:
            out.append(UserMessage(content=text_of([block])))
    return out


def _settings(body: Mapping[str, Any]) -> ModelSettings:
    config = body.get("toolConfig")
    choice = config.get("toolChoice") if isinstance(config, Mapping) else None
    return ModelSettings(
        tool_choice=tool_choice_from_param(choice),
        extra={k: v for k, v in body.items() if k not in _KNOWN},
    )


def read_request(body: Mapping[str, Any]) -> ModelRequest:
    """The neutral request of a Converse body, leniently (recordings: no API checks).

    ``system`` text blocks become system messages, each user text block a user message,
    each ``toolResult`` a tool message (its ``json`` content as JSON text); reasoning,
    images and documents of user turns are kept as ``[kind]`` markers, ``reasoningContent``
    of assistant turns is left out, and ``cachePoint`` blocks carry no text.
    """
    return _request(body, _history(body.get("messages") or ()))


def _history(raw: Iterable[Any]) -> list[Message]:
    return [m for data in raw if isinstance(data, Mapping) for m in _read_message(data)]


def _request(body: Mapping[str, Any], history: Sequence[Message]) -> ModelRequest:
    """The request of ``body`` whose ``messages`` read as ``history``."""
    messages: list[Message] = []
    system = body.get("system")
    for block in system if isinstance(system, list) else ():
        if isinstance(block, Mapping) and isinstance(block.get("text"), str):
            messages.append(SystemMessage(content=block["text"]))
    tools = tuple(tools_from_config(body.get("toolConfig")))
    messages.extend(history)
    return ModelRequest(
        messages=messages,
        tools=tools,
        tool_names=tuple(t.name for t in tools),
        settings=_settings(body),
        iteration=1 + sum(1 for m in messages if isinstance(m, AssistantMessage)),
    )


def request_from_body(body: Any, *, profile: Strictness = "default") -> WireRequest:
    """Read a Converse request like the API: ``ConverseWireError`` (its 400
    ``ValidationException``) if the API would refuse it. ``body`` is the operation's input:
    the HTTP body, with the ``modelId`` of the path (the fake adds it; the adapter's
    keyword arguments have it)."""
    return _read(body, profile, None)[0]


@dataclasses.dataclass(frozen=True, slots=True)
class _Accepted:
    """The history of the last body the fake accepted: its messages as sent, as read, and
    what the checks knew after them."""

    raw: list[Any]
    history: list[Message]
    checked: Checked


def _repeats(raw: Sequence[Any], accepted: _Accepted | None) -> bool:
    """``raw`` starts with the accepted history (the same decoded objects, or equal)."""
    if accepted is None or len(raw) < len(accepted.raw):
        return False
    return all(a is b or a == b for a, b in zip(accepted.raw, raw, strict=False))


def _read(
    body: Any, profile: Strictness, accepted: _Accepted | None
) -> tuple[WireRequest, _Accepted]:
    """Read and check ``body``, resuming after ``accepted`` when it repeats that history."""
    if not isinstance(body, Mapping):
        raise ConverseWireError(
            400,
            "The request body could not be read: expected a JSON object",
            type="SerializationException",
        )
    raw = body.get("messages")
    known = accepted if isinstance(raw, list) and _repeats(raw, accepted) else None
    start = known.checked if known is not None else Checked()
    checked = validate_from(body, start, profile=profile)[1]
    assert isinstance(raw, list)  # validated
    history = (known.history if known is not None else []) + _history(raw[start.count :])
    wire = WireRequest(
        model=str(body.get("modelId") or ""),
        request=_request(body, history),
        stream=False,
        body=body,
    )
    return wire, _Accepted(raw=list(raw), history=history, checked=checked)


class RequestReader(IncrementalReader[_Accepted]):
    """The fake's reader of Converse bodies: it remembers the last accepted history, so
    that a body repeating it has only its new messages checked and read."""

    def __init__(self, *, profile: Strictness = "default") -> None:
        super().__init__(_read, profile=profile)
