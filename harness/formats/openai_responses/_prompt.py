"""Responses requests as the prompt cache sees them (``harness.formats._prompt``).

The same automatic prefix caching as Chat Completions, in the same assumed order: the
``tools`` entries (a namespace is one entry), then ``instructions``, then the ``input``
items. A function tool with ``defer_loading`` is left out of the prefix, as Anthropic
documents for its deferred tools; OpenAI's tool search guide loads deferred tools when
searched, and this module assumes they are not in the cached prefix until then.
``tool_choice`` (an ``allowed_tools`` subset included) is not part of the prefix: the
``tools`` array stays the same, which is what the allowed subset is for. A reasoning
item's ``encrypted_content`` is not counted (opaque ciphertext, not the reasoning it
carries); the prompt OpenAI adds for a hosted ``tool_search`` tool is not published and
not modelled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.formats._prompt import PromptPiece, piece_text
from harness.formats.openai_responses._request import message_items, tool_params
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

SYSTEM_FIRST = False
"""A system message is rendered where it is in the conversation."""


def _deferred(entry: Any) -> bool:
    return isinstance(entry, Mapping) and entry.get("defer_loading") is True


def _loaded(entry: Any) -> Any:
    """``entry`` without its deferred members (a namespace keeps the loaded ones)."""
    members = entry.get("tools") if isinstance(entry, Mapping) else None
    if isinstance(members, list) and any(_deferred(m) for m in members):
        return {**entry, "tools": [m for m in members if not _deferred(m)]}
    return entry


def _tool_pieces(entries: Sequence[Any]) -> list[PromptPiece]:
    return [
        PromptPiece(section="tools", text=piece_text(_loaded(e)))
        for e in entries
        if not _deferred(e)
    ]


def prompt_tools(tools: Sequence[ToolDefinition]) -> list[PromptPiece]:
    """The pieces of the ``tools`` array (deferred function tools are not in the prefix)."""
    return _tool_pieces(tool_params(tools))


def _item_piece(item: Any) -> PromptPiece:
    opaque = isinstance(item, Mapping) and item.get("type") == "reasoning"
    if opaque and "encrypted_content" in item:
        # the ciphertext is not text the model reads: its length says nothing of the
        # reasoning it stands for (not modelled); the item's id keeps the piece distinct
        item = {k: v for k, v in item.items() if k != "encrypted_content"}
    system = isinstance(item, Mapping) and item.get("role") in ("system", "developer")
    return PromptPiece(section="system" if system else "messages", text=piece_text(item))


def prompt_message(message: Message) -> list[PromptPiece]:
    """The pieces of one message: its input items, one piece each (a system message is in
    the ``system`` section, in its place)."""
    return [_item_piece(item) for item in message_items(message)]


def prompt_choice(settings: ModelSettings, tools: Sequence[ToolDefinition]) -> list[PromptPiece]:
    """No piece: ``tool_choice`` is not modelled as part of the cached prefix."""
    return []


def prompt_pieces(body: Mapping[str, Any]) -> list[PromptPiece]:
    """The pieces of a request body in cache order (no breakpoints: caching is automatic)."""
    pieces = _tool_pieces(list(body.get("tools") or ()))
    instructions = body.get("instructions")
    if instructions:
        pieces.append(PromptPiece(section="system", text=piece_text(instructions)))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    pieces.extend(_item_piece(i) for i in items or ())
    return pieces
