"""Responses API native dynamic tools, both directions: the ``tool_search`` tool,
``tool_search_call`` / ``tool_search_output`` items (run by OpenAI, ``execution:
"server"``, or by the client, ``execution: "client"``), the ``additional_tools`` input
item, and the ``namespace`` of function calls.

Neutral forms: a hosted search is a ``HostedSearch`` on the assistant message (its
``found`` names; the definitions are the request's); a client search is an ordinary
``ToolCall`` of the client search tool answered by a ``ToolMessage`` whose ``tools`` are
the found definitions; an ``additional_tools`` item is a ``SystemMessage`` with ``tools``.
Keys this module does not map are kept in ``provider_data`` / ``provider_extra`` so a
recording encodes back unchanged.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness.messages import HostedSearch, Message, SystemMessage, ToolCall, ToolMessage
from harness.tools._definitions import ToolDefinition

__all__ = [
    "CALL_KEYS",
    "DEFAULT_SEARCH_NAME",
    "OUTPUT_KEYS",
    "additional_tools_item",
    "arguments_object",
    "hosted_search_items",
    "output_id",
    "search_from_call",
    "search_tool_from_param",
    "search_tool_param",
    "search_with_output",
]

NAME = "openai-responses"
DEFAULT_SEARCH_NAME = "tool_search"
"""The neutral name of the Responses ``tool_search`` tool (the API gives it none)."""

CALL_KEYS = frozenset({"type", "id", "execution", "call_id", "status", "arguments"})
"""The ``tool_search_call`` keys this module maps."""
OUTPUT_KEYS = frozenset({"type", "id", "execution", "call_id", "status", "tools"})
"""The ``tool_search_output`` keys this module maps."""
_SEARCH_TOOL_KEYS = frozenset({"type", "execution", "description", "parameters"})


def search_tool_param(definition: ToolDefinition) -> dict[str, Any]:
    """The ``tools`` entry of a tool-search tool: ``{"type": "tool_search"}`` for a search
    OpenAI runs, with ``execution: "client"`` (and the tool's description and parameters)
    for one the client answers."""
    tool: dict[str, Any] = {"type": "tool_search"}
    if definition.search == "client":
        tool["execution"] = "client"
        if definition.description is not None:
            tool["description"] = definition.description
        tool["parameters"] = definition.parameters
    tool.update(definition.extra_for(NAME))
    return tool


def search_tool_from_param(entry: Mapping[str, Any]) -> ToolDefinition:
    """The ``ToolDefinition`` of a ``tool_search`` entry (named ``tool_search``)."""
    client = entry.get("execution") == "client"
    description = entry.get("description")
    parameters = entry.get("parameters")
    extra = {k: v for k, v in entry.items() if k not in _SEARCH_TOOL_KEYS}
    if entry.get("execution") not in (None, "client"):
        extra["execution"] = entry["execution"]
    definition = ToolDefinition(
        name=DEFAULT_SEARCH_NAME,
        description=description if isinstance(description, str) and client else None,
        search="client" if client else "hosted",
        provider_extra={NAME: extra} if extra else {},
    )
    if client and isinstance(parameters, Mapping):
        definition = dataclasses.replace(definition, parameters=parameters)
    return definition


def arguments_object(arguments: str) -> Any:
    """A search's arguments as the object the API carries (the text itself if not JSON)."""
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments


def _arguments_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value if value is not None else {})


def output_id(search_id: str) -> str:
    """The ``tool_search_output`` id the fake pairs with a call id (``tsc_x`` -> ``tso_x``)."""
    return "tso_" + search_id.removeprefix("tsc_")


def search_from_call(item: Mapping[str, Any], tool: str = DEFAULT_SEARCH_NAME) -> HostedSearch:
    """A hosted ``tool_search_call`` item (without its output yet)."""
    extra = {k: v for k, v in item.items() if k not in CALL_KEYS}
    if item.get("status") not in (None, "completed"):
        extra["status"] = item["status"]
    search_id = item.get("id")
    return HostedSearch(
        id=str(search_id) if search_id is not None else "",
        tool=tool,
        arguments=_arguments_text(item.get("arguments")),
        complete=False,
        provider_data={NAME: {"call": extra}} if extra else {},
    )


