"""The error result for a call to a tool that is not offered, bounded in size.

With thousands of offered tools, listing every name in each error would make
the history grow with (unknown calls x offered tools); past ``LIST_ALL`` names
the message lists at most ``CLOSEST`` close names (``difflib``) plus the count.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from harness._names import close_matches
from harness.messages import ToolCall
from harness.tools import ToolResult

__all__ = ["CLOSEST", "LIST_ALL", "closest_names", "not_run_result", "unknown_tool_message"]

LIST_ALL = 30
"""Up to this many offered tools, the message lists them all."""
CLOSEST = 8
"""Otherwise it lists at most this many of the closest names."""
_POOL = 24  # difflib compares at most this many names (~1 ms)


_last_sorted: list[tuple[Sequence[str], tuple[str, ...]]] = []


def _sorted(names: Sequence[str]) -> tuple[str, ...]:
    """``names`` sorted; the last result is reused for the same (cached) names object."""
    last = _last_sorted[:1]
    if last and last[0][0] is names:
        return last[0][1]
    ordered = tuple(sorted(names))
    _last_sorted[:] = [(names, ordered)]
    return ordered


def closest_names(name: str, names: Sequence[str], n: int = CLOSEST) -> list[str]:
    """At most ``n`` names of ``names`` that look like ``name``, best first.

    Sets larger than a few hundred names are first narrowed to the names that sort
    next to ``name`` (those sharing its longest prefixes), so a thousand unknown calls
    among ten thousand tools stay fast; a typo in the first characters may then find
    no suggestion.
    """
    pool: Sequence[str] = names
    if len(names) > _POOL:
        ordered = _sorted(names)
        at = bisect.bisect_left(ordered, name)
        pool = ordered[max(0, at - _POOL // 2) : at + _POOL // 2]
    return close_matches(name, pool, n=n, cutoff=0.5)


def unknown_tool_message(name: str, offered: Sequence[str]) -> str:
    """What the model reads when it calls ``name`` but only ``offered`` exist."""
    if not offered:
        listing = "Available tools: (no tools are offered)"
    elif len(offered) <= LIST_ALL:
        listing = f"Available tools: {', '.join(offered)}"
    else:
        close = closest_names(name, offered)
        listing = f"{len(offered)} tools are offered; " + (
            f"the closest names: {', '.join(close)}"
            if close
            else f"none has a similar name (the first {CLOSEST}: {', '.join(offered[:CLOSEST])})"
        )
    return (
        f"Tool {name[:200]!r} is not available. {listing}. "
        "Call one of these, or answer without a tool."
    )


def not_run_result(call: ToolCall, exc: BaseException) -> ToolResult:
    """The result of a call that was never run because ``exc`` ended the run first."""
    return ToolResult.error(
        f"Tool {call.name[:200]!r} was not run: the run ended with {type(exc).__name__}.",
        kind="not_run",
    )
