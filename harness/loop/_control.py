"""Tool control flow: tools that end the run with their own result (``return_direct``).

A tool marked ``return_direct`` ends the run as soon as a turn in which it succeeded is
recorded: the run's output is its result, and the model gets no further turn.

- Its result is still recorded in the trace and answered in the history (the history
  ends with the tool message), so a later run can continue from it.
- With parallel calls in the same turn, every call runs and is recorded first; the
  output is the result of the first ``return_direct`` call *in call order* that
  succeeded. Results of the other calls are in the trace and history, not the output.
- A ``return_direct`` call that failed (an error result) does not end the run: the
  model reads the error and gets its turn, as for any tool.
- The output is the result's model-facing text; with ``output_type=`` that text is
  parsed like a final answer and a mismatch raises ``OutputValidationError`` (no
  model turn is left to retry).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.tools import Tool, as_tool

__all__ = ["RETURN_DIRECT", "is_return_direct", "return_direct"]

RETURN_DIRECT = "return_direct"
"""The ``Tool.metadata`` key marking a tool whose result ends the run."""


def return_direct(tool: Tool | Callable[..., Any]) -> Tool:
    """``tool`` (a ``Tool`` or an ``@llm_tool``/plain function) marked ``return_direct``.

    Same as ``@llm_tool(metadata={"return_direct": True})``.
    """
    return as_tool(tool).with_metadata(**{RETURN_DIRECT: True})


def is_return_direct(tool: Tool | None) -> bool:
    """True when ``tool`` is marked ``return_direct``."""
    return tool is not None and tool.metadata.get(RETURN_DIRECT) is True
