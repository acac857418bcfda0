"""``AllowedTools``: narrow what the model may call per turn, without editing ``tools``.

Both OpenAI APIs take an allowed subset in ``tool_choice`` (``ToolChoice.allowed_tools``,
which each format writes in its API's shape): every declared tool stays in the request,
so the prompt cache survives, and the model may call only the subset. Where the provider has no such
subset (``ModelCapabilities.allowed_tools`` is false: Anthropic Messages) the strategy
falls back to editing ``tools``: the tools outside the subset are taken out for the turn
and put back when allowed again (``native="always"`` refuses that instead).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from harness._errors import StrategyError, UsageError
from harness._names import did_you_mean, format_names
from harness._validation import check_choice
from harness.loop import InjectionContext, InjectionStrategy, ToolsetChange
from harness.tools._definitions import ToolChoice

__all__ = ["AllowedTools"]

Mode = Literal["auto", "required"]
Native = Literal["auto", "always", "never"]
Rule = Callable[[InjectionContext], Sequence[str] | None]


class AllowedTools(InjectionStrategy):
    """Allow only some tools per turn.

    ``turns`` lists the allowed names for turns 1, 2, ... (turns past the list allow
    everything); or ``rule(context)`` returns them (``None``: everything). ``mode`` is
    ``auto`` (the model may answer instead) or ``required`` (it must call one of them).
    """

    def __init__(
        self,
        turns: Sequence[Sequence[str]] = (),
        *,
        rule: Rule | None = None,
        mode: Mode = "auto",
        native: Native = "auto",
    ) -> None:
        check_choice(mode, Mode, name="AllowedTools mode")
        check_choice(native, Native, name="AllowedTools native")
        if turns and rule is not None:
            raise UsageError("AllowedTools takes turns=[...] or rule=..., not both")
        if isinstance(turns, str) or any(isinstance(t, str) for t in turns):
            raise UsageError(
                f"AllowedTools turns is a list of name lists (one per turn), got {turns!r}"
            )
        self.turns = tuple(tuple(t) for t in turns)
        self.rule = rule
        self.mode = mode
        self.native = native

    @property
    def name(self) -> str:
        return "allowed_tools"

    def _allowed(self, context: InjectionContext) -> tuple[str, ...] | None:
        if self.rule is not None:
            names = self.rule(context)
            return tuple(names) if names is not None else None
        index = context.iteration - 1
        return self.turns[index] if 0 <= index < len(self.turns) else None

    def _native(self, context: InjectionContext) -> bool:
        if self.native == "never":
            return False
        if context.capabilities.allowed_tools:
            return True
        if self.native == "always":
            raise UsageError(
                "AllowedTools(native='always'): the model takes no allowed subset in "
                "tool_choice (ModelCapabilities.allowed_tools is false); use native='auto'"
            )
        return False

    def tool_choice(self, context: InjectionContext) -> ToolChoice | None:
        """The allowed subset of this request, where the provider takes one (the loop's
        one per-request hook, shared with tool_choice schedules)."""
        if not self._native(context):
            return None
        allowed = self._allowed(context)
        return ToolChoice.allowed_tools(allowed, mode=self.mode) if allowed else None

    def before_turn(self, context: InjectionContext) -> ToolsetChange | None:
        """Where the provider has no allowed subset: take the other tools out for this
        request and put them back when they are allowed again."""
        if self._native(context):
            return None
        allowed = self._allowed(context)
        state = context.state_for(self)
        stash = state.setdefault("stash", {})
        keep = set(allowed) if allowed else None
        if keep is not None:
            _check_known(keep, {*context.tools, *stash}, context)
        remove = tuple(
            n
            for n, tool in context.tools.items()
            if keep is not None and n not in keep and tool.search is None
        )
        for name in remove:
            stash[name] = context.tools[name]
        back = tuple(stash.pop(n) for n in list(stash) if keep is None or n in keep)
        if not remove and not back:
            return None
        return ToolsetChange(
            remove=remove,
            add=back,
            strategy=self.name,
            reason="allowed subset (the provider has none: tools edited)",
        )


def _check_known(allowed: set[str], known: set[str], context: InjectionContext) -> None:
    """A name outside the toolset is a mistake (a typo would take every tool away), as the
    providers refuse it in an allowed subset: ``StrategyError`` naming it."""
    unknown = sorted(allowed - known)
    if unknown:
        hint = did_you_mean(unknown[0], known) if len(unknown) == 1 else ""
        raise StrategyError(
            f"strategy 'allowed_tools' allows {format_names(unknown)}{hint} for the request "
            f"of iteration {context.iteration} (turn {context.turn}), which "
            f"{'is' if len(unknown) == 1 else 'are'} not offered (offered: "
            f"{format_names(sorted(known)) if known else 'no tools'}); name offered tools"
        )
