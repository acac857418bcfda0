"""Where a tool result goes: the model (``content``), the user (``user_content``), or
neither (``silent``), and what the model reads when the content is empty.

An empty or whitespace-only model-facing content is never sent as is (providers reject
or mishandle empty tool messages, and the model cannot tell "nothing" from "lost"):

- a successful result reads ``EMPTY_RESULT``, ``"(empty result)"``;
- an error result reads its exception's text when there is one, else ``EMPTY_ERROR``
  with the tool's name.

The trace records what the model read; ``CallRecord.value`` keeps the tool's value.
"""

from __future__ import annotations

from harness.tools import ToolResult

__all__ = ["EMPTY_ERROR", "EMPTY_RESULT", "model_content", "user_text"]

EMPTY_RESULT = "(empty result)"
"""What the model reads for a successful result with empty content."""

EMPTY_ERROR = "(empty error result: tool {name!r} failed without a message)"
"""What the model reads for an error result with empty content and no exception text."""


def model_content(result: ToolResult, name: str) -> str:
    """The text the model reads for ``result`` of tool ``name``: never empty, unless the
    result reveals tools (``ToolResult.reveals``: the references are what it says)."""
    content = result.content
    if content.strip():
        return content
    if not result.is_error:
        # a result that reveals tools says it with them (tool references): no filler
        return content if result.reveals else EMPTY_RESULT
    if result.exception is not None:
        try:
            text = str(result.exception).strip()
        except Exception:  # an exception whose __str__ raises
            text = ""
        if text:
            return f"Tool {name!r} failed: {type(result.exception).__name__}: {text}"
    return EMPTY_ERROR.format(name=name)


def user_text(result: ToolResult) -> str | None:
    """The text for the user, or ``None`` (no user content, a blank one, or silent)."""
    if result.silent or result.user_content is None or not result.user_content.strip():
        return None
    return result.user_content
