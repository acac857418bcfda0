"""One self-contained HTML page of cost reports: a summary table, then per report a chart
of tokens per request (cached and uncached, inline SVG) with each cache break marked by
its cause, the per-request table and the run's timeline. No script, no stylesheet, no
font or image is fetched: the page is one file that opens offline.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Sequence

from harness._secrets import scrub_message
from harness.cost._report import CostReport, RequestCost

__all__ = ["CACHED_COLOUR", "UNCACHED_COLOUR", "PageSection", "cost_page"]

CACHED_COLOUR = "#2e7d32"
"""Bars of tokens read from the cache."""
UNCACHED_COLOUR = "#ef6c00"
"""Bars of tokens sent uncached."""
BREAK_COLOUR = "#c62828"
"""The line and label of a cache break."""

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child, td.breaks { text-align: left; }
td.fail { color: #c62828; font-weight: bold; } td.pass { color: #2e7d32; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; }
.legend span { display: inline-block; width: 0.9em; height: 0.9em; margin: 0 0.3em 0 1em; }
"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class PageSection:
    """One report on the page (a comparison's variant, a test's run)."""

    title: str
    report: CostReport | None
    """The cost report (``None``: a run shown by its timeline only)."""
    description: str = ""
    passed: bool | None = None
    """Shown in the summary when known."""
    cost: float | None = None
    """The input's price, when a price table was given."""
    timeline: Sequence[str] = ()
    """Lines shown under the chart (the run's timeline table)."""


def _e(text: object) -> str:
    return html.escape(scrub_message(str(text)), quote=True)


