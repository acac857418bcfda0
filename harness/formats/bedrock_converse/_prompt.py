"""Bedrock Converse requests as the prompt cache sees them (``harness.formats._prompt``).

The order is the model's: ``toolConfig.tools``, then ``system``, then the tool choice,
then the content blocks of ``messages`` (Bedrock renders a Claude model's request as the
Messages API does). A ``cachePoint`` block (in the tools, the system blocks or a
message's content) is a breakpoint after the piece before it and no piece itself;
Converse has no automatic caching, so only those marks are breakpoints. A deferred tool
is not sent before the history reveals it, so it is not part of the prefix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.formats._prompt import PromptPiece, PromptSection, piece_text
from harness.formats.bedrock_converse._request import (
    _messages,
    _tool_entries,
    tool_choice_param,
)
from harness.loop import ModelSettings
from harness.messages import Message
from harness.tools._definitions import ToolDefinition

__all__ = [
    "SYSTEM_FIRST",
    "prompt_choice",
    "prompt_message",
    "prompt_pieces",
    "prompt_tools",
]

SYSTEM_FIRST = True
"""System messages are rendered before the conversation wherever they are in the history
(the ``system`` field)."""


def _pieces(
    section: PromptSection, blocks: Sequence[Any], *, role: str | None = None
) -> list[PromptPiece]:
    """A list of blocks as pieces, each ``cachePoint`` marking the piece before it."""
    out: list[PromptPiece] = []
    for block in blocks:
        if isinstance(block, Mapping) and "cachePoint" in block:
            if out:
                last = out[-1]
                out[-1] = PromptPiece(section=last.section, text=last.text, breakpoint=True)
            continue
        out.append(
            PromptPiece(section=section, text=piece_text(block if role is None else [role, block]))
        )
    return out


def prompt_tools(tools: Sequence[ToolDefinition]) -> list[PromptPiece]:
    """The pieces of ``toolConfig.tools`` (deferred tools are not in the prefix)."""
    return _pieces("tools", _tool_entries([t for t in tools if not t.defer_loading]))


def prompt_message(message: Message) -> list[PromptPiece]:
    """The pieces of one message: a system message is its ``system`` block, any other its
    content blocks (a text, ``toolUse`` or ``toolResult`` block each)."""
    system, wire = _messages([message], {})
    if system:
        return _pieces("system", system)
    return [p for entry in wire for p in _pieces("messages", entry["content"], role=entry["role"])]


def prompt_choice(settings: ModelSettings, tools: Sequence[ToolDefinition]) -> list[PromptPiece]:
    """The ``toolChoice`` piece (none when no tool is offered or nothing is chosen)."""
    if not tools:
        return []
    choice = tool_choice_param(settings.tool_choice)
    return [] if choice is None else [PromptPiece(section="tool_choice", text=piece_text(choice))]


def prompt_pieces(body: Mapping[str, Any]) -> list[PromptPiece]:
    """The pieces of a request body in cache order, breakpoints where its ``cachePoint``
    blocks are."""
    config = body.get("toolConfig")
    config = config if isinstance(config, Mapping) else {}
    pieces = _pieces("tools", list(config.get("tools") or ()))
    system = body.get("system")
    pieces.extend(_pieces("system", list(system) if isinstance(system, list) else []))
    if config.get("toolChoice") is not None and config.get("tools"):
        pieces.append(PromptPiece(section="tool_choice", text=piece_text(config["toolChoice"])))
    for entry in body.get("messages") or ():
        if isinstance(entry, Mapping):
            content = entry.get("content")
            blocks = list(content) if isinstance(content, list) else []
            pieces.extend(_pieces("messages", blocks, role=str(entry.get("role"))))
    return pieces
