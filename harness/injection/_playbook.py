"""Playbooks: tools that unlock when their conditions hold.

Some tools are always available; others unlock when a prerequisite was called (one,
all or any of several), an artifact type was produced, a value is in the run's shared
state, or a custom predicate over the ``InjectionContext`` holds. Locked tools are
either offered but gated (a call answers with the missing prerequisites) or hidden
until unlocked. Tools the playbook does not own (e.g. chained domain tools) are never
touched.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from harness._errors import UsageError
from harness._names import did_you_mean, format_names
from harness._validation import check_choice
from harness.injection._delivery import Delivery, Via
from harness.injection._stub import stub_of
from harness.loop import InjectionContext, InjectionStrategy, ToolsetChange
from harness.tools import Tool, artifacts_in, as_tool

__all__ = [
    "Condition",
    "Playbook",
    "Unlock",
    "called_all",
    "called_any",
    "in_state",
    "produced",
    "unlock",
    "was_called",
    "when",
]

PlaybookMode = Literal["gated", "hidden"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Facts:
    """What conditions are checked against."""

    context: InjectionContext
    produced: tuple[type, ...]


class Condition:
    """A requirement; ``missing`` lists what is still missing (empty: satisfied)."""

    def missing(self, facts: _Facts) -> list[str]:
        """What is still missing, in words."""
        raise NotImplementedError

    def tool_names(self) -> tuple[str, ...]:
        """Tool names the condition refers to (checked at construction)."""
        return ()

    def describe(self) -> str:
        """The requirement, in words."""
        raise NotImplementedError


@dataclasses.dataclass(frozen=True)
class _Called(Condition):
    names: tuple[str, ...]
    mode: Literal["all", "any"] = "all"

    def missing(self, facts: _Facts) -> list[str]:
        done = [n for n in self.names if facts.context.called.get(n, 0) > 0]
        if self.mode == "any":
            return [] if done else [f"call one of {', '.join(self.names)}"]
        return [f"call {n}" for n in self.names if n not in done]

    def tool_names(self) -> tuple[str, ...]:
        return self.names

    def describe(self) -> str:
        if len(self.names) == 1:
            return f"{self.names[0]} was called"
        joined = " and ".join(self.names) if self.mode == "all" else " or ".join(self.names)
        return f"{joined} {'were' if self.mode == 'all' else 'was'} called"


@dataclasses.dataclass(frozen=True)
class _Produced(Condition):
    type: type

    def missing(self, facts: _Facts) -> list[str]:
        if any(issubclass(t, self.type) for t in facts.produced):
            return []
        return [f"produce a {self.type.__name__} (call a tool that returns one)"]

    def describe(self) -> str:
        return f"a {self.type.__name__} was produced"


@dataclasses.dataclass(frozen=True)
class _InState(Condition):
    key: str

    def missing(self, facts: _Facts) -> list[str]:
        if facts.context.state.get(self.key) is not None:
            return []
        return [f"put {self.key!r} in the shared state"]

    def describe(self) -> str:
        return f"{self.key!r} is in the shared state"


@dataclasses.dataclass(frozen=True)
class _When(Condition):
    predicate: Callable[[InjectionContext], bool]
    text: str

    def missing(self, facts: _Facts) -> list[str]:
        return [] if self.predicate(facts.context) else [self.text]

    def describe(self) -> str:
        return self.text


def _names(names: Sequence[str], what: str) -> tuple[str, ...]:
    if not names or not all(isinstance(n, str) and n for n in names):
        raise UsageError(f"{what} needs one or more tool names, got {list(names)!r}")
    return tuple(names)


def was_called(name: str) -> Condition:
    """Unlocks once ``name`` was called successfully."""
    return _Called(_names([name], "was_called()"))


def called_all(*names: str) -> Condition:
    """Unlocks once every one of ``names`` was called."""
    return _Called(_names(names, "called_all()"), "all")


def called_any(*names: str) -> Condition:
    """Unlocks once any one of ``names`` was called."""
    return _Called(_names(names, "called_any()"), "any")


def produced(artifact_type: type) -> Condition:
    """Unlocks once a tool returned an instance of ``artifact_type`` (alone or in a list)."""
    if not isinstance(artifact_type, type):
        raise UsageError(f"produced() needs a class, got {artifact_type!r}")
    return _Produced(artifact_type)


def in_state(key: str) -> Condition:
    """Unlocks once the run's shared state (blackboard) holds a non-``None`` ``key``."""
    if not isinstance(key, str) or not key:
        raise UsageError(f"in_state() needs a key, got {key!r}")
    return _InState(key)


def when(predicate: Callable[[InjectionContext], bool], description: str) -> Condition:
    """Unlocks once ``predicate(context)`` is true (e.g. ``lambda c: c.iteration >= 3``)."""
    if not callable(predicate):
        raise UsageError(f"when() needs a function (InjectionContext) -> bool, got {predicate!r}")
    if not isinstance(description, str) or not description:
        raise UsageError("when() needs a description, e.g. 'iteration >= 3'")
    return _When(predicate, description)


ConditionLike = Condition | str | Sequence[str]


