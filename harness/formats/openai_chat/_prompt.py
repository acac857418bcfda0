"""Chat Completions requests as the prompt cache sees them (``harness.formats._prompt``).

OpenAI caches the longest prefix a request shares with recent ones, automatically. The
order assumed here: the ``tools`` entries, then the ``messages`` (a system message is the
first message). OpenAI's guide says tools are part of the cached prefix and must be
identical between requests; where they sit in the rendered prompt it does not say, and
this module assumes the front (what ``docs/cost.md`` records as an assumption).
``tool_choice`` is not treated as part of the prefix (not said either; an assumption).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.formats._prompt import PromptPiece, PromptSection, piece_text
from harness.formats.openai_chat._request import _wire_message, tool_param
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


def prompt_tools(tools: Sequence[ToolDefinition]) -> list[PromptPiece]:
    """The pieces of the ``tools`` array, one per entry."""
    return [PromptPiece(section="tools", text=piece_text(tool_param(t))) for t in tools]


def _section(data: Any) -> PromptSection:
    return "system" if isinstance(data, Mapping) and data.get("role") == "system" else "messages"


def _message_piece(data: Any) -> PromptPiece:
    return PromptPiece(section=_section(data), text=piece_text(data))


def prompt_message(message: Message) -> list[PromptPiece]:
    """The piece of one message (the whole message dict, as sent; a system message is in
    the ``system`` section, in its place)."""
    return [_message_piece(_wire_message(message))]


def prompt_choice(settings: ModelSettings, tools: Sequence[ToolDefinition]) -> list[PromptPiece]:
    """No piece: ``tool_choice`` is not modelled as part of the cached prefix."""
    return []


def prompt_pieces(body: Mapping[str, Any]) -> list[PromptPiece]:
    """The pieces of a request body in cache order (no breakpoints: caching is automatic)."""
    pieces = [PromptPiece(section="tools", text=piece_text(t)) for t in body.get("tools") or ()]
    pieces.extend(_message_piece(m) for m in body.get("messages") or ())
    return pieces