def _percent(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "-"


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def _under_minimum(report: CostReport) -> str:
    """Why nothing was cached, when no request reached the provider's minimum."""
    if not report.under_minimum:
        return ""
    return f" (every request under the {report.rules.minimum_tokens:,}-token minimum)"


def _summary(sections: Sequence[PageSection]) -> str:
    head = (
        "<tr><th>variant</th><th>passed</th><th>requests</th><th>tool definition tokens</th>"
        "<th>input tokens</th><th>cached</th><th>cached share</th><th>cache breaks</th>"
        "<th>cost</th></tr>"
    )
    rows = []
    for s in sections:
        r = s.report
        if r is None:
            continue
        if s.passed is None:
            passed = "<td>-</td>"
        else:
            verdict = ("pass", "yes") if s.passed else ("fail", "no")
            passed = f'<td class="{verdict[0]}">{verdict[1]}</td>'
        breaks = ", ".join(b.label for b in r.breaks) or "none"
        rows.append(
            f'<tr class="variant" data-variant="{_e(s.title)}"><td>{_e(s.title)}</td>{passed}'
            f"<td>{len(r.requests)}</td><td>{r.tool_definition_tokens}</td>"
            f"<td>{r.input_tokens}</td><td>{r.cached_tokens}</td>"
            f"<td>{_percent(r.cached_tokens, r.input_tokens)}{_under_minimum(r)}</td>"
            f'<td class="breaks">{_e(breaks)}</td>'
            f"<td>{_money(s.cost)}</td></tr>"
        )
    return f'<table class="summary">{head}{"".join(rows)}</table>'


def _bar(r: RequestCost, x: float, width: float, scale: float, base: float, label_y: int) -> str:
    cached_h = r.cached_tokens * scale
    uncached_h = r.uncached_tokens * scale
    tip = (
        f"request {r.index}: {r.input_tokens} input tokens, {r.cached_tokens} cached, "
        f"{r.uncached_tokens} uncached"
    )
    parts = [
        f'<g class="request" data-request="{r.index}" data-cached="{r.cached_tokens}" '
        f'data-uncached="{r.uncached_tokens}"><title>{_e(tip)}</title>',
        f'<rect class="cached" x="{x:.1f}" y="{base - cached_h:.1f}" width="{width:.1f}" '
        f'height="{cached_h:.1f}" fill="{CACHED_COLOUR}"/>',
        f'<rect class="uncached" x="{x:.1f}" y="{base - cached_h - uncached_h:.1f}" '
        f'width="{width:.1f}" height="{uncached_h:.1f}" fill="{UNCACHED_COLOUR}"/>',
        f'<text x="{x + width / 2:.1f}" y="{base + 14:.1f}" font-size="11" '
        f'text-anchor="middle">{r.index}</text></g>',
    ]
    b = r.cache_break
    if b is not None:
        label = b.cause + (f" ({b.by})" if b.by else "")
        parts.append(
            f'<g class="break" data-request="{r.index}" data-cause="{_e(b.cause)}">'
            f'<line x1="{x - 3:.1f}" y1="{label_y + 4}" x2="{x - 3:.1f}" y2="{base:.1f}" '
            f'stroke="{BREAK_COLOUR}" stroke-width="2" stroke-dasharray="4 3"/>'
            f'<text x="{x - 1:.1f}" y="{label_y}" font-size="11" fill="{BREAK_COLOUR}">'
            f"{_e(label)}</text></g>"
        )
    return "".join(parts)


def _chart(report: CostReport, top: int) -> str:
    count = len(report.requests)
    step = 56
    width = max(520, 140 + step * count)
    height, base = 260, 220
    scale = (base - 44) / top if top else 0.0
    bars, breaks = [], 0
    for i, r in enumerate(report.requests):
        label_y = 12 + 14 * (breaks % 2)  # labels of neighbouring breaks on two lines
        breaks += r.cache_break is not None
        bars.append(_bar(r, 60 + step * i, step - 16, scale, base, label_y))
    axis = (
        f'<line x1="50" y1="{base}" x2="{width - 10}" y2="{base}" stroke="#555"/>'
        f'<text x="4" y="{44 + 4}" font-size="11">{top}</text>'
        f'<text x="4" y="{base + 4}" font-size="11">0</text>'
        f'<text x="{width / 2:.0f}" y="{height - 4}" font-size="11" text-anchor="middle">'
        "request</text>"
    )
    return (
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" role="img" aria-label="tokens per request">{axis}{"".join(bars)}</svg>'
    )


def _table(report: CostReport) -> str:
    recorded = any(r.recorded is not None for r in report.requests)
    head = "<tr><th>request</th><th>run</th><th>input</th><th>cached</th><th>written</th>"
    head += "<th>tool definitions</th>"
    if recorded:
        head += "<th>recorded input</th><th>recorded cached</th><th>recorded written</th>"
    head += "<th>cache break</th></tr>"
    rows = []
    for r in report.requests:
        cells = (
            f"<td>{r.index}</td><td>{r.run}</td><td>{r.input_tokens}</td>"
            f"<td>{r.cached_tokens}</td><td>{r.cache_write_tokens}</td><td>{r.tool_tokens}</td>"
        )
        if recorded:
            u = r.recorded
            cells += (
                f"<td>{u.input_tokens}</td><td>{u.cache_read_tokens}</td>"
                f"<td>{u.cache_write_tokens}</td>"
                if u is not None
                else "<td>-</td><td>-</td><td>-</td>"
            )
        b = r.cache_break
        label = "" if b is None else b.cause + (f" by {b.by}" if b.by else "")
        rows.append(f'<tr>{cells}<td class="breaks">{_e(label)}</td></tr>')
    return f'<table class="requests">{head}{"".join(rows)}</table>'


def _section(section: PageSection, top: int) -> str:
    report = section.report
    parts = [f'<section data-variant="{_e(section.title)}"><h2>{_e(section.title)}</h2>']
    if section.description:
        parts.append(f"<p>{_e(section.description)}</p>")
    if report is not None:
        parts.append(f"<p>{_e(report.summary())}</p>")
        parts.append(_chart(report, top))
        parts.append(_table(report))
    if section.timeline:
        parts.append(f"<pre>{_e(chr(10).join(section.timeline))}</pre>")
    parts.append("</section>")
    return "".join(parts)


def cost_page(title: str, sections: Sequence[PageSection], *, note: str = "") -> str:
    """The page: the summary table, then each report's chart (one scale for all, so bars
    compare across sections), table and timeline."""
    reports = [s.report for s in sections if s.report is not None]
    top = max((r.input_tokens for report in reports for r in report.requests), default=0)
    rules = {f"{report.rules.vendor} ({report.rules.format})" for report in reports}
    counters = {report.tokenizer for report in reports}
    legend = (
        '<p class="legend">'
        f'<span style="background:{CACHED_COLOUR}"></span>cached input tokens'
        f'<span style="background:{UNCACHED_COLOUR}"></span>uncached input tokens'
        f'<span style="background:{BREAK_COLOUR}"></span>cache break (its cause)</p>'
    )
    about = (
        f"<p>Cache rules: {_e(', '.join(sorted(rules)) or '-')}; token counts: "
        f"{_e(', '.join(sorted(counters)) or '-')}.{(' ' + _e(note)) if note else ''}</p>"
    )
    body = "".join(_section(s, top) for s in sections)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1>{about}{_summary(sections)}{legend}{body}</body></html>\n"
    )
