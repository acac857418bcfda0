"""Gemini requests as the prompt cache sees them (``harness.formats._prompt``).

Gemini caches the longest prefix a request shares with an earlier one, by itself
(implicit caching, no marks) or from a ``cachedContent`` the client created (explicit
caching: the cached ``systemInstruction``, ``tools`` and first ``contents`` are not in
the request). The order assumed here is the one ``cachedContent`` stores: the tool
declarations, the system instruction, the tool config, then the parts of ``contents``;
the API does not document how it renders the prefix. No piece is a breakpoint: where
the cache ends is the provider's choice (``harness.cost`` models it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.formats._prompt import PromptPiece, PromptSection, piece_text
from harness.formats.gemini_generate._contents import contents_of
from harness.formats.gemini_generate._tools import (
    declarations_of,
    hosted_tools_of,
    tool_choice_param,
    tool_param,
)
from harness.formats.gemini_generate._wire import get
from harness.loop import ModelSettings
from harness.messages import Message
from harness.tools._definitions import ToolDefinition

__all__ = [
    "SYSTEM_FIRST",
    "cache_entry",
    "prompt_choice",
    "prompt_message",
    "prompt_pieces",
    "prompt_tools",
    "with_cached_content",
]

SYSTEM_FIRST = True
"""System messages are rendered before the conversation (``systemInstruction``)."""


_UNCOUNTED = frozenset({"thoughtSignature", "thought_signature"})
"""Part fields that are not prompt text: a thought signature is the model's own state,
which the API does not count as input (pydantic-ai's Gemini 3 recordings count 80 input
tokens for a history whose signatures alone are 500 characters)."""


def _piece(section: PromptSection, data: Any, role: str | None = None) -> PromptPiece:
    if isinstance(data, Mapping) and _UNCOUNTED & data.keys():
        data = {k: v for k, v in data.items() if k not in _UNCOUNTED}
    return PromptPiece(section=section, text=piece_text(data if role is None else [role, data]))


def prompt_tools(tools: Sequence[ToolDefinition]) -> list[PromptPiece]:
    """A piece per declaration (deferred tools are not sent, so not in the prefix)."""
    return [_piece("tools", tool_param(t)) for t in tools if not t.defer_loading]


def prompt_message(message: Message) -> list[PromptPiece]:
    """The pieces of one message: a system message is its ``systemInstruction`` part, any
    other a piece per part of its turn."""
    system, contents = contents_of([message])
    if system:
        return [_piece("system", {"text": text}) for text in system]
    return [_piece("messages", part, c["role"]) for c in contents for part in c["parts"]]


def prompt_choice(settings: ModelSettings, tools: Sequence[ToolDefinition]) -> list[PromptPiece]:
    """The ``toolConfig`` piece (none without declarations or a choice)."""
    if not tools:
        return []
    config = tool_choice_param(settings.tool_choice)
    return [] if config is None else [_piece("tool_choice", config)]


def prompt_pieces(body: Mapping[str, Any]) -> list[PromptPiece]:
    """The pieces of a request body in cache order (a ``cachedContent`` request's cached
    prefix is not in the body: its pieces start after it)."""
    pieces = [_piece("tools", dict(entry)) for entry in declarations_of(body)]
    pieces.extend(_piece("tools", dict(tool)) for tool in hosted_tools_of(body))
    system = get(body, "systemInstruction")
    parts = get(system, "parts") if isinstance(system, Mapping) else None
    pieces.extend(_piece("system", dict(p)) for p in parts or () if isinstance(p, Mapping))
    config = get(body, "toolConfig")
    if config is not None and declarations_of(body):
        pieces.append(_piece("tool_choice", config))
    for content in get(body, "contents") or ():
        if isinstance(content, Mapping):
            role = "model" if content.get("role") == "model" else "user"
            pieces.extend(
                _piece("messages", dict(p), role)
                for p in get(content, "parts") or ()
                if isinstance(p, Mapping)
            )
    return pieces


def cache_entry(
    method: str, path: str, request: Any, response: Any
) -> tuple[str, Mapping[str, Any]] | None:
    """``(name, body)`` of an explicit cache the client created (``POST .../cachedContents``:
    its ``systemInstruction``, ``tools``, ``toolConfig`` and ``contents``), else ``None``."""
    if method.upper() != "POST" or not path.split("?", 1)[0].rstrip("/").endswith(
        "/cachedContents"
    ):
        return None
    name = get(response, "name") if isinstance(response, Mapping) else None
    if not isinstance(name, str) or not isinstance(request, Mapping):
        return None
    return name, request


def with_cached_content(
    body: Mapping[str, Any], caches: Mapping[str, Mapping[str, Any]]
) -> Mapping[str, Any]:
    """A body as the model reads it: a ``cachedContent`` it names is put back in front
    (the cache's system instruction, tools and tool config, its contents before the
    body's); a body naming no known cache is returned as is."""
    cached = caches.get(str(get(body, "cachedContent")))
    if cached is None:
        return body
    merged = {k: v for k, v in body.items() if k not in ("cachedContent", "cached_content")}
    for field in ("systemInstruction", "toolConfig"):
        if get(cached, field) is not None and get(body, field) is None:
            merged[field] = get(cached, field)
    merged["tools"] = [*(get(cached, "tools") or ()), *(get(body, "tools") or ())]
    merged["contents"] = [*(get(cached, "contents") or ()), *(get(body, "contents") or ())]
    return merged
