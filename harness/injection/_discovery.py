"""Entity discovery: objects returned by tools expose their own methods as new tools."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

from harness._errors import InjectionLimitExceeded, InvalidToolProvider, UsageError
from harness._secrets import hidden_values, secret_finder
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
        source = context.call.name if context.call else "?"
        hits: _Hits = {}
        if not complete:
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
        found = _Found.start(self, context, source, hits)
        for instance in providers:
            self._discover(found, instance)
        context.state_for(self)["injected"] = found.injected
        found.events.extend(self._limit_events(context, found.hits))
        return self._change(found)

    def _discover(self, found: _Found, instance: Any) -> None:
        """Add the tools of one provider found in the result, unless it was seen before or
        a limit or a name collision stops it."""
        spec = provider_spec(instance)
        assert spec is not None
        instance_id = provider_id(instance, spec)
        key = f"{spec.prefix}:{instance_id}"
        previous = found.instances.get(key)
        if previous is instance or any(s is instance for s in found.skipped.get(key, ())):
            return  # seen before: nothing to add, nothing new to say
        shown_id = _shown_id(found.hidden_ids, key, instance_id, found.carries)
        provider = _Provider(
            instance,
            shown_id,
            key,
            f"{spec.prefix}:{shown_id}",
            f"{type(instance).__name__} {shown_id!r}",
        )
        if found.depth > self.max_depth:
            self._hit(
                found.hits,
                "max_depth",
                self.max_depth,
                f"{provider.label} found in the result of {found.source!r} at discovery depth "
                f"{found.depth} > max_depth={self.max_depth}; its tools were not added",
            )
            return
        named = tool_names_for(spec, shown_id)
        replaced = self._settle_collision(found, provider, named)
        if replaced is None:
            return
        if found.injected - len(replaced) + len(named) > self.max_injected_tools:
            self._hit(
                found.hits,
                "max_injected_tools",
                self.max_injected_tools,
                f"adding {len(named)} tools for {provider.label} would exceed "
                f"max_injected_tools={self.max_injected_tools}; they were not added",
            )
            return
        found.bind(provider, named, replaced)

    def _settle_collision(
        self, found: _Found, provider: _Provider, named: list[tuple[str, str]]
    ) -> list[str] | None:
        """The tool names ``provider`` replaces (none without a collision), or ``None`` when
        the ``collision`` policy skips it (a ``StrategyWarning``); raises under ``error``."""
        instance, label, key = provider.instance, provider.label, provider.key
        previous = found.instances.get(key)
        clash = [
            n
            for _, n in named
            if (n in found.context.tools and previous is None) or n in found.pending_names
        ]
        if previous is None and not clash:
            return []
        what = (
            f"another {type(instance).__name__} with id {provider.instance_id!r} was already "
            "discovered"
            if previous is not None
            else f"tools {clash} already exist"
        )
        if self.collision == "error":
            raise InvalidToolProvider(
                f"name collision: {label} returned by {found.source!r} but {what}; "
                "use collision='skip' or 'replace', or give instances unique ids",
                provider_class=type(instance),
                reason="name_collision",
            )
        if self.collision == "skip" or previous is None:
            found.skipped.setdefault(key, []).append(instance)
            found.events.append(
                StrategyWarning(
                    iteration=found.context.iteration,
                    strategy=self.name,
                    message=f"skipped {label} returned by {found.source!r}: {what}",
                )
            )
            return None
        return found.tool_names.get(key, [])

    def _change(self, found: _Found) -> ToolsetChange | None:
        """The toolset change for what this result's providers added, removed and reported;
        every ``ProviderDiscovered`` says how many providers the result brought."""
        if not (found.add or found.events):
            return None
        discovered = sum(1 for e in found.events if isinstance(e, ProviderDiscovered))
        events = [
            dataclasses.replace(e, provider_count=discovered)
            if isinstance(e, ProviderDiscovered)
            else e
            for e in found.events
        ]
        note = None
        if self.hint and found.add:
            note = "[New tools available: " + ", ".join(t.name for t in found.add) + "]"
        source = found.source
        change = ToolsetChange(
            add=tuple(found.add),
            remove=tuple(found.remove),
            reason=(
                f"{source} returned {', '.join(found.labels)}"
                if found.labels
                else f"{source}: nothing added"
            ),
            events=tuple(events),
            result_note=note,
        )
        return self.delivery.deliver(change, found.context)


class _Provider(NamedTuple):
    """A tool provider instance found in a result."""

    instance: Any
    instance_id: str
    """The id it is shown and named by (``hidden_<n>`` when its own carries a secret)."""
    key: str
    """``prefix:id``: the provider's key in the strategy's run state (its own id)."""
    shown_key: str
    """``prefix:shown id``: the provider as tool metadata names it."""
    label: str
    """``Class 'id'``, for messages."""


@dataclasses.dataclass
class _Found:
    """What the providers in one tool result add, remove and report, with the strategy's
    run state they update (``instances``, ``skipped``, ``tool_names``: shared with the
    state; ``injected`` written back at the end)."""

    context: InjectionContext
    source: str
    """The name of the tool whose result is searched (``?`` when unknown)."""
    depth: int
    """The discovery depth of providers found here (1 = in an original tool's result)."""
    instances: dict[str, Any]
    skipped: dict[str, list[Any]]
    tool_names: dict[str, list[str]]
    injected: int
    hidden_ids: dict[str, str]
    """Run state: the key of each instance whose id carries a secret -> ``hidden_<n>``."""
    carries: Callable[[str], bool]
    """Whether an id carries a secret (registered, or a preset of the returning tool)."""
    hits: _Hits = dataclasses.field(default_factory=dict)
    add: list[Tool] = dataclasses.field(default_factory=list)
    remove: list[str] = dataclasses.field(default_factory=list)
    events: list[Event] = dataclasses.field(default_factory=list)
    labels: list[str] = dataclasses.field(default_factory=list)
    pending_names: set[str] = dataclasses.field(default_factory=set)

    @classmethod
    def start(
        cls, strategy: EntityDiscovery, context: InjectionContext, source: str, hits: _Hits
    ) -> _Found:
        state = context.state_for(strategy)
        source_depth = int(context.tool.metadata.get("discovery_depth", 0)) if context.tool else 0
        presets = context.tool.presets.values.values() if context.tool is not None else ()
        return cls(
            context=context,
            source=source,
            depth=source_depth + 1,
            instances=state.setdefault("instances", {}),
            skipped=state.setdefault("skipped", {}),
            tool_names=state.setdefault("tool_names", {}),
            injected=state.get("injected", 0),
            hidden_ids=state.setdefault("hidden_ids", {}),
            carries=secret_finder(hidden_values(presets)),
            hits=hits,
        )

    def bind(self, provider: _Provider, named: list[tuple[str, str]], replaced: list[str]) -> None:
        """Add the provider's tools, bound to its instance, in place of the ``replaced`` names."""
        instance, key = provider.instance, provider.key
        tools = [
            as_tool(getattr(instance, attr))
            .with_name(name)
            .with_metadata(discovery_depth=self.depth, provider=provider.shown_key)
            for attr, name in named
        ]
        self.remove.extend(replaced)
        self.injected += len(tools) - len(replaced)
        self.instances[key] = instance
        self.tool_names[key] = [t.name for t in tools]
        self.pending_names.update(t.name for t in tools)
        self.add.extend(tools)
        self.labels.append(provider.label)
        self.events.append(
            ProviderDiscovered(
                iteration=self.context.iteration,
                provider=type(instance).__name__,
                provider_class=_qualified(type(instance)),
                instance_id=provider.instance_id,
                tool_names=tuple(t.name for t in tools),
                depth=self.depth,
            )
        )


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


def _shown_id(
    hidden: dict[str, str], key: str, instance_id: str, carries: Callable[[str], bool]
) -> str:
    """The id a discovered instance is shown and named by: its own, or ``hidden_<n>`` when
    it ``carries`` a secret (a registered one, or a preset value of the tool that returned
    it, by the rule of ``Tool.hidden_from_model``). ``n`` counts the run's hidden ids in
    the order they were found, so the same run always gives the same names."""
    if not carries(instance_id):
        return instance_id
    if key not in hidden:
        hidden[key] = f"hidden_{len(hidden) + 1}"
    return hidden[key]
