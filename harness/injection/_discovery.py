"""Entity discovery: objects returned by tools expose their own methods as new tools."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from harness._errors import InjectionLimitExceeded, InvalidToolProvider, UsageError
from harness._validation import choice_problem, int_problem
from harness.injection._delivery import Delivery, Via
from harness.injection._providers import (
    _SCALARS,
    WALK_LIMIT,
    provider_id,
    provider_spec,
    scan_providers,
    tool_names_for,
)
from harness.loop import (
    Event,
    InjectionContext,
    InjectionStrategy,
    LimitReached,
    ProviderDiscovered,
    StrategyWarning,
    ToolsetChange,
)
from harness.tools import Tool, ToolResult, as_tool

__all__ = ["EntityDiscovery"]

CollisionPolicy = Literal["skip", "replace", "error"]
LimitPolicy = Literal["event", "raise"]


class EntityDiscovery(InjectionStrategy):
    """Inject the ``@llm_tool`` methods of ``@tool_provider`` instances found in tool results.

    An instance may be returned alone, in a list/tuple/dict, or nested in a returned
    model. Its tools are bound to that instance (state persists for the run).

    Args:
        max_injected_tools: most tools this strategy adds in one run.
        max_depth: most discovery hops (1 = found in the result of an original tool).
        collision: a *different* instance with an id already seen: ``skip`` (warning
            event), ``replace`` its tools, or ``error``.
        on_limit: ``event`` (emit ``LimitReached`` and skip) or ``raise``.
        hint: append "New tools available: ..." to the result the model reads.
        max_walk: most objects visited when searching one result for providers; a
            larger result is searched only that far (``LimitReached`` with
            ``limit="max_walk"``, or ``InjectionLimitExceeded`` under ``on_limit="raise"``).
        via: how the found tools reach the model: ``edit`` (declared in ``tools``) or
            ``addition`` (the provider's mid-conversation addition, ``tools`` kept; an
            edit where the model has none), or a ``Delivery``.
    """

    @property
    def name(self) -> str:
        """``discovery`` in the trace (docs/pytest-plugin.md#strategy-names)."""
        return "discovery"

    def __init__(
        self,
        *,
        max_injected_tools: int = 256,
        max_depth: int = 5,
        collision: CollisionPolicy = "skip",
        on_limit: LimitPolicy = "event",
        hint: bool = False,
        max_walk: int = WALK_LIMIT,
        via: Via | Delivery = "edit",
    ) -> None:
        self.delivery = Delivery.of(via, name="EntityDiscovery via")
        problems = []
        walk_problem = int_problem(max_walk, name="max_walk", minimum=1)
        if walk_problem:
            problems.append(walk_problem)
        if max_injected_tools < 0:
            problems.append(f"max_injected_tools must be >= 0, got {max_injected_tools!r}")
        if max_depth < 1:
            problems.append(f"max_depth must be >= 1, got {max_depth!r}")
        for problem in (
            choice_problem(collision, CollisionPolicy, name="collision"),
            choice_problem(on_limit, LimitPolicy, name="on_limit"),
        ):
            if problem is not None:
                problems.append(problem)
        if problems:
            raise UsageError("EntityDiscovery: " + "; ".join(problems))
        self.max_injected_tools = max_injected_tools
        self.max_depth = max_depth
        self.collision = collision
        self.on_limit = on_limit
        self.hint = hint
        self.max_walk = max_walk

    def _hit(self, hits: _Hits, limit: str, value: int, message: str) -> None:
        """Note that ``limit`` stopped something (``InjectionLimitExceeded`` at once under
        ``on_limit="raise"``)."""
        if self.on_limit == "raise":
            raise InjectionLimitExceeded(message)
        hits.setdefault(limit, (value, []))[1].append(message)

    def _limit_events(self, context: InjectionContext, hits: _Hits) -> list[Event]:
        """One ``LimitReached`` per limit and iteration (a result of 100,000 entities
        gave one per entity), summing up every provider the limit stopped."""
        reported: dict[str, int] = context.state_for(self).setdefault("limits_reported", {})
        events: list[Event] = []
        for limit, (value, messages) in hits.items():
            if reported.get(limit) == context.iteration:
                continue  # another call of this iteration reported it already
            reported[limit] = context.iteration
            events.append(
                LimitReached(
                    iteration=context.iteration,
                    limit=limit,
                    value=value,
                    message=_summary(limit, value, messages),
                )
            )
        return events

    def _nothing_for(self, result: ToolResult) -> bool:
        """True when ``on_tool_result`` returns ``None`` for ``result``: an error, or a
        value with nothing to search (``harness.loop._fast.result_filter``)."""
        value = result.value
        return result.is_error or value is None or isinstance(value, _SCALARS)

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        result = context.result
        if result is None or result.is_error or result.value is None:
            return None
        providers, complete = scan_providers(result.value, limit=self.max_walk)
        hits: _Hits = {}
        if not complete:
            source = context.call.name if context.call else "?"
            self._hit(
                hits,
                "max_walk",
                self.max_walk,
                f"the result of {source!r} has more than max_walk={self.max_walk} objects; "
                f"only those were searched for tool providers ({len(providers)} found)",
            )
        if not providers:
            walk_events = self._limit_events(context, hits)
            return (
                ToolsetChange(reason="discovery walk stopped", events=tuple(walk_events))
                if walk_events
                else None
            )
        state = context.state_for(self)
        instances: dict[str, Any] = state.setdefault("instances", {})
        skipped: dict[str, list[Any]] = state.setdefault("skipped", {})
        tool_names: dict[str, list[str]] = state.setdefault("tool_names", {})
        injected = state.get("injected", 0)
        source_depth = int(context.tool.metadata.get("discovery_depth", 0)) if context.tool else 0
        depth = source_depth + 1
        source = context.call.name if context.call else "?"
        add: list[Tool] = []
        remove: list[str] = []
        events: list[Event] = []
        found: list[str] = []
        pending_names: set[str] = set()
        for instance in providers:
            spec = provider_spec(instance)
            assert spec is not None
            instance_id = provider_id(instance, spec)
            key = f"{spec.prefix}:{instance_id}"
            previous = instances.get(key)
            if previous is instance or any(s is instance for s in skipped.get(key, ())):
                continue  # seen before: nothing to add, nothing new to say
            label = f"{type(instance).__name__} {instance_id!r}"
            if depth > self.max_depth:
                self._hit(
                    hits,
                    "max_depth",
                    self.max_depth,
                    f"{label} found in the result of {source!r} at discovery depth {depth} "
                    f"> max_depth={self.max_depth}; its tools were not added",
                )
                continue
            named = tool_names_for(spec, instance_id)
            clash = [
                n
                for _, n in named
                if (n in context.tools and previous is None) or n in pending_names
            ]
            if previous is not None or clash:
                what = (
                    f"another {type(instance).__name__} with id {instance_id!r} was already "
                    "discovered"
                    if previous is not None
                    else f"tools {clash} already exist"
                )
                if self.collision == "error":
                    raise InvalidToolProvider(
                        f"name collision: {label} returned by {source!r} but {what}; "
                        "use collision='skip' or 'replace', or give instances unique ids",
                        provider_class=type(instance),
                        reason="name_collision",
                    )
                if self.collision == "skip" or previous is None:
                    skipped.setdefault(key, []).append(instance)
                    events.append(
                        StrategyWarning(
                            iteration=context.iteration,
                            strategy=self.name,
                            message=f"skipped {label} returned by {source!r}: {what}",
                        )
                    )
                    continue
                replaced = tool_names.get(key, [])
            else:
                replaced = []
            if injected - len(replaced) + len(named) > self.max_injected_tools:
                self._hit(
                    hits,
                    "max_injected_tools",
                    self.max_injected_tools,
                    f"adding {len(named)} tools for {label} would exceed "
                    f"max_injected_tools={self.max_injected_tools}; they were not added",
                )
                continue
            tools = [
                as_tool(getattr(instance, attr))
                .with_name(name)
                .with_metadata(discovery_depth=depth, provider=key)
                for attr, name in named
            ]
            remove.extend(replaced)
            injected -= len(replaced)
            instances[key] = instance
            tool_names[key] = [t.name for t in tools]
            pending_names.update(t.name for t in tools)
            injected += len(tools)
            add.extend(tools)
            found.append(label)
            events.append(
                ProviderDiscovered(
                    iteration=context.iteration,
                    provider=type(instance).__name__,
                    provider_class=_qualified(type(instance)),
                    instance_id=instance_id,
                    tool_names=tuple(t.name for t in tools),
                    depth=depth,
                )
            )
        state["injected"] = injected
        events.extend(self._limit_events(context, hits))
        if not (add or events):
            return None
        discovered = sum(1 for e in events if isinstance(e, ProviderDiscovered))
        events = [
            dataclasses.replace(e, provider_count=discovered)
            if isinstance(e, ProviderDiscovered)
            else e
            for e in events
        ]
        note = None
        if self.hint and add:
            note = "[New tools available: " + ", ".join(t.name for t in add) + "]"
        change = ToolsetChange(
            add=tuple(add),
            remove=tuple(remove),
            reason=f"{source} returned {', '.join(found)}" if found else f"{source}: nothing added",
            events=tuple(events),
            result_note=note,
        )
        return self.delivery.deliver(change, context)


_Hits = dict[str, tuple[int, list[str]]]
"""Per limit: its configured value and one message per thing it stopped."""
_SHOWN_HITS = 3


def _summary(limit: str, value: int, messages: list[str]) -> str:
    """The one message of a limit's event: the message of its only hit, or the count and
    the first few."""
    if len(messages) == 1:
        return messages[0]
    shown = "; ".join(messages[:_SHOWN_HITS])
    more = f"; and {len(messages) - _SHOWN_HITS} more" if len(messages) > _SHOWN_HITS else ""
    return f"{limit}={value} stopped {len(messages)} providers in this iteration: {shown}{more}"


def _qualified(cls: type) -> str:
    """``module.QualName`` of a provider class."""
    return f"{cls.__module__}.{cls.__qualname__}"
