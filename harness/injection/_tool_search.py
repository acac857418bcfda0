"""``ToolSearch``: defer tools behind a tool search, the provider's own where it has one.

The tools are offered deferred (``defer_loading``): declared, so the prompt prefix never
changes, but callable only once a search found them. Where the model's provider runs the
search (``ModelCapabilities.tool_search``: Anthropic's BM25 and regex searches, OpenAI
Responses' search) the strategy declares that search tool; otherwise it offers a local
search tool (named like Responses' own: ``harness.formats._search_names``), which the
loop answers with BM25 or a regex over the deferred tools' names and descriptions
(``harness.tools`` ``BM25Index``): its result reveals what it found. Either way the
trace records the same tool states: the deferred tools, the search, and what each turn
discovered.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Literal

from harness._errors import UsageError
from harness._validation import check_choice, check_int
from harness.formats._search_names import SEARCH_TOOL_NAMES
from harness.loop import InjectionContext, InjectionStrategy, ToolsetChange
from harness.tools import Tool, ToolResult, as_tool
from harness.tools._search import BM25Index, regex_search

__all__ = ["ToolSearch"]

Algorithm = Literal["bm25", "regex", "hosted"]
Native = Literal["auto", "always", "never"]

_PARAMETERS = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "Words (BM25) or a pattern (regex)."}
    },
    "required": ["query"],
}


def _is_source(item: Any) -> bool:
    """A source of tools listed at search time (an ``McpServer``), not a tool."""
    return not isinstance(item, Tool) and callable(getattr(item, "tools", None))


def _never_called(**_: Any) -> Any:  # pragma: no cover - the provider runs this search
    raise RuntimeError("a provider-run tool search is never called by the loop")


class ToolSearch(InjectionStrategy):
    """Offer ``tools`` deferred behind a tool search (see the module docstring).

    ``tools`` are deferred by this strategy; an ``McpServer`` among them is a source the
    local search lists when it runs (offer its tools deferred with
    ``McpTools(server, defer_loading=True)``), and the search also finds every other
    deferred tool on offer.
    ``search`` is the algorithm: ``bm25``, ``regex``, or ``hosted`` (OpenAI's own search;
    BM25 when searched locally). ``native`` picks the provider's search when its
    capabilities list it (``auto``: ``search``, else the provider's ``hosted`` one), only
    that exact search (``always``: a ``UsageError`` without it), or never (the local
    search tool everywhere); ``limit`` is how many tools a local search reveals at most.
    """

    def __init__(
        self,
        tools: Sequence[Any],
        *,
        search: Algorithm = "bm25",
        native: Native = "auto",
        limit: int = 5,
    ) -> None:
        check_choice(search, Algorithm, name="ToolSearch search")
        check_choice(native, Native, name="ToolSearch native")
        check_int(limit, name="ToolSearch limit", minimum=1)
        self.sources = tuple(t for t in tools if _is_source(t))
        self.tools = tuple(as_tool(t).deferred() for t in tools if not _is_source(t))
        self.search = search
        self.native = native
        self.limit = limit
        self._catalog: dict[str, Tool] = {t.name: t for t in self.tools}
        self._index = BM25Index(t.definition() for t in self.tools)

    @property
    def name(self) -> str:
        return "tool_search"

    def _mode(self, offered: Sequence[str], supported: Sequence[str]) -> str:
        """The search mode to declare: the provider's, or ``client`` (local)."""
        if self.native == "never":
            return "client"
        candidates = (self.search,) if self.native == "always" else (self.search, "hosted")
        for mode in candidates:
            if mode in supported:
                return mode
        if self.native == "always":
            raise UsageError(
                f"ToolSearch(native='always'): the model runs no {self.search} tool search "
                f"(its capabilities list {list(supported)}); use native='auto'"
            )
        return "client"

    def search_tool(self, mode: str) -> Tool:
        """The search tool for ``mode`` (a provider's, or the local one the loop answers)."""
        if mode == "client":
            local = Tool.from_schema(
                SEARCH_TOOL_NAMES["client"],
                "Search the available tools by what they do; the tools found become "
                "callable. Call it before using a tool you do not see.",
                _PARAMETERS,
                lambda arguments: self._answer(str(arguments.get("query", ""))),
            )
            return dataclasses.replace(local, search="client")
        return Tool(
            name=SEARCH_TOOL_NAMES[mode],  # type: ignore[index]
            description="",
            parameters={"type": "object", "properties": {}},
            handler=_never_called,
            search="hosted" if mode == "hosted" else mode,  # type: ignore[arg-type]
        )

    def _answer(self, query: str) -> ToolResult:
        """The local search: the deferred tools matching ``query``, revealed."""
        if self.sources:  # listed now: a server's tools change at run time
            listed = {t.name: t for src in self.sources for t in src.tools()}
            if listed.keys() - self._catalog.keys():
                self._catalog = {**listed, **self._catalog}
                self._index = BM25Index(t.definition() for t in self._catalog.values())
        catalog = self._catalog
        if self.search == "regex":  # "hosted" searches locally with BM25
            names = regex_search([t.definition() for t in catalog.values()], query, self.limit)
        else:
            names = self._index.search(query, self.limit)
        reveals = tuple(catalog[n].definition() for n in names)
        text = f"Found: {', '.join(names)}" if names else f"No tool matches {query!r}."
        return ToolResult(content=text, value=list(names), reveals=reveals)

    def _follow(self, context: InjectionContext) -> None:
        """Search every deferred tool on offer: this strategy's, and those other strategies
        defer (an MCP server's, ``McpTools(defer_loading=True)``) as they change."""
        catalog = {t.name: t for t in self.tools}
        catalog.update((n, t) for n, t in context.tools.items() if t.defer_loading)
        if catalog.keys() != self._catalog.keys() or any(
            catalog[n] is not self._catalog[n] for n in catalog
        ):
            self._catalog = catalog
            self._index = BM25Index(t.definition() for t in catalog.values())

    def before_turn(self, context: InjectionContext) -> ToolsetChange | None:
        state = context.state_for(self)
        self._follow(context)
        if state.get("set_up"):
            return None
        state["set_up"] = True
        mode = self._mode(context.offered, context.capabilities.tool_search)
        add = (*(t for t in self.tools if t.name not in context.offered), self.search_tool(mode))
        return ToolsetChange(
            add=add,
            reason=f"tools deferred behind a {mode} tool search",
            strategy=self.name,
        )
