"""The harness's own span attributes (``harness.*``), named once for export and import.

They carry what the GenAI conventions have no name for: what each request offered, what
a strategy injected or removed and why, tool states, cache breaks, and the rest of the
harness ``Trace``, so that an exported run reads back as the same trace.
"""

from __future__ import annotations

__all__ = [
    "ATTEMPTS",
    "CACHE_BREAK_BY",
    "CACHE_BREAK_CAUSE",
    "CACHE_BREAK_LOST",
    "CALL_INDEX",
    "CHANGED_BY",
    "CHANGES",
    "CHILD_INDEX",
    "COMPLETIONS",
    "CONTENT",
    "CONTINUED",
    "DISCOVERED",
    "ERROR_KIND",
    "EVENT",
    "FINISH_REASON",
    "INITIAL_TOOLS",
    "INJECTED",
    "IS_ASYNC",
    "IS_ERROR",
    "ITERATION",
    "ITERATIONS",
    "OFFERED",
    "REMOVED",
    "RESTARTS",
    "RUN",
    "SEARCHES",
    "SEQ",
    "SET_UP",
    "SILENT",
    "TOOLS",
    "TOOL_CHOICE",
    "TURN",
    "USAGE",
    "USER_CONTENT",
]

# -- the run (the invoke_agent span) -------------------------------------------------------
RUN = "harness.run"
"""What the span is the root of: ``run``, ``session``, ``scenario`` or ``counterexample``."""
CONTENT = "harness.content"
"""Whether messages, arguments and results were recorded (the opt-in content)."""
INITIAL_TOOLS = "harness.initial_tools"
RESTARTS = "harness.restarts"
ITERATIONS = "harness.iterations"
"""How many model requests the run made (a reader can tell when spans are missing)."""
USAGE = "harness.usage"
"""JSON: token usage per model name."""
COMPLETIONS = "harness.completions"
"""JSON: how each async call ended."""
CHILD_INDEX = "harness.child_index"
"""On a nested run: its place among its parent's nested runs."""

# -- one model request (the chat span) -----------------------------------------------------
ITERATION = "harness.iteration"
TURN = "harness.turn"
OFFERED = "harness.offered"
"""The tool names the model could call on this request."""
INJECTED = "harness.injected"
"""Tools offered for the first time on this request (a strategy injected them after the
previous request)."""
REMOVED = "harness.removed"
"""Tools no longer offered on this request."""
CHANGED_BY = "harness.changed_by"
"""The strategies whose changes made ``injected`` and ``removed``."""
SET_UP = "harness.set_up"
"""On the first request: the tools the strategies' initial set-up added."""
CHANGES = "harness.changes"
"""JSON: the toolset changes made during this iteration (after its calls), with causes."""
TOOL_CHOICE = "harness.tool_choice"
TOOLS = "harness.tools"
"""JSON: the request's tool states (visible, deferred, search, namespaces, tool choice)."""
DISCOVERED = "harness.discovered"
SEARCHES = "harness.searches"
CONTINUED = "harness.continued"
FINISH_REASON = "harness.finish_reason"
CACHE_BREAK_CAUSE = "harness.cache_break.cause"
CACHE_BREAK_BY = "harness.cache_break.by"
CACHE_BREAK_LOST = "harness.cache_break.lost_tokens"

# -- one tool call (the execute_tool span) -------------------------------------------------
CALL_INDEX = "harness.call_index"
ATTEMPTS = "harness.attempts"
IS_ERROR = "harness.is_error"
ERROR_KIND = "harness.error_kind"
USER_CONTENT = "harness.user_content"
SILENT = "harness.silent"
IS_ASYNC = "harness.is_async"

# -- events --------------------------------------------------------------------------------
EVENT = "harness.event"
"""On a span event: the harness event as JSON (its kind is the event's name)."""
SEQ = "harness.seq"
"""On a span event: its place in the run's event order."""
