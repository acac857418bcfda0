"""The name a tool-search tool has, by the neutral ``search`` mode, read from its format.

Anthropic runs two searches, ``regex`` and ``bm25``, each with its own tool name
(``anthropic_messages._native.SEARCH_NAMES``). OpenAI Responses has one search tool, run
by OpenAI (``hosted``) or answered by the client (``client``), and the API gives it no
name of its own: calls of it come back under ``openai_responses._native.DEFAULT_SEARCH_NAME``,
so a search the client answers is named like it on every format (Chat Completions and
Anthropic take any name for a client search).
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.formats.anthropic_messages._native import SEARCH_NAMES
from harness.formats.openai_responses._native import DEFAULT_SEARCH_NAME
from harness.tools._definitions import SearchMode

__all__ = ["SEARCH_TOOL_NAMES"]

SEARCH_TOOL_NAMES: Mapping[SearchMode, str] = {
    "regex": SEARCH_NAMES["regex"],
    "bm25": SEARCH_NAMES["bm25"],
    "hosted": DEFAULT_SEARCH_NAME,
    "client": DEFAULT_SEARCH_NAME,
}
"""The tool name each search mode is offered under."""
