"""Anthropic Messages requests, both directions: neutral -> body (the adapter) and body ->
neutral (the fake, after ``validate_body``; recordings, leniently).

System messages become ``system``; tool results become ``tool_result`` blocks of a user
turn; consecutive turns of one role are merged (the API alternates roles). Plain JSON
in and out: no SDK needed.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from harness._errors import UsageError
from harness.formats._history import TurnKey, message_key
from harness.formats._json import arguments_object
from harness.formats._native_rules import NativeRules, added_names, native_problem, offered_names
from harness.formats._server import Strictness, WireRequest
from harness.formats.anthropic_messages._native import (
    added_tools,
    addition_blocks,
    hosted_search_blocks,
    is_search_tool,
    reference_names,
    search_tool_from_param,
    search_tool_param,
    searches_of,
)
from harness.formats.anthropic_messages._validation import MessagesWireError, validate_body
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
    "DEFAULT_MAX_TOKENS",
    "HISTORY_KEY",
    "NAME",
    "RequestReader",
    "ThinkingKey",
    "blocks_of",
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

NAME = "anthropic-messages"
"""The format's name (``provider_extra`` key, cassette codec name)."""
HISTORY_KEY = "messages"
"""The body field that holds the growing history."""
DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` when neither the adapter nor the request sets one (the API requires it)."""

_KNOWN = frozenset({"model", "messages", "system", "tools", "tool_choice", "stream", "max_tokens"})
_TOOL_KEYS = frozenset(
    {"type", "name", "description", "input_schema", "strict", "defer_loading", "cache_control"}
)

_RULES = NativeRules(search_required=False, namespaces=False)

ThinkingKey = TurnKey
"""Identifies an assistant turn in later histories (``message_key``)."""


# -- tools ---------------------------------------------------------------------------------


def tool_param(definition: ToolDefinition) -> dict[str, Any]:
    """The ``tools`` entry of ``definition`` (a custom tool: ``name``, ``description``,
    ``input_schema``; ``strict``, ``defer_loading`` and ``cache_control`` when set).
    Messages has no tool namespaces (a ``UsageError`` says so). A tool-search tool is
    the API's ``tool_search_tool_regex_20251119`` / ``_bm25_20251119`` entry; a client
    search is an ordinary custom tool (its results carry ``tool_reference`` blocks)."""
    if definition.search in ("regex", "bm25"):
        return search_tool_param(definition)
    if definition.search == "hosted":
        raise UsageError(
            f"tool {definition.name!r} asks for a hosted tool search, which Anthropic runs "
            "as search='regex' or search='bm25'; use one of those (or 'client')"
        )
    if definition.namespace is not None:
        raise UsageError(
            f"tool {definition.name!r} has namespace={definition.namespace!r}, which the "
            "Anthropic Messages API cannot send; offer the tool without a namespace"
        )
    tool: dict[str, Any] = {"name": definition.name}
    if definition.description:
        tool["description"] = definition.description
    tool["input_schema"] = (
        dict(definition.parameters)
        if definition.parameters
        else {
            "type": "object",
            "properties": {},
        }
    )
    if definition.strict is not None:
        tool["strict"] = definition.strict
    if definition.defer_loading:
        tool["defer_loading"] = True
    if definition.cache_control is not None:
        tool["cache_control"] = dict(definition.cache_control)
    tool.update(definition.extra_for(NAME))
    return tool


def tool_from_param(entry: Mapping[str, Any]) -> ToolDefinition:
    """The ``ToolDefinition`` of a custom tool entry (with a ``name``)."""
    description = entry.get("description")
    strict = entry.get("strict")
    cache = entry.get("cache_control")
    extra = {k: v for k, v in entry.items() if k not in _TOOL_KEYS}
    schema = entry.get("input_schema")
    return ToolDefinition(
        name=str(entry["name"]),
        description=description if isinstance(description, str) and description else None,
        **({"parameters": schema} if schema else {}),
        strict=strict if isinstance(strict, bool) else None,
        defer_loading=entry.get("defer_loading") is True,
        cache_control=cache if isinstance(cache, Mapping) else None,
        provider_extra={NAME: extra} if extra else {},
    )


def _tools_from_body(body: Mapping[str, Any]) -> list[ToolDefinition]:
    tools = []
    for entry in body.get("tools") or ():
        if not isinstance(entry, Mapping):
            continue
        mode = is_search_tool(entry)
        if mode is not None:
            tools.append(search_tool_from_param(entry, mode))
        elif entry.get("type", "custom") in ("custom", None) and "name" in entry:
            tools.append(tool_from_param(entry))
    return tools  # other server tools (web search, bash, ...) are the API's


# -- tool choice ---------------------------------------------------------------------------


def tool_choice_param(
    choice: ToolChoice | None, *, parallel_tool_calls: bool | None = None
) -> dict[str, Any] | None:
    """``tool_choice`` for ``choice``, with ``disable_parallel_tool_use`` when parallel
    calls are off (``None`` when neither is set). Messages has no allowed subset."""
    out: dict[str, Any] | None
    if choice is None:
        out = None
    elif NAME in choice.provider_extra:
        out = dict(choice.provider_extra[NAME])
    elif choice.allowed is not None:
        raise UsageError(
            f"tool_choice allows only {list(choice.allowed)!r}, which the Anthropic Messages "
            "API cannot say; offer only those tools, or use ToolChoice.auto()/required()"
        )
    elif choice.mode == "tool":
        out = {"type": "tool", "name": choice.name}
    else:
        out = {"type": {"auto": "auto", "required": "any", "none": "none"}[choice.mode]}
    if parallel_tool_calls is False:
        out = out or {"type": "auto"}
        if out.get("type") != "none":
            out["disable_parallel_tool_use"] = True
    return out


def tool_choice_from_param(value: Any) -> ToolChoice | None:
    """The ``ToolChoice`` of a ``tool_choice`` object (``disable_parallel_tool_use`` is the
    request's ``parallel_tool_calls``, read with the settings)."""
    if not isinstance(value, Mapping):
        return None
    kind = value.get("type")
    if kind == "tool" and isinstance(value.get("name"), str) and value["name"]:
        return ToolChoice.tool(value["name"])
    neutral = {"auto": "auto", "any": "required", "none": "none"}.get(str(kind))
    if neutral is not None:
        return ToolChoice.of(neutral)
    rest = {k: v for k, v in value.items() if k != "disable_parallel_tool_use"}
    return ToolChoice(mode="tool", provider_extra={NAME: rest})


# -- the request body: neutral -> body -----------------------------------------------------


def tool_use_block(call: ToolCall) -> dict[str, Any]:
    """The ``tool_use`` block of a call."""
    return {
        "type": "tool_use",
        "id": call.id,
        "name": call.name,
        "input": arguments_object(call.arguments),
    }


def _assistant_blocks(
    message: AssistantMessage, thinking: Mapping[ThinkingKey, Sequence[Mapping[str, Any]]]
) -> list[dict[str, Any]]:
    blocks = [dict(b) for b in thinking.get(message_key(message), ())]
    for search in message.searches:
        blocks.extend(hosted_search_blocks(search))
    text = message.content if message.content else message.refusal
    if text:
        blocks.append({"type": "text", "text": text})
    for call in message.tool_calls:
        blocks.append(tool_use_block(call))
    if not blocks:
        blocks.append({"type": "text", "text": message.content or ""})
    return blocks


def _append(out: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    """Consecutive turns of one role become one message (the API alternates roles)."""
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(blocks)
    else:
        out.append({"role": role, "content": blocks})


def _messages(
    messages: Iterable[Message], thinking: Mapping[ThinkingKey, Sequence[Mapping[str, Any]]]
) -> tuple[list[str], list[dict[str, Any]]]:
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage) and message.tools:
            # a mid-conversation addition: a system message in ``messages``, which keeps
            # the earlier prefix (and its prompt cache) unchanged
            blocks = addition_blocks(message.tools)
            if message.content:
                blocks.insert(0, {"type": "text", "text": message.content})
            out.append({"role": "system", "content": blocks})
        elif isinstance(message, SystemMessage):
            system.append(message.content)
        elif isinstance(message, UserMessage):
            _append(out, "user", [{"type": "text", "text": message.content}])
        elif isinstance(message, ToolMessage):
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
            if message.tools:  # a client search's finds: tool_reference blocks
                block["content"] = (
                    [{"type": "text", "text": message.content}] if message.content else []
                ) + [{"type": "tool_reference", "tool_name": d.name} for d in message.tools]
            else:
                block["content"] = message.content
            if message.is_error:
                block["is_error"] = True
            _append(out, "user", [block])
        else:
            _append(out, "assistant", _assistant_blocks(message, thinking))
    for entry in out:  # a single text block reads better (and matches most SDK users) as a string
        blocks = entry["content"]
        if len(blocks) == 1 and blocks[0]["type"] == "text" and set(blocks[0]) == {"type", "text"}:
            entry["content"] = blocks[0]["text"]
    return system, out


def _added(messages: Iterable[Message]) -> list[ToolDefinition]:
    """Tools that ``tool_addition`` blocks reference (the API needs them in ``tools``)."""
    return [t for m in messages if isinstance(m, SystemMessage) for t in m.tools]


def _declared(request: ModelRequest) -> list[ToolDefinition]:
    """``request.tools`` and, deferred, the tools its additions name that it does not."""
    tools = list(request.tools)
    added = (
        _added(request.messages)
        if any(isinstance(m, SystemMessage) and m.tools for m in request.messages)
        else []
    )
    if added:
        names = {t.name for t in tools}
        for tool in added:
            if tool.name not in names:
                names.add(tool.name)
                tools.append(dataclasses.replace(tool, defer_loading=True))
    return tools


def request_body(
    request: ModelRequest,
    *,
    model: str,
    stream: bool = False,
    defaults: Mapping[str, Any] | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    thinking: Mapping[ThinkingKey, Sequence[Mapping[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The body of ``POST /v1/messages`` (= ``client.messages.create`` keyword arguments).

    ``tools`` and ``tool_choice`` are left out when no tool is offered. ``defaults`` apply
    first, the request's ``settings.extra`` overrides them; ``thinking`` maps assistant
    turns (``message_key``) to the thinking blocks to send back unchanged.
    """
    system, messages = _messages(request.messages, thinking or {})
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages}
    if system:
        body["system"] = "\n\n".join(system)
    if request.tools or _added(request.messages):
        body["tools"] = [tool_param(t) for t in _declared(request)]
        settings = request.settings
        choice = tool_choice_param(
            settings.tool_choice, parallel_tool_calls=settings.parallel_tool_calls
        )
        if choice is not None:
            body["tool_choice"] = choice
    body.update(defaults or {})
    body.update(request.settings.extra)
    if stream:
        body["stream"] = True
    return body


# -- the request body: body -> neutral -----------------------------------------------------


def text_of(content: Any) -> str:
    """Text of a content value: a string, or the text of a list of blocks (other blocks
    as ``[type]`` markers)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, Mapping):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") not in (None, "text"):
                    parts.append(f"[{block['type']}]")
        return "\n".join(parts)
    return "" if content is None else str(content)


def blocks_of(content: Any) -> list[Mapping[str, Any]]:
    """The blocks of a content value (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or () if isinstance(b, Mapping)]


def _read_message(
    data: Mapping[str, Any], resolve: Callable[[str], ToolDefinition]
) -> list[Message]:
    blocks = blocks_of(data.get("content"))
    if data.get("role") == "assistant":
        texts = [b["text"] for b in blocks if b.get("type") == "text" and "text" in b]
        calls = tuple(
            ToolCall(
                id=str(b.get("id")),
                name=str(b.get("name")),
                arguments=json.dumps(b.get("input") or {}),
            )
            for b in blocks
            if b.get("type") == "tool_use"
        )
        return [
            AssistantMessage(
                content="".join(texts) if texts else None,
                tool_calls=calls,
                searches=searches_of(blocks),
            )
        ]
    if data.get("role") == "system":
        text = "\n".join(str(b["text"]) for b in blocks if b.get("type") == "text" and "text" in b)
        return [SystemMessage(content=text, tools=added_tools(blocks, resolve))]
    out: list[Message] = []
    texts = []
    for block in blocks:
        if block.get("type") == "tool_result":
            content = block.get("content")
            references = reference_names(blocks_of(content)) if isinstance(content, list) else ()
            if references:
                content = [b for b in blocks_of(content) if b.get("type") != "tool_reference"]
            out.append(
                ToolMessage(
                    tool_call_id=str(block.get("tool_use_id")),
                    content=text_of(content),
                    is_error=block.get("is_error") is True,
                    tools=tuple(resolve(n) for n in references),
                )
            )
        else:
            texts.append(text_of([block]))
    if texts:
        out.append(UserMessage(content="\n".join(texts)))
    return out


def _settings(body: Mapping[str, Any]) -> ModelSettings:
    choice = body.get("tool_choice")
    parallel = (
        False
        if isinstance(choice, Mapping) and choice.get("disable_parallel_tool_use") is True
        else None
    )
    return ModelSettings(
        tool_choice=tool_choice_from_param(choice),
        parallel_tool_calls=parallel,
        extra={k: v for k, v in body.items() if k not in _KNOWN},
    )


def read_request(body: Mapping[str, Any]) -> ModelRequest:
    """The neutral request of a Messages body, leniently (recordings: no API checks).

    Thinking and other non-text blocks of user turns are kept as ``[type]`` markers,
    thinking blocks of assistant turns are dropped; server tools are left out.
    """
    messages: list[Message] = []
    system = body.get("system")
    if system:
        messages.append(SystemMessage(content=text_of(system)))
    tools = tuple(_tools_from_body(body))
    by_name = {t.name: t for t in tools}

    def resolve(name: str) -> ToolDefinition:
        return by_name.get(name) or ToolDefinition(name=name)

    for data in body.get("messages") or ():
        if isinstance(data, Mapping):
            messages.extend(_read_message(data, resolve))
    return ModelRequest(
        messages=messages,
        tools=tools,
        tool_names=offered_names(tools, added_names(messages)),  # inline additions too
        settings=_settings(body),
        iteration=1 + sum(1 for m in messages if isinstance(m, AssistantMessage)),
    )


def request_from_body(body: Any, *, profile: Strictness = "default") -> WireRequest:
    """Read a ``POST /v1/messages`` body like the API: ``MessagesWireError`` (its 400, in
    Anthropic's error shape) if the API would refuse it."""
    if not isinstance(body, Mapping):
        raise MessagesWireError(
            400, "There was an error parsing the body of your request: invalid JSON"
        )
    validate_body(body, profile=profile)
    request = read_request(body)
    problem = native_problem(request, _RULES)
    if problem is not None:
        raise MessagesWireError(400, problem.message)
    return WireRequest(
        model=str(body["model"]),
        request=request,
        stream=bool(body.get("stream")),
        body=body,
    )


class RequestReader:
    """The fake's reader of Messages bodies (the same interface as the other formats';
    Messages bodies are read whole)."""

    def __init__(self, *, profile: Strictness = "default") -> None:
        self.profile: Strictness = profile

    def read(self, body: Any) -> WireRequest:
        """The request of ``body``; ``MessagesWireError`` if the API would refuse it."""
        return request_from_body(body, profile=self.profile)
