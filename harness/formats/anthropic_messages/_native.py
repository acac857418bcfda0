"""Anthropic Messages native dynamic tools, both directions: the tool-search tools
(``tool_search_tool_regex_20251119``, ``tool_search_tool_bm25_20251119``), the
``server_tool_use`` block of a search the API runs and its ``tool_search_tool_result``,
``tool_reference`` blocks in a ``tool_result`` (a client search's finds), and
mid-conversation additions: a ``role: "system"`` message holding ``tool_addition`` blocks.

Neutral forms: a search tool is a ``ToolDefinition`` with ``search="regex"`` or
``"bm25"`` (a client search is an ordinary custom tool); a hosted search is a
``HostedSearch`` on the assistant message; references are ``ToolMessage.tools``; an
addition is a ``SystemMessage`` with ``tools``. Keys this module does not map (``caller``,
say) are kept in ``provider_data`` so a recording encodes back unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness.messages import HostedSearch
from harness.tools._definitions import ToolDefinition

__all__ = [
    "BETAS",
    "SEARCH_NAMES",
    "SEARCH_TYPES",
    "addition_blocks",
    "hosted_search_blocks",
    "is_search_tool",
    "reference_names",
    "required_betas",
    "search_tool_param",
    "searches_of",
]

NAME = "anthropic-messages"
SEARCH_TYPES: Mapping[str, str] = {
    "regex": "tool_search_tool_regex_20251119",
    "bm25": "tool_search_tool_bm25_20251119",
}
"""The ``type`` of each tool-search tool the API runs (the neutral ``search`` mode ->)."""
SEARCH_NAMES: Mapping[str, str] = {
    "regex": "tool_search_tool_regex",
    "bm25": "tool_search_tool_bm25",
}
"""The ``name`` of each tool-search tool the API runs (the neutral ``search`` mode ->)."""
BETAS: Mapping[str, str] = {
    "tool_addition": "mid-conversation-tool-changes-2026-07-01",
}
"""The ``anthropic-beta`` header value each construct needs (tool search and
``tool_reference`` are generally available)."""
_USE_KEYS = frozenset({"type", "id", "name", "input"})
_RESULT_KEYS = frozenset({"type", "tool_use_id", "content"})


def is_search_tool(entry: Mapping[str, Any]) -> str | None:
    """The neutral search mode of a ``tools`` entry, or ``None`` for another tool."""
    kind = entry.get("type")
    if isinstance(kind, str):
        for mode in ("regex", "bm25"):
            if kind.startswith(f"tool_search_tool_{mode}"):
                return mode
    return None


def search_tool_param(definition: ToolDefinition) -> dict[str, Any]:
    """The ``tools`` entry of a search the API runs (``search`` ``regex`` or ``bm25``)."""
    mode = str(definition.search)
    tool: dict[str, Any] = {"type": SEARCH_TYPES[mode], "name": definition.name}
    tool.update(definition.extra_for(NAME))
    return tool


def search_tool_from_param(entry: Mapping[str, Any], mode: str) -> ToolDefinition:
    """The ``ToolDefinition`` of a tool-search tool entry (its dated ``type`` kept)."""
    extra = {k: v for k, v in entry.items() if k not in ("name",)}
    if extra.get("type") == SEARCH_TYPES.get(mode):
        del extra["type"]
    name = entry.get("name")
    return ToolDefinition(
        name=str(name) if isinstance(name, str) and name else SEARCH_NAMES[mode],
        search="regex" if mode == "regex" else "bm25",
        provider_extra={NAME: extra} if extra else {},
    )


def hosted_search_blocks(search: HostedSearch) -> list[dict[str, Any]]:
    """The ``server_tool_use`` and ``tool_search_tool_result`` blocks of a search."""
    data = search.provider_data.get(NAME, {})
    blocks: list[dict[str, Any]] = []
    if search.tool:
        try:
            arguments = json.loads(search.arguments) if search.arguments.strip() else {}
        except ValueError:
            arguments = {"_raw_arguments": search.arguments}
        use: dict[str, Any] = {
            "type": "server_tool_use",
            "id": search.id,
            "name": search.tool,
            "input": arguments,
        }
        use.update(data.get("use", {}))
        blocks.append(use)
    if search.complete:
        content = data.get("content") or {
            "type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": n} for n in search.found],
        }
        result: dict[str, Any] = {
            "type": "tool_search_tool_result",
            "tool_use_id": search.id,
            "content": content,
        }
        result.update(data.get("result", {}))
        blocks.append(result)
    return blocks


def searches_of(blocks: Sequence[Mapping[str, Any]]) -> tuple[HostedSearch, ...]:
    """The hosted searches of an assistant turn's blocks: each ``server_tool_use`` of a
    tool search with its result (a result whose call came in an earlier response is a
    result-only search; a call whose result is still to come is incomplete)."""
    searches: dict[str, HostedSearch] = {}
    for block in blocks:
        kind = block.get("type")
        if kind == "server_tool_use" and str(block.get("name", "")).startswith("tool_search"):
            extra = {k: v for k, v in block.items() if k not in _USE_KEYS}
            search_id = str(block.get("id"))
            searches[search_id] = HostedSearch(
                id=search_id,
                tool=str(block.get("name")),
                arguments=json.dumps(block.get("input") or {}),
                complete=False,
                provider_data={NAME: {"use": extra}} if extra else {},
            )
        elif kind == "tool_search_tool_result":
            search_id = str(block.get("tool_use_id"))
            base = searches.get(search_id) or HostedSearch(id=search_id, complete=False)
            content = block.get("content")
            found: tuple[str, ...] = ()
            data = dict(base.provider_data.get(NAME, {}))
            if isinstance(content, Mapping) and content.get("type") == (
                "tool_search_tool_search_result"
            ):
                found = reference_names(content.get("tool_references"))
                if set(content) != {"type", "tool_references"} or any(
                    set(r) != {"type", "tool_name"} for r in content.get("tool_references") or ()
                ):
                    data["content"] = dict(content)
            elif content is not None:  # an error result: kept as it is
                data["content"] = content
            extra = {k: v for k, v in block.items() if k not in _RESULT_KEYS}
            if extra:
                data["result"] = extra
            searches[search_id] = base.model_copy(
                update={
                    "found": found,
                    "complete": True,
                    "provider_data": {**base.provider_data, NAME: data} if data else {},
                }
            )
    return tuple(searches.values())


def reference_names(references: Any) -> tuple[str, ...]:
    """The tool names of a list of ``tool_reference`` blocks."""
    return tuple(
        str(r["tool_name"])
        for r in references or ()
        if isinstance(r, Mapping) and r.get("type") == "tool_reference" and "tool_name" in r
    )


def addition_blocks(definitions: Sequence[ToolDefinition]) -> list[dict[str, Any]]:
    """The ``tool_addition`` blocks of a system message adding ``definitions``."""
    return [
        {"type": "tool_addition", "tool": {"type": "tool_reference", "name": d.name}}
        for d in definitions
    ]


def added_tools(
    blocks: Sequence[Mapping[str, Any]], resolve: Callable[[str], ToolDefinition]
) -> tuple[ToolDefinition, ...]:
    """The tools ``tool_addition`` blocks add (by reference, or an inline definition)."""
    from harness.formats.anthropic_messages._request import tool_from_param

    out: list[ToolDefinition] = []
    for block in blocks:
        if block.get("type") != "tool_addition":
            continue
        tool = block.get("tool")
        if not isinstance(tool, Mapping):
            continue
        if tool.get("type") == "tool_definition" and isinstance(tool.get("definition"), Mapping):
            out.append(tool_from_param(tool["definition"]))
        elif isinstance(tool.get("name"), str):
            out.append(resolve(tool["name"]))
    return tuple(out)


def required_betas(body: Mapping[str, Any]) -> list[str]:
    """The ``anthropic-beta`` values a request body needs (a ``tool_addition`` block)."""
    for message in body.get("messages") or ():
        if isinstance(message, Mapping) and message.get("role") == "system":
            return [BETAS["tool_addition"]]
    return []
