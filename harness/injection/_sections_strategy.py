"""The read_section protocol: one tool opens summarised prompt sections and their tools.

With a model that accepts new tools mid-conversation (``supports_dynamic_tools``),
the section's tools are injected right away (``ToolsInjected`` with ``section_key``)
and the visibility override is recorded in the session state; opening the last
summary also removes ``read_section``. Otherwise, whenever opening a section would
change the tool list (it has tools, or it was the last summary so ``read_section``
goes), the loop raises ``VisibilityExpansionRequired`` before the next request and
``run_with_sections`` restarts the run with the section shown in full. Both paths
end with the same tools offered and the same overrides; a section without tools
that leaves other summaries open changes no tool, so it opens without a restart.

With ``defer=True`` (native deferral) the tools of every summarised section are
declared deferred before the first request, and opening a section reveals its tools
(``ToolsetChange(reveal=...)``: the result carries their references) instead of adding
them; ``read_section`` stays. The request's ``tools`` never change, so the prompt cache
survives and no restart is needed (Chat Completions, which has no deferral, sends a
revealed tool from the next request on: ``docs/native-tools.md``).
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

from harness._errors import VisibilityExpansionRequired
from harness.injection._delivery import Delivery, Via
from harness.injection._sections import PromptTemplate, Visibility
from harness.loop import (
    InjectionContext,
    InjectionStrategy,
    StrategyWarning,
    ToolsetChange,
    record_metric,
)
from harness.tools import CallContext, Tool, ToolResult

__all__ = [
    "ALREADY_EXPANDED",
    "SESSION_KEY",
    "SectionDisclosure",
    "SectionRead",
    "SectionSession",
]

SESSION_KEY = "harness.sections"

ALREADY_EXPANDED = "Section is already expanded."
"""First line of ``read_section``'s result for a section already shown in full; the
section's content follows after a blank line, and no tools are added."""
"""Where the session lives in the run's shared state."""


@dataclasses.dataclass(kw_only=True)
class SectionSession:
    """Section state that survives restarts: visibility overrides and counters."""

    overrides: dict[str, Visibility] = dataclasses.field(default_factory=dict)
    """Section key -> visibility chosen during the session (``read_section``)."""
    tools_injected: int = 0
    """Tools injected mid-conversation for opened sections."""
    dynamic_expansions: int = 0
    """Sections opened without a restart."""
    restarts: int = 0
    """Runs restarted to show sections in full (models without dynamic tools)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class SectionRead:
    """What ``read_section`` returned (the Python value the strategy reads)."""

    key: str
    content: str
    expanded: bool
    """True when the call opened the section (it was summarised)."""


def session_of(state: dict[str, Any]) -> SectionSession:
    """The section session in a run's shared state (created when missing)."""
    session = state.get(SESSION_KEY)
    if not isinstance(session, SectionSession):
        session = state[SESSION_KEY] = SectionSession()
    return session


