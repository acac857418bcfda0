"""How a strategy's injected tools reach the model: one option, with a fallback.

A strategy decides *what* to inject; ``Delivery`` decides *how*, in one place, for every
strategy that takes ``via=`` (discovery, facades, playbooks, state machines, sections)
and for any other strategy wrapped in ``AddTools``:

- ``edit`` (the default): the tools are declared in ``tools`` from the next request on;
  the array changes, and with it the provider's cached prompt prefix;
- ``addition``: the provider's own mid-conversation addition (OpenAI Responses'
  ``additional_tools`` input item, Anthropic's ``role: "system"`` message of
  ``tool_addition`` blocks): a message the client writes carries the tools, ``tools`` and
  the earlier prefix stay as they were, so the cache survives. Where the model takes no
  additions (``ModelCapabilities.tool_additions`` is false: Chat Completions, and any
  format that does not declare it) the change falls back to editing ``tools``;
  ``native="always"`` refuses that instead, ``native="never"`` always edits.

Removals are edits whatever the delivery (no provider withdraws a tool by a message the
harness writes). Each injection is recorded with the delivery it got
(``ChangeRecord.via``), so ``injected("x", via="addition")`` and the cost model see it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from harness._errors import UsageError
from harness._validation import check_choice
from harness.loop import InjectionContext, InjectionStrategy, ToolsetChange
from harness.loop._strategy import consult
from harness.loop._turns import leaf_strategies

__all__ = ["AddTools", "Delivery"]

Via = Literal["edit", "addition"]
Native = Literal["auto", "always", "never"]


@dataclasses.dataclass(frozen=True, slots=True)
class Delivery:
    """How injected tools reach the model (see the module docstring): ``via`` ``edit`` or
    ``addition``; ``native`` ``auto`` (addition where the model takes one, else an edit),
    ``always`` (a ``UsageError`` where it does not) or ``never`` (always an edit)."""

    via: Via = "edit"
    native: Native = "auto"

    def __post_init__(self) -> None:
        check_choice(self.via, Via, name="via")
        check_choice(self.native, Native, name="native")

    @classmethod
    def of(cls, value: Via | Delivery | Mapping[str, Any], *, name: str = "via") -> Delivery:
        """``value`` as a ``Delivery``: one itself, ``"edit"`` / ``"addition"``, or its
        plain-data form ``{via: addition, native: always}`` (scenario files)."""
        if isinstance(value, Delivery):
            return value
        if isinstance(value, Mapping) and set(value) <= {"via", "native"} and "via" in value:
            try:
                return cls(value["via"], native=value.get("native", "auto"))
            except UsageError as exc:
                raise UsageError(f"{name}={dict(value)!r}: {exc}") from None
        if value not in ("edit", "addition"):
            raise UsageError(
                f"{name}={value!r}: give 'edit', 'addition', {{via: addition, native: always}} "
                "or a harness.injection.Delivery (e.g. Delivery('addition', native='always'))"
            )
        return cls(value)

    def uses_addition(self, context: InjectionContext) -> bool:
        """Whether this run's changes go by addition (``UsageError`` for ``always`` on a
        model without additions)."""
        if self.via == "edit" or self.native == "never":
            return False
        if context.capabilities.tool_additions:
            return True
        if self.native == "always":
            raise UsageError(
                "via='addition' with native='always': the model takes no mid-conversation "
                "tool additions (ModelCapabilities.tool_additions is false); use "
                "native='auto' to edit tools instead"
            )
        return False

    def deliver(self, change: ToolsetChange, context: InjectionContext) -> ToolsetChange:
        """``change`` as this delivery sends it (unchanged for an edit, or a change that
        injects nothing)."""
        if (not change.add and not change.reveal) or change.via == "addition":
            return change
        if not self.uses_addition(context):
            return change
        return dataclasses.replace(change, via="addition")

    def deliver_all(self, changes: Any, context: InjectionContext) -> Any:
        """A hook's return value (``None``, a change or a list of them) delivered."""
        if self.via == "edit" or changes is None:
            return changes
        if isinstance(changes, ToolsetChange):
            return self.deliver(changes, context)
        return [self.deliver(c, context) for c in changes]


class AddTools(InjectionStrategy):
    """Deliver what ``strategies`` inject by the provider's mid-conversation addition
    (``Delivery("addition", native=native)``): the wrapped strategies decide what, this
    decides how, with the same fallback to editing ``tools`` (or the refusal under
    ``native="always"``). Their names, state and ``tool_choice`` are theirs."""

    def __init__(self, *strategies: InjectionStrategy, native: Native = "auto") -> None:
        if not strategies or not all(isinstance(s, InjectionStrategy) for s in strategies):
            raise UsageError(
                f"AddTools takes the strategies whose injections it delivers, got {strategies!r}"
            )
        self.strategies: tuple[InjectionStrategy, ...] = tuple(strategies)
        self.delivery = Delivery("addition", native=native)
        self.resets_per_turn = any(s.resets_per_turn for s in self._leaves())

    def _leaves(self) -> Sequence[InjectionStrategy]:
        return [leaf for s in self.strategies for leaf in leaf_strategies(s)]

    @property
    def name(self) -> str:
        names = [s.name for s in self.strategies]
        return names[0] if len(names) == 1 else "add_tools"

    def _ask(self, hook: str, context: InjectionContext) -> list[ToolsetChange]:
        delivery = self.delivery
        return [
            delivery.deliver(change, context)
            for strategy in self.strategies
            for change in consult(strategy, hook, context)
        ]

    def on_tool_result(self, context: InjectionContext) -> list[ToolsetChange]:
        return self._ask("on_tool_result", context)

    def before_turn(self, context: InjectionContext) -> list[ToolsetChange]:
        return self._ask("before_turn", context)

    def tool_choice(self, context: InjectionContext) -> Any:
        for strategy in self.strategies:
            choice = strategy.tool_choice(context)
            if choice is not None:
                return choice
        return None

    def __repr__(self) -> str:
        inner = ", ".join(repr(s) for s in self.strategies)
        return f"AddTools({inner}, native={self.delivery.native!r})"
