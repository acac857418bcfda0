"""What the cache model found: per request tokens and hits, cache breaks with their cause."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal, get_args

from harness.cost._prices import PriceTable
from harness.cost._rules import CacheRules
from harness.formats._prompt import MESSAGES, SYSTEM, TOOL_CHOICE, TOOLS, PromptSection
from harness.loop import ChangeRecord, Trace, Usage

__all__ = ["BREAK_CAUSES", "BreakCause", "CacheBreak", "CostReport", "RequestCost"]

BreakCause = Literal[
    "tools-changed", "system-changed", "tool-choice-changed", "history-edited", "restart"
]
"""Why a request does not extend the one before it: the first differing element is a
tool definition, the system prompt, the tool choice (Anthropic caches it before the
messages), an earlier message; or the conversation started again (a restart)."""

BREAK_CAUSES: tuple[BreakCause, ...] = get_args(BreakCause)

CAUSE_OF_SECTION: Mapping[PromptSection, BreakCause] = {
    TOOLS: "tools-changed",
    SYSTEM: "system-changed",
    TOOL_CHOICE: "tool-choice-changed",
    MESSAGES: "history-edited",
}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CacheBreak:
    """A request whose prompt does not extend the previous request of its conversation."""

    request: int
    """The 1-based number of the request (in the report's order)."""
    cause: BreakCause
    """What changed first (see ``BreakCause``)."""
    by: str | None
    """The strategy (or restart reason) that caused it, from the trace's change records;
    ``None`` when no record explains it."""
    section: PromptSection
    """The part of the request where the first difference is."""
    position: int
    """The 0-based index of the first differing piece in the request's prompt order."""
    lost_tokens: int
    """Tokens of the previous request after the difference: what can no longer be read
    from the cache."""
    change: ChangeRecord | None = None
    """The change record it is attributed to, when there is one."""

    def to_data(self) -> dict[str, Any]:
        """``{"request": int, "cause": str, "by": str | null}`` (the ``--json`` shape)."""
        return {"request": self.request, "cause": self.cause, "by": self.by}

    @property
    def label(self) -> str:
        """``#2 tools-changed (unfolding)``: the request, the cause and who caused it, as
        every listing of breaks writes it (``harness compare``, the HTML page, ``summary``)."""
        return f"#{self.request} {self.cause}" + (f" ({self.by})" if self.by else "")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RequestCost:
    """One request as the cache model sees it."""

    index: int
    """1-based number in the report."""
    run: int
    """1-based number of the run (conversation attempt) the request belongs to."""
    iteration: int | None
    """The loop iteration of the request in its run, when known."""
    input_tokens: int
    """All input tokens of the request (the estimate or exact count)."""
    cached_tokens: int
    """Input tokens read from the cache."""
    cache_write_tokens: int
    """Input tokens written to the cache (Anthropic bills them apart)."""
    tool_tokens: int
    """Tokens of the tool definitions in the request's prefix."""
    tools: int
    """Tool definitions in the prefix (deferred ones are not)."""
    cache_break: CacheBreak | None = None
    """The break at this request, if any."""
    recorded: Usage | None = None
    """The provider's own usage for the request (recordings only)."""

    @property
    def uncached_tokens(self) -> int:
        """Input tokens not read from the cache."""
        return self.input_tokens - self.cached_tokens


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


@dataclasses.dataclass(frozen=True, kw_only=True)
class CostReport:
    """The cache model's view of a sequence of requests (``harness.cost.analyse``)."""

    rules: CacheRules
    """The provider rules applied."""
    model: str | None
    """The model the requests went to, when known (minimum lengths, prices)."""
    tokenizer: str
    """Which counter gave the token numbers (``estimate`` or an exact one)."""
    requests: tuple[RequestCost, ...]
    traces: tuple[Trace, ...] = ()
    """The traces of the runs that sent the requests, when known (in run order)."""

    @property
    def trace(self) -> Trace | None:
        """The last run's trace (what assertions and timeline tables show)."""
        return self.traces[-1] if self.traces else None

    @property
    def breaks(self) -> list[CacheBreak]:
        """Every cache break, in request order."""
        return [r.cache_break for r in self.requests if r.cache_break is not None]

    @property
    def input_tokens(self) -> int:
        """Input tokens sent, over all requests."""
        return sum(r.input_tokens for r in self.requests)

    @property
    def cached_tokens(self) -> int:
        """Input tokens read from the cache, over all requests."""
        return sum(r.cached_tokens for r in self.requests)

    @property
    def cache_write_tokens(self) -> int:
        """Input tokens written to the cache, over all requests."""
        return sum(r.cache_write_tokens for r in self.requests)

    @property
    def tool_definition_tokens(self) -> int:
        """Tokens of tool definitions sent, over all requests."""
        return sum(r.tool_tokens for r in self.requests)

    @property
    def cached_share(self) -> float:
        """The share of input tokens read from the cache (0.0 when nothing was sent)."""
        return _share(self.cached_tokens, self.input_tokens)

    @property
    def under_minimum(self) -> bool:
        """Every request is shorter than the shortest prefix the provider caches
        (``rules.minimum_tokens``, 1,024 for OpenAI): nothing could be cached."""
        return bool(self.requests) and all(
            r.input_tokens < self.rules.minimum_tokens for r in self.requests
        )

    def cost(self, prices: PriceTable) -> float | None:
        """The input's price in USD under ``prices`` (``None`` when it has no price for the
        model): uncached tokens at the input price, cached ones at the cached price,
        written ones at the cache-write price."""
        price = prices.for_model(self.model)
        if price is None:
            return None
        return sum(
            price.of(
                uncached=r.uncached_tokens, cached=r.cached_tokens, written=r.cache_write_tokens
            )
            for r in self.requests
        )

    def summary(self) -> str:
        """One line: requests, tokens sent, cached share, breaks with their causes."""
        breaks = self.breaks
        causes = ", ".join(b.label for b in breaks)
        return (
            f"{len(self.requests)} requests, {self.input_tokens} input tokens "
            f"({self.tokenizer}), {self.cached_share:.0%} cached, "
            f"{len(breaks)} cache break{'s' if len(breaks) != 1 else ''}"
            + (f": {causes}" if causes else "")
        )

    def table(self) -> list[str]:
        """One line per request: tokens, cached, written, tool tokens, the break; the
        provider's recorded figures beside the model's where a recording has them."""
        recorded = any(r.recorded is not None for r in self.requests)
        head = ["req", "run", "input", "cached", "written", "tool defs", "break"]
        if recorded:
            head[6:6] = ["rec input", "rec cached", "rec written"]
        rows = [head]
        for r in self.requests:
            cells = [
                str(r.index),
                str(r.run),
                str(r.input_tokens),
                str(r.cached_tokens),
                str(r.cache_write_tokens),
                str(r.tool_tokens),
            ]
            if recorded:
                u = r.recorded
                cells += (
                    [str(u.input_tokens), str(u.cache_read_tokens), str(u.cache_write_tokens)]
                    if u is not None
                    else ["-", "-", "-"]
                )
            b = r.cache_break
            cells.append("" if b is None else f"{b.cause}" + (f" by {b.by}" if b.by else ""))
            rows.append(cells)
        widths = [max(len(row[i]) for row in rows) for i in range(len(head) - 1)]
        return [
            "  ".join(c.rjust(w) for c, w in zip(row[:-1], widths, strict=True))
            + (f"  {row[-1]}" if row[-1] else "")
            for row in rows
        ]

    def to_data(self) -> dict[str, Any]:
        """Plain JSON data: the rules, totals, and one entry per request."""
        return {
            "vendor": self.rules.vendor,
            "format": self.rules.format,
            "model": self.model,
            "tokenizer": self.tokenizer,
            "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "tool_definition_tokens": self.tool_definition_tokens,
            "cache_breaks": [b.to_data() for b in self.breaks],
            "requests": [
                {
                    "request": r.index,
                    "run": r.run,
                    "iteration": r.iteration,
                    "input_tokens": r.input_tokens,
                    "cached_input_tokens": r.cached_tokens,
                    "cache_write_tokens": r.cache_write_tokens,
                    "tool_definition_tokens": r.tool_tokens,
                    "recorded": None
                    if r.recorded is None
                    else {
                        "input_tokens": r.recorded.input_tokens,
                        "cached_input_tokens": r.recorded.cache_read_tokens,
                        "cache_write_tokens": r.recorded.cache_write_tokens,
                    },
                }
                for r in self.requests
            ],
        }
