"""Anthropic Messages requests as the prompt cache sees them (``harness.formats._prompt``).

The order is the API's: ``tools``, then ``system``, then ``tool_choice``, then the content
blocks of ``messages``. A tool with ``defer_loading`` is not part of the prefix ("Deferred
tools are not included in the system-prompt prefix", Tool use with prompt caching,
platform.claude.com); a ``cache_control`` mark is a breakpoint after its piece and not
part of its text; a top-level ``cache_control`` (automatic caching) is a breakpoint
after the last piece. A change of ``tool_choice`` keeps the tools and system cached and
invalidates the messages, which is why it sits between them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.formats._prompt import PromptPiece, PromptSection, piece_text
from harness.formats.anthropic_messages._request import (
    _messages,
    blocks_of,
    tool_choice_param,
    tool_param,
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

_HINT = "cache_control"


def _piece(section: PromptSection, data: Any, *, role: str | None = None) -> PromptPiece:
    marked = isinstance(data, Mapping) and _HINT in data
    if marked:
        data = {k: v for k, v in data.items() if k != _HINT}
    return PromptPiece(
        section=section, text=piece_text(data if role is None else [role, data]), breakpoint=marked
    )


def _tool_pieces(entries: Sequence[Any]) -> list[PromptPiece]:
    return [
        _piece("tools", entry)
        for entry in entries
        if not (isinstance(entry, Mapping) and entry.get("defer_loading") is True)
    ]


def prompt_tools(tools: Sequence[ToolDefinition]) -> list[PromptPiece]:
    """The pieces of the ``tools`` array (deferred tools are not in the prefix)."""
    return _tool_pieces([tool_param(t) for t in tools])


def _message_pieces(role: str, content: Any) -> list[PromptPiece]:
    return [_piece("messages", block, role=role) for block in blocks_of(content)]


def prompt_message(message: Message) -> list[PromptPiece]:
    """The pieces of one message: a system message is the ``system`` text, any other its
    content blocks (a text, ``tool_use`` or ``tool_result`` block each)."""
    system, wire = _messages([message], {})
    if system:
        return [_piece("system", block) for block in blocks_of(system[0])]
    return [piece for entry in wire for piece in _message_pieces(entry["role"], entry["content"])]


def prompt_choice(settings: ModelSettings, tools: Sequence[ToolDefinition]) -> list[PromptPiece]:
    """The ``tool_choice`` piece (none when no tool is offered or nothing is chosen)."""
    if not tools:
        return []
    choice = tool_choice_param(
        settings.tool_choice, parallel_tool_calls=settings.parallel_tool_calls
    )
    return [] if choice is None else [_piece("tool_choice", choice)]


def prompt_pieces(body: Mapping[str, Any]) -> list[PromptPiece]:
    """The pieces of a request body in cache order, breakpoints as its marks say."""
    pieces = _tool_pieces(list(body.get("tools") or ()))
    system = body.get("system")
    if system:
        pieces.extend(_piece("system", block) for block in blocks_of(system))
    if body.get("tool_choice") is not None and body.get("tools"):
        pieces.append(_piece("tool_choice", body["tool_choice"]))
    for entry in body.get("messages") or ():
        if isinstance(entry, Mapping):
            pieces.extend(_message_pieces(str(entry.get("role")), entry.get("content")))
    if body.get(_HINT) is not None and pieces:
        pieces[-1] = PromptPiece(section=pieces[-1].section, text=pieces[-1].text, breakpoint=True)
    return pieces
