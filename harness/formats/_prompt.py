"""A request as the provider's prompt cache sees it: ordered pieces (the cost model's input).

Providers cache the longest unchanged prefix of a request in their own order (Anthropic:
tools, system, messages; OpenAI: tools, then the conversation). Each format module
says how its requests split into ``PromptPiece``s, in that order, from both sides:

- ``prompt_tools(tools)``, ``prompt_message(message)`` and ``prompt_choice(settings,
  tools)`` give the pieces of a neutral request's parts, so a caller can encode each
  message once and reuse it on every later request (the cost model does);
- ``prompt_pieces(body)`` gives the pieces of a request body as sent or recorded (a
  cassette), with the breakpoints its ``cache_control`` marks say.

For a neutral request both give the same pieces (``tests/formats/test_format_prompt.py``).
A piece's ``text`` is the canonical JSON of what the format sends for it; the cache hint
itself is not part of it (moving a breakpoint does not change the cached bytes).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any, Literal, get_args

__all__ = [
    "MESSAGES",
    "PROMPT_SECTIONS",
    "SYSTEM",
    "TOOLS",
    "TOOL_CHOICE",
    "PromptPiece",
    "PromptSection",
    "body_model",
    "piece_text",
]

PromptSection = Literal["tools", "system", "tool_choice", "messages"]
"""Where a piece sits: tool definitions, the system prompt, the tool choice (Anthropic
caches it before the messages), the conversation."""

PROMPT_SECTIONS: tuple[PromptSection, ...] = get_args(PromptSection)
TOOLS, SYSTEM, TOOL_CHOICE, MESSAGES = PROMPT_SECTIONS
"""The sections by name, for code outside the formats."""


@dataclasses.dataclass(frozen=True, slots=True)
class PromptPiece:
    """One cacheable unit of a request: a tool entry, a system block, a content block."""

    section: PromptSection
    """Which part of the request it belongs to."""
    text: str
    """Its canonical JSON (compared byte for byte, and counted in tokens)."""
    breakpoint: bool = False
    """The request marks a cache breakpoint after this piece (Anthropic's ``cache_control``,
    or the last piece under automatic caching)."""


def piece_text(data: Any) -> str:
    """The canonical JSON of a piece: compact, key order kept (the bytes the API caches)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def body_model(body: Mapping[str, Any]) -> str | None:
    """The model a request body names (every format keeps it in the same field)."""
    model = body.get("model")
    return model if isinstance(model, str) and model else None