def search_with_output(search: HostedSearch | None, item: Mapping[str, Any]) -> HostedSearch:
    """``search`` completed by its ``tool_search_output`` item (a result-only search when
    its call came in an earlier response); a namespace it found reveals its functions."""
    found = tuple(_found_names(item.get("tools") or ()))
    extra = {k: v for k, v in item.items() if k not in OUTPUT_KEYS}
    item_id = item.get("id")
    base = search or HostedSearch(id="", complete=False)
    if item_id is not None and item_id != output_id(base.id):
        extra["id"] = item_id
    data = dict(base.provider_data)
    if extra:
        data[NAME] = {**data.get(NAME, {}), "output": extra}
    return base.model_copy(update={"found": found, "complete": True, "provider_data": data})


def _found_names(tools: Any) -> list[str]:
    """The function names a search output's ``tools`` reveal (namespaces flattened)."""
    names: list[str] = []
    for tool in tools:
        if not isinstance(tool, Mapping):
            continue
        if tool.get("type") == "namespace" and isinstance(tool.get("tools"), list):
            names.extend(_found_names(tool["tools"]))
        elif isinstance(tool.get("name"), str):
            names.append(str(tool["name"]))
    return names


def hosted_search_items(
    search: HostedSearch, definition_of: Callable[[str], ToolDefinition]
) -> list[dict[str, Any]]:
    """The ``tool_search_call`` and ``tool_search_output`` items of a hosted search (the
    found tools' definitions from ``definition_of``, a namespace's functions grouped)."""
    from harness.formats.openai_responses._request import tool_params

    data = search.provider_data.get(NAME, {})
    items: list[dict[str, Any]] = []
    if search.tool:
        call: dict[str, Any] = {
            "type": "tool_search_call",
            "id": search.id,
            "execution": "server",
            "call_id": None,
            "status": "completed",
            "arguments": arguments_object(search.arguments),
        }
        call.update(data.get("call", {}))
        items.append(call)
    if search.complete:
        output: dict[str, Any] = {
            "type": "tool_search_output",
            "id": output_id(search.id),
            "execution": "server",
            "call_id": None,
            "status": "completed",
            "tools": tool_params(definition_of(name) for name in search.found),
        }
        output.update(data.get("output", {}))
        items.append(output)
    return items


def client_search_call_item(call: ToolCall) -> dict[str, Any]:
    """The ``tool_search_call`` item of a client search call."""
    return {
        "type": "tool_search_call",
        "call_id": call.id,
        "execution": "client",
        "status": "completed",
        "arguments": arguments_object(call.arguments),
    }


def client_search_output_item(message: ToolMessage) -> dict[str, Any]:
    """The ``tool_search_output`` item answering a client search call."""
    from harness.formats.openai_responses._request import tool_param

    return {
        "type": "tool_search_output",
        "call_id": message.tool_call_id,
        "execution": "client",
        "status": "completed",
        "tools": [tool_param(d) for d in message.tools],
    }


def additional_tools_item(definitions: Sequence[ToolDefinition]) -> dict[str, Any]:
    """The ``additional_tools`` input item adding ``definitions`` to the conversation."""
    from harness.formats.openai_responses._request import tool_params

    return {"type": "additional_tools", "role": "developer", "tools": tool_params(definitions)}


def definitions_of(entries: Any, read: Callable[..., ToolDefinition]) -> tuple[ToolDefinition, ...]:
    """The function definitions of a ``tools`` list in an item (namespaces flattened)."""
    out: list[ToolDefinition] = []
    for index, entry in enumerate(entries or ()):
        if not isinstance(entry, Mapping):
            continue
        if entry.get("type") == "namespace":
            namespace = entry.get("name")
            for member in entry.get("tools") or ():
                if isinstance(member, Mapping):
                    out.append(read(member, index, namespace=namespace if namespace else None))
        elif entry.get("type", "function") == "function":
            out.append(read(entry, index))
    return tuple(out)


def messages_with_addition(
    messages: list[Message], definitions: tuple[ToolDefinition, ...]
) -> None:
    """Append the ``SystemMessage`` of an ``additional_tools`` item."""
    messages.append(SystemMessage(content="", tools=definitions))
