"""MCP tool listings and call results, in harness terms.

``tools/list`` entries become ``Tool`` objects whose schema is the server's input schema
as given; ``CallToolResult``s become ``ToolResult``s: text parts joined for the model,
structured content kept as the Python value, images, audio and resources summarised
in one line each, ``isError`` mapped to an error result.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from harness._secrets import hidden_values, scrub_message
from harness.tools import Tool, ToolResult, is_valid_name, make_name, serialize_for_model
from harness.tools._jsonschema import schema_problems

__all__ = [
    "Listed",
    "NamePolicy",
    "Skipped",
    "model_name",
    "to_result",
    "to_tool",
    "without_collisions",
]

NamePolicy = Literal["keep", "prefix"]
"""``keep``: the model sees the server's tool names (a collision across servers is an
error); ``prefix``: every name becomes ``<server>_<tool>``."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Skipped:
    """A listed tool that cannot be offered, and why."""

    tool: str
    """The name the server gave."""
    problem: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class Listed:
    """One listing of a server: the offerable tools and the ones left out."""

    tools: tuple[Tool, ...]
    skipped: tuple[Skipped, ...]
    signature: Mapping[str, Any]
    """Per model-visible name: what the model sees (to spot changed definitions)."""
    incomplete: str | None = None
    """Why the listing stopped before the server's last page (``None``: it is complete)."""


def without_collisions(tools: list[Tool]) -> tuple[list[Tool], list[Skipped]]:
    """Keep the first tool of each model-visible name; the later ones are left out,
    naming the server's tools that collide (two ``dup`` entries, or ``a.b`` and ``a b``
    under ``names="prefix"``)."""
    kept: dict[str, Tool] = {}
    skipped = []
    for tool in tools:
        first = kept.get(tool.name)
        if first is None:
            kept[tool.name] = tool
            continue
        original = str(tool.metadata.get("mcp_tool"))
        skipped.append(
            Skipped(
                tool=original,
                problem=(
                    f"its model-visible name {tool.name!r} is taken by the server's tool "
                    f"{first.metadata.get('mcp_tool')!r} listed before it; only the first is "
                    "offered. Rename one on the server (or filter= one out)"
                ),
            )
        )
    return list(kept.values()), skipped


def model_name(server: str, tool: str, policy: NamePolicy) -> str:
    """The model-visible name of ``tool`` under ``policy`` (may be invalid under ``keep``)."""
    if policy == "keep":
        return tool
    candidate = f"{server}_{tool}"
    return candidate if is_valid_name(candidate) else make_name(server, tool)


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot be a tool's input schema, or ``None``."""
    if not isinstance(schema, Mapping):
        return f"the input schema is not a JSON object: {schema!r}"
    problems = schema_problems(schema, subject="the input schema")
    if problems:
        return "; ".join(problems)
    if schema.get("type") != "object":
        return f"the input schema must have type 'object' at the root, got {schema.get('type')!r}"
    return None


def to_tool(
    server: str,
    listed: Any,
    policy: NamePolicy,
    handler: Callable[..., Any],
) -> Tool | Skipped:
    """A harness ``Tool`` for an MCP ``Tool`` entry, or why it cannot be one."""
    original = str(listed.name)
    name = model_name(server, original, policy)
    if not is_valid_name(name):
        return Skipped(
            tool=original,
            problem=(
                f"the tool name {original!r} is not a valid model-visible name "
                "(^[a-zA-Z0-9_-]{1,64}$); the tool is not offered. Rename it on the server"
            ),
        )
    problem = schema_problem(listed.input_schema)
    if problem is not None:
        return Skipped(tool=original, problem=f"{problem}; the tool is not offered")
    description = listed.description or getattr(listed, "title", None) or original
    annotations = listed.annotations.model_dump(exclude_none=True) if listed.annotations else {}
    return Tool.from_schema(
        name,
        description,
        dict(listed.input_schema),
        handler,
        metadata={
            "mcp_server": server,
            "mcp_tool": original,
            "mcp_annotations": annotations,
            "mcp_output_schema": listed.output_schema,
        },
    )


def _size(data: str) -> str:
    try:
        return f"{len(base64.b64decode(data, validate=True))} bytes"
    except (binascii.Error, ValueError):
        return "undecodable data"


def _summary(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, {_size(block.data)}]"
    if kind == "resource_link":
        label = f" ({block.name})" if getattr(block, "name", None) else ""
        return f"[resource link: {block.uri}{label}]"
    if kind == "resource":
        inner = block.resource
        text = getattr(inner, "text", None)
        if isinstance(text, str):
            return f"[resource {inner.uri}]\n{text}"
        mime = getattr(inner, "mime_type", None) or "application/octet-stream"
        return f"[resource {inner.uri}: {mime}, {_size(getattr(inner, 'blob', ''))}]"
    return f"[{kind or type(block).__name__} content]"


def to_result(server: str, tool: str, result: Any, *, hidden: Iterable[Any] = ()) -> ToolResult:
    """The harness result of an MCP ``CallToolResult`` for ``tool`` on ``server``.

    An error's text is scrubbed like a tool's exception message: known secrets and the
    ``hidden`` values (the call's context values), in any quoted or escaped form, and
    credentials in URLs, become ``[hidden]``.
    """
    parts = [_summary(block) for block in result.content]
    text = "\n".join(parts)
    structured = result.structured_content
    if result.is_error:
        message = text or (serialize_for_model(structured) if structured is not None else "")
        return ToolResult.error(
            scrub_message(
                f"MCP tool {tool!r} on server {server!r} reported an error: "
                f"{message or '(no details)'}",
                hidden_values(hidden),
            ),
            kind="mcp_error",
        )
    if structured is not None:
        return ToolResult(content=text or serialize_for_model(structured), value=structured)
    return ToolResult(content=text, value=text)