def _condition(value: ConditionLike) -> Condition:
    if isinstance(value, Condition):
        return value
    if isinstance(value, str):
        return was_called(value)
    if isinstance(value, (list, tuple)):
        return called_all(*value)
    raise UsageError(
        f"a playbook condition must be a Condition (was_called, called_all, called_any, produced, "
        f"in_state, when), a tool name or a list of tool names, got {value!r}"
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class Unlock:
    """Tools that unlock when ``condition`` holds."""

    tools: tuple[Tool, ...]
    condition: Condition


def unlock(*tools: Tool | Callable[..., Any], when: ConditionLike) -> Unlock:
    """A rule: ``tools`` unlock when ``when`` holds (a name means "was called")."""
    if not tools:
        raise UsageError("unlock() needs one or more tools")
    return Unlock(tools=tuple(as_tool(t) for t in tools), condition=_condition(when))


class Playbook(InjectionStrategy):
    """Always-available tools plus tools unlocked by conditions.

    Args:
        always: tools offered from the first turn.
        unlocks: ``unlock(tool, when=...)`` rules.
        mode: ``gated``: locked tools are offered, and a call answers which
            prerequisites are missing; ``hidden``: they are offered once unlocked.
        known: names of tools outside the playbook that conditions may refer to.
        via: how unlocked tools reach the model (``hidden`` mode: they are added):
            ``edit`` (declared in ``tools``) or ``addition`` (the provider's
            mid-conversation addition, ``tools`` kept; an edit where the model has
            none), or a ``Delivery``. A gate replaced by its tool is always an edit.
    """

    def __init__(
        self,
        always: Iterable[Tool | Callable[..., Any]] = (),
        unlocks: Iterable[Unlock] = (),
        *,
        mode: PlaybookMode = "gated",
        known: Iterable[str] = (),
        via: Via | Delivery = "edit",
    ) -> None:
        self.mode = check_choice(mode, PlaybookMode, name="Playbook mode")
        self.delivery = Delivery.of(via, name="Playbook via")
        self.always = tuple(as_tool(t) for t in always)
        self.unlocks = tuple(unlocks)
        bad = [u for u in self.unlocks if not isinstance(u, Unlock)]
        if bad:
            raise UsageError(f"Playbook unlocks must be unlock(...) rules, got {bad!r}")
        names = [t.name for t in self.always] + [t.name for u in self.unlocks for t in u.tools]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise UsageError(f"Playbook: tools {duplicates} appear more than once")
        valid = {*names, *known}
        for rule in self.unlocks:
            for name in rule.condition.tool_names():
                if name not in valid:
                    raise UsageError(
                        f"Playbook: the condition {rule.condition.describe()!r} names unknown "
                        f"tool {name!r}{did_you_mean(name, sorted(valid))}; known tools: "
                        f"{format_names(sorted(valid))}. Add the tool to the playbook or list "
                        "it in known=[...]"
                    )

    @property
    def name(self) -> str:
        return "playbook"

    def _facts(self, context: InjectionContext) -> _Facts:
        state = context.state_for(self)
        return _Facts(context=context, produced=tuple(state.get("produced", ())))

    def _start(self, context: InjectionContext, state: dict[str, Any]) -> ToolsetChange:
        state["started"] = True
        state["unlocked"] = set()
        add = [t for t in self.always if t.name not in context.tools]
        replace: list[Tool] = []
        remove: list[str] = []
        for rule in self.unlocks:
            for tool in rule.tools:
                if self.mode == "hidden":
                    remove.append(tool.name)
                    continue
                gate = stub_of(
                    tool,
                    f"Tool {tool.name!r} is locked: it unlocks when {rule.condition.describe()}.",
                    kind="locked",
                    playbook_locked=True,
                )
                (replace if tool.name in context.tools else add).append(gate)
        locked = [t.name for u in self.unlocks for t in u.tools]
        always = ", ".join(t.name for t in self.always) or "(none)"
        reason = f"playbook started: always available: {always}"
        if locked:
            reason += f"; locked ({self.mode}): {', '.join(locked)}"
        return ToolsetChange(
            add=tuple(add), replace=tuple(replace), remove=tuple(remove), reason=reason
        )

    def _unlock(self, context: InjectionContext) -> list[ToolsetChange]:
        state = context.state_for(self)
        unlocked: set[int] = state["unlocked"]
        facts = self._facts(context)
        out = []
        for index, rule in enumerate(self.unlocks):
            if index in unlocked or rule.condition.missing(facts):
                continue
            unlocked.add(index)
            offered = [t for t in rule.tools if t.name in context.tools]
            others = [t for t in rule.tools if t.name not in context.tools]
            names = ", ".join(t.name for t in rule.tools)
            change = ToolsetChange(
                replace=tuple(offered),
                add=tuple(others),
                reason=f"unlocked {names}: {rule.condition.describe()}",
            )
            out.append(self.delivery.deliver(change, context))
        return out

    def before_turn(self, context: InjectionContext) -> list[ToolsetChange]:
        state = context.state_for(self)
        out = []
        if not state.get("started"):
            out.append(self._start(context, state))
        return out + self._unlock(context)

    def on_tool_result(self, context: InjectionContext) -> list[ToolsetChange]:
        state = context.state_for(self)
        if not state.get("started"):
            return []
        result = context.result
        out: list[ToolsetChange] = []
        if result is not None and not result.is_error:
            kinds: list[type] = state.setdefault("produced", [])
            for artifact in artifacts_in(result.value):
                if type(artifact) not in kinds:
                    kinds.append(type(artifact))
        elif result is not None and result.error_kind == "locked" and context.call is not None:
            note = self._missing_note(context, context.call.name)
            if note:
                out.append(ToolsetChange(result_note=note))
        return out + self._unlock(context)

    def _missing_note(self, context: InjectionContext, name: str) -> str | None:
        facts = self._facts(context)
        for rule in self.unlocks:
            if any(t.name == name for t in rule.tools):
                missing = rule.condition.missing(facts)
                if missing:
                    return "Still missing: " + "; ".join(missing) + "."
        return None
