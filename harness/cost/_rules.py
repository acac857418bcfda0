"""The providers' prompt-cache rules, as data (sources and assumptions in ``docs/cost.md``).

Anthropic (platform.claude.com, "Prompt caching" and "Tool use with prompt caching"):
the prefix is tools, system, messages in that order; a cache entry is written at a
breakpoint (``cache_control`` on a block, or the last block under automatic caching)
when the prefix up to it reaches the model's minimum cacheable length; a later request
reads the longest entry found at one of its breakpoints or up to ``lookback`` blocks
before it.

OpenAI (platform.openai.com, "Prompt caching"; cookbook "Prompt Caching 201"): caching
is automatic for prompts of at least 1,024 tokens; a request reuses the longest prefix
it shares with a recent request, counted in increments of 128 tokens.

Bedrock Converse (docs.aws.amazon.com, Bedrock user guide, "Prompt caching"): a
``cachePoint`` block (in ``toolConfig.tools``, ``system`` or a message's content) is a
cache checkpoint; the prefix is tools, system, messages; a checkpoint is written when
the prefix up to it reaches the model's minimum (Claude models: Anthropic's minimums,
1,024 tokens for Amazon Nova); the API has no automatic caching: ``automatic`` models a
client that puts a ``cachePoint`` after each request's last block (pydantic-ai's
``bedrock_cache_messages``), and a recording's own ``cachePoint`` blocks are its only
checkpoints. Claude models on Bedrock
look back as they do on Anthropic's API (20 blocks) and add the same tool-use prompt;
Amazon Nova adds one of about the same size (the real Nova Micro recordings count
426 input tokens for a request the estimate puts at 80 with one tool, 471 for 147 with
two), so the same figure is used; other models are counted without one (Moonshot's
Kimi adds none: its recording counts 92 input tokens with one tool).

Gemini (ai.google.dev, "Context caching"): implicit caching is automatic for Gemini 2.5
and newer models: a request reuses the longest token prefix it shares with a recent one,
once the prefix reaches the model's minimum (the docs' table has changed over time;
the figures below are the ones the API enforces where it was observed: 1,024 tokens for
2.5 Flash, 2,048 for 2.5 Flash-Lite and 2.5 Pro, 4,096 for Gemini 3 and later).
Explicit caching (``cachedContent``) keeps the cached prefix out of the request body:
the model prices the body, and the recorded ``cachedContentTokenCount`` shows the rest.
"""

from __future__ import annotations

import dataclasses
from typing import Literal, get_args

from harness._errors import UsageError
from harness._names import did_you_mean

__all__ = ["FORMATS", "CacheRules", "FormatName", "Vendor", "cache_rules"]

FormatName = Literal[
    "openai-chat", "openai-responses", "anthropic-messages", "bedrock-converse", "gemini-generate"
]
"""The wire formats the cost model reads (``harness.formats`` module names)."""
Vendor = Literal["openai", "anthropic", "bedrock", "google"]

FORMATS: tuple[FormatName, ...] = get_args(FormatName)