class SectionDisclosure(InjectionStrategy):
    """Offers ``read_section`` while sections are summarised, and the tools of open sections.

    Before the first turn it adds ``read_section`` (when a section is summarised) and
    the tools of the sections shown in full. Put the rendered template in the system
    prompt (``template.render(...)``) or use ``run_with_sections``, which does both and
    restarts for models without dynamic tools. ``defer=True`` declares the summarised
    sections' tools deferred up front and reveals them on opening (see the module).
    ``via="addition"`` delivers an opened section's tools by the provider's
    mid-conversation addition (``tools`` kept, ``read_section`` stays; an edit where the
    model has none), or give a ``Delivery``.
    """

    @property
    def name(self) -> str:
        """``sections`` in the trace (docs/pytest-plugin.md#strategy-names)."""
        return "sections"

    def __init__(
        self,
        template: PromptTemplate,
        *,
        tool_name: str = "read_section",
        defer: bool = False,
        via: Via | Delivery = "edit",
    ) -> None:
        self.template = template
        self.defer = defer
        self.delivery = Delivery.of(via, name="SectionDisclosure via")
        self.read_section = self._make_tool(tool_name)

    def render(self, state: dict[str, Any] | None = None) -> str:
        """The prompt for a run with shared state ``state`` (its session's overrides)."""
        return self.template.render(session_of(state if state is not None else {}).overrides)

    def _make_tool(self, tool_name: str) -> Tool:
        template = self.template

        def read_section(
            key: Annotated[str, "The key of a summarised section"], context: CallContext
        ) -> ToolResult:
            """Read the full content of a summarised prompt section."""
            overrides = session_of(context.state).overrides
            if key not in template:
                return ToolResult.error(
                    f"Unknown section key {key!r}. Valid keys: "
                    f"{', '.join(repr(k) for k in template.keys)}.",
                    kind="unknown_section",
                )
            hider = template.hidden_by(key, overrides)
            if hider is not None:
                return ToolResult.error(
                    f"Section {key!r} is inside the summarised section {hider!r}: call "
                    f"{tool_name} with key {hider!r} first.",
                    kind="hidden_section",
                )
            if template.is_open(key, overrides):
                content = template.render_section(key, overrides)
                return ToolResult(
                    content=f"{ALREADY_EXPANDED}\n\n{content}",
                    value=SectionRead(key=key, content=content, expanded=False),
                )
            content = template.render_section(key, {**overrides, key: Visibility.FULL})
            return ToolResult(
                content=content, value=SectionRead(key=key, content=content, expanded=True)
            )

        return Tool.from_function(read_section, name=tool_name)

    # -- hooks ----------------------------------------------------------------------------

    def before_turn(self, context: InjectionContext) -> list[ToolsetChange] | None:
        own = context.state_for(self)
        pending: list[str] = own.get("pending", [])
        if pending:
            raise VisibilityExpansionRequired(
                overrides={k: Visibility.FULL.value for k in pending},
                reason=(
                    f"{self.read_section.name} opened section(s) {pending}, which changes the "
                    "tools offered, and the model does not accept new tools mid-conversation"
                ),
                section_keys=pending,
            )
        if own.get("started"):
            return None
        own["started"] = True
        overrides = session_of(context.state).overrides
        changes = []
        if self.template.summarized(overrides) and self.read_section.name not in context.offered:
            changes.append(
                ToolsetChange(
                    add=(self.read_section,),
                    reason=f"sections {self.template.summarized(overrides)} are summarised",
                )
            )
        seen = set(context.offered) | {self.read_section.name}
        by_section: dict[str, list[Tool]] = {}
        warnings: list[str] = []
        for key, tool in self.template.open_tools(overrides):
            if tool.name in seen:
                warnings.append(f"section {key!r}: tool {tool.name!r} is already offered")
                continue
            seen.add(tool.name)
            by_section.setdefault(key, []).append(tool)
        for key, tools in by_section.items():
            changes.append(
                ToolsetChange(
                    add=tuple(tools), reason=f"section {key!r} is shown in full", section_key=key
                )
            )
        if self.defer:
            hidden = tuple(t.deferred() for t in self._closed_tools(overrides, seen))
            if hidden:
                changes.append(
                    ToolsetChange(add=hidden, reason="summarised sections' tools, deferred")
                )
        if warnings:
            changes.append(ToolsetChange(events=self._warnings(context, warnings)))
        return changes

    def _closed_tools(self, overrides: dict[str, Any], seen: set[str]) -> list[Tool]:
        """The tools of the sections not shown in full, once each (names in ``seen``
        are taken)."""
        closed = []
        for key in self.template.keys:
            if self.template.is_open(key, overrides):
                continue
            for tool in self.template.section(key).tool_objects:
                if tool.name not in seen:
                    seen.add(tool.name)
                    closed.append(tool)
        return closed

    def _warnings(self, context: InjectionContext, texts: list[str]) -> tuple[StrategyWarning, ...]:
        return tuple(
            StrategyWarning(
                iteration=context.iteration,
                strategy=self.name,
                message=f"{text}; skipped the duplicate name",
            )
            for text in texts
        )

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        result = context.result
        if context.tool is not self.read_section or result is None or result.is_error:
            return None
        read = result.value
        if not isinstance(read, SectionRead) or not read.expanded:
            return None
        session = session_of(context.state)
        if session.overrides.get(read.key) is Visibility.FULL:
            return None  # opened by an earlier call in the same turn
        tools = self.template.tools_opened_by(read.key, session.overrides)
        if self.defer:
            return self.delivery.deliver(self._reveal(context, read.key, tools), context)
        addition = self.delivery.uses_addition(context)
        # Opening the last summary retires read_section: that is a toolset change too
        # (an addition keeps tools as they are: read_section stays).
        retire = not addition and not self.template.summarized(
            {**session.overrides, read.key: Visibility.FULL}
        )
        if (tools or retire) and not addition and not context.capabilities.supports_dynamic_tools:
            # The model cannot take a different tool list: restart with the section in
            # full, so both paths end with the same tools and overrides.
            pending = context.state_for(self).setdefault("pending", [])
            if read.key not in pending:
                pending.append(read.key)
            return None
        session.overrides[read.key] = Visibility.FULL
        offered = set(context.offered)
        add, skipped = [], []
        for tool in tools:
            if tool.name in offered:
                skipped.append(f"section {read.key!r}: tool {tool.name!r} is already offered")
                continue
            offered.add(tool.name)
            add.append(tool)
        remove = (self.read_section.name,) if retire else ()  # nothing left to read
        session.dynamic_expansions += 1
        record_metric("dynamic_expansions", section=read.key)
        session.tools_injected += len(add)
        return ToolsetChange(
            add=tuple(add),
            remove=remove,
            reason=f"{self.read_section.name} opened section {read.key!r}",
            section_key=read.key,
            events=self._warnings(context, skipped),
            via="addition" if addition and add else "edit",
        )

    def _reveal(self, context: InjectionContext, key: str, tools: list[Tool]) -> ToolsetChange:
        """Open ``key`` by revealing its deferred tools (native deferral: ``tools`` and
        ``read_section`` stay as they are)."""
        session = session_of(context.state)
        session.overrides[key] = Visibility.FULL
        offered = context.tools
        reveal = tuple(
            t.name for t in tools if (o := offered.get(t.name)) is not None and o.defer_loading
        )
        session.dynamic_expansions += 1
        record_metric("dynamic_expansions", section=key)
        return ToolsetChange(
            reveal=reveal,
            reason=f"{self.read_section.name} opened section {key!r}",
            section_key=key,
        )
