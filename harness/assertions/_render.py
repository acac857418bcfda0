"""The compact timeline table shown when a check on a trace fails."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harness._secrets import scrub_message
from harness.scenarios import TimelineRow

__all__ = ["cut", "render_table"]

_MAX_NAMES = 3


def _names(prefix: str, names: Sequence[str]) -> list[str]:
    shown = [prefix + n for n in names[:_MAX_NAMES]]
    if len(names) > _MAX_NAMES:
        shown.append(f"({prefix}{len(names) - _MAX_NAMES} more)")
    return shown


def _cells(row: TimelineRow, cache: Mapping[int, str]) -> tuple[str, str, str, str]:
    calls = ", ".join(
        (f"{c}!" if c in row.errors else c) + (" (handoff)" if c in row.handoffs else "")
        for c in row.calls
    )
    if not calls and row.final:
        calls = "(answer)"
    changes = " ".join(
        [
            *_names("+", [n for n in row.injected if n not in row.added]),
            *_names("added:", row.added),  # injected by a client's addition, tools unchanged
            *_names("-", row.removed),
            *_names("found:", row.discovered),  # revealed by a tool search (native tools)
            *_names("?", row.deferred),  # still deferred on the request
        ]
    )
    if row.iteration in cache:  # the request of this iteration broke the prompt cache
        changes = f"{changes} [cache break: {cache[row.iteration]}]".lstrip()
    return str(row.iteration), str(row.offered), calls, changes


def cut(text: str, width: int | None) -> str:
    """``text`` cut to ``width`` characters, ending in ``…`` when cut."""
    if width is None or len(text) <= width:
        return text
    return text[: width - 1] + "\N{HORIZONTAL ELLIPSIS}"


def render_table(
    rows: Sequence[TimelineRow],
    *,
    mark: int | None = None,
    expected: str | None = None,
    window: int | None = None,
    width: int | None = None,
    cache: Mapping[int, str] | None = None,
) -> list[str]:
    """One line per iteration (iteration, offered count, calls, +injected/-removed).

    The row of iteration ``mark`` gets a ``>`` and ``expected`` beside it; ``mark``
    past the last row adds an ``(end)`` row, for runs that ended too early. A call
    that ended in an error result is shown with a ``!``, one that handed work to a
    nested run with ``(handoff)``; tools a search revealed as ``found:name``, tools a
    client's addition injected as ``added:name`` and tools still deferred as ``?name``.
    ``width`` cuts each row (not the expected step).
    ``cache`` marks the iterations whose request broke the prompt cache, with the cause
    (``harness.cost``: ``{2: "tools-changed by unfolding"}``).
    """
    table = [("iter", "offered", "calls", "+injected/-removed")]
    table.extend(_cells(row, cache or {}) for row in rows)
    ended_early = mark is not None and mark > len(rows)
    if ended_early:
        table.append(("(end)", "", "", ""))
    widths = [max(len(r[i]) for r in table) for i in range(3)]
    lines = []
    for index, (it, offered, calls, changes) in enumerate(table):
        is_mark = (
            mark is not None
            and index > 0
            and (index == mark or (ended_early and index == len(table) - 1))
        )
        text = cut(
            (
                f"{'>' if is_mark else ' '} {it.rjust(widths[0])}  {offered.rjust(widths[1])}  "
                f"{calls.ljust(widths[2])}  {changes}"
            ).rstrip(),
            width,
        )
        if is_mark and expected is not None:
            text += f"    <- expected: {expected}"
        lines.append(scrub_message(text))
    if window is None or mark is None:
        return lines
    kept = [lines[0]]
    for index, line in enumerate(lines[1:], 1):
        if abs(index - min(mark, len(lines) - 1)) <= window:
            kept.append(line)
        elif kept[-1] != "  ...":
            kept.append("  ...")
    return kept