_ANTHROPIC_MINIMUM = 1024
"""The minimum cacheable length of a Claude model the table below does not name."""
_BEDROCK_MINIMUM = 1024
"""The minimum checkpoint size of the Bedrock models that are not Claude (Amazon Nova:
1K tokens per checkpoint)."""
_ANTHROPIC_TOOL_PROMPT = 346
"""The tool-use system prompt Anthropic adds when tools are offered ("Tool use pricing and
tokens": 346 tokens for the current models with ``tool_choice`` auto or none, 313 with
any or tool; the small difference is not modelled)."""
_ANTHROPIC_MINIMUMS: tuple[tuple[str, int], ...] = (
    ("opus-4-6", 4096),
    ("opus-4-5", 4096),
    ("haiku-4-5", 4096),
    ("haiku-3-5", 2048),
    ("3-5-haiku", 2048),
    ("3-haiku", 2048),
    ("haiku-3", 2048),
)
"""Minimum cacheable prompt lengths by model (the docs' table; the other listed models,
Sonnet 4.6, 4.5, 4 and 3.7 and Opus 4.1 and 4, take 1,024)."""
_GEMINI_MINIMUMS: tuple[tuple[str, int], ...] = (
    ("gemini-2.5-flash-lite", 2048),
    ("gemini-2.5-flash", 1024),
    ("gemini-2.5-pro", 2048),
    ("gemini-2.", 1024),
    ("gemini-1.", 1024),
)
"""Minimum implicitly cached prefix by model (Gemini 3 and later, and names not listed:
4,096)."""
_GEMINI_MINIMUM = 4096


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CacheRules:
    """How one provider caches prompts, for one model."""

    vendor: Vendor
    """``openai``, ``anthropic``, ``bedrock`` or ``google``."""
    format: FormatName
    """The wire format whose requests are read."""
    minimum_tokens: int
    """The shortest prefix the provider caches."""
    increment: int = 1
    """Cached lengths are multiples of this (OpenAI: 128)."""
    lookback: int | None = None
    """Blocks searched back from a breakpoint for an earlier entry (Anthropic: 20);
    ``None``: every prefix of a cached request is an entry (automatic prefix caching)."""
    automatic: bool = True
    """Anthropic: the request asks for automatic caching (a breakpoint after its last
    block). OpenAI caches automatically whatever this says."""
    partial: bool = False
    """A prefix may end inside a block (OpenAI matches tokens, not blocks)."""
    tool_prompt_tokens: int = 0
    """Tokens the provider adds to a request that offers tools (Anthropic's tool-use
    system prompt: 346 for current models with ``tool_choice`` auto or none), counted
    with the tool definitions."""

    @property
    def prefix_caching(self) -> bool:
        """Every prefix of a cached request is reusable (OpenAI) rather than only the
        prefixes ending at a breakpoint (Anthropic)."""
        return self.lookback is None


def _anthropic_minimum(model: str | None) -> int:
    name = (model or "").lower()
    for marker, minimum in _ANTHROPIC_MINIMUMS:
        if marker in name:
            return minimum
    return _ANTHROPIC_MINIMUM


def cache_rules(format: str, model: str | None = None, *, automatic: bool = True) -> CacheRules:
    """The cache rules for requests of ``format`` to ``model``.

    ``automatic`` (Anthropic only): whether the requests ask for automatic caching (a
    top-level ``cache_control``); without it only the requests' own ``cache_control``
    marks are breakpoints.
    """
    if format not in FORMATS:
        raise UsageError(
            f"unknown format {format!r}; the cost model reads {', '.join(FORMATS)}"
            + did_you_mean(format, FORMATS)
        )
    if format == "bedrock-converse":
        name = (model or "").lower()
        claude = "claude" in name
        return CacheRules(
            vendor="bedrock",
            format="bedrock-converse",
            minimum_tokens=_anthropic_minimum(model) if claude else _BEDROCK_MINIMUM,
            lookback=20,
            automatic=automatic,  # the client puts a cachePoint after the last block
            tool_prompt_tokens=_ANTHROPIC_TOOL_PROMPT if claude or "nova" in name else 0,
        )
    if format == "gemini-generate":
        name = (model or "").lower()
        return CacheRules(
            vendor="google",
            format="gemini-generate",
            minimum_tokens=next(
                (m for marker, m in _GEMINI_MINIMUMS if marker in name), _GEMINI_MINIMUM
            ),
            partial=True,
        )
    if format == "anthropic-messages":
        return CacheRules(
            vendor="anthropic",
            format="anthropic-messages",
            minimum_tokens=_anthropic_minimum(model),
            lookback=20,
            automatic=automatic,
            tool_prompt_tokens=_ANTHROPIC_TOOL_PROMPT,
        )
    return CacheRules(
        vendor="openai",
        format="openai-chat" if format == "openai-chat" else "openai-responses",
        minimum_tokens=1024,
        increment=128,
        partial=True,
    )
