"""The injection strategy interface: strategies look at a context and return changes."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from harness._errors import HarnessError, StrategyError
from harness.loop._events import Event
from harness.loop._model import ModelCapabilities, Usage
from harness.messages import Message, ToolCall
from harness.tools import Tool, ToolResult

__all__ = [
    "ChangeVia",
    "DeclaredChanges",
    "InjectionContext",
    "InjectionStrategy",
    "StrategyChain",
    "ToolsetChange",
]


ChangeVia = Literal["edit", "addition"]
"""How a change's tools reach the model: ``edit`` (``add`` declares them in ``tools``, the
tool result carries ``reveal``) or ``addition`` (a system message the client writes
carries both: the provider's mid-conversation addition, ``tools`` left as it was)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ToolsetChange:
    """What a strategy wants done to the offered toolset; only the loop applies it.

    Applied in this order: ``remove``, ``replace`` (same name, new tool), ``add``.
    """

    add: tuple[Tool, ...] = ()
    """Tools to add (a name already offered is an error: use ``replace``)."""
    remove: tuple[str, ...] = ()
    """Names to remove (names not offered are ignored)."""
    replace: tuple[Tool, ...] = ()
    """Tools that take the place of the offered tool with the same name."""
    reason: str = ""
    """Why, in words, for the trace."""
    strategy: str = ""
    """Who asked; filled in with the strategy's name when empty."""
    events: tuple[Event, ...] = ()
    """Extra events to deliver (warnings, discoveries, limits)."""
    result_note: str | None = None
    """Text appended to the tool result the model reads (e.g. "now available: ...")."""
    section_key: str | None = None
    """The prompt section behind the change, when there is one."""
    reveal: tuple[str, ...] = ()
    """Deferred tools of the toolset that the tool result reveals (native deferral instead
    of ``add``: the ``tools`` array stays, the result carries the tools' references)."""
    via: ChangeVia = "edit"
    """How ``add`` and ``reveal`` reach the model. ``addition``: a system message carrying
    their definitions is written into the history before the next request (OpenAI
    Responses ``additional_tools``, Anthropic ``tool_addition``); added tools join the
    toolset without being declared in ``tools`` (a deferred one stays declared deferred
    and the addition reveals it). Only for models with ``capabilities.tool_additions``:
    ``harness.injection.Delivery`` picks it, with its fallback. A change before the run's
    first request declares its tools whatever ``via`` says (there is no prefix to keep)."""
    messages: tuple[Message, ...] = ()
    """Messages the client writes into the history before the next request, after this
    iteration's tool results (a new system prompt at a handoff, an assistant message such
    as crewAI's "give your final answer"); a written assistant message's calls must be
    answered by written tool messages."""

    @property
    def is_empty(self) -> bool:
        """True when the change changes nothing and says nothing."""
        return not (
            self.add
            or self.remove
            or self.replace
            or self.events
            or self.result_note
            or self.reveal
            or self.messages
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class InjectionContext:
    """The read-only view a strategy gets."""

    history: Sequence[Message]
    """The message history so far."""
    offered: tuple[str, ...]
    """Names of the tools offered now."""
    tools: Mapping[str, Tool]
    """The offered tools by name (read-only)."""
    iteration: int
    """The current iteration (1-based)."""
    state: dict[str, Any]
    """The run's shared state (blackboard); strategies may read and write it."""
    call: ToolCall | None = None
    """The call that just completed (``None`` in before-turn hooks)."""
    tool: Tool | None = None
    """The tool that ran (``None`` for unknown tools and before-turn hooks)."""
    result: ToolResult | None = None
    """Its result: ``result.value`` is the Python object, ``result.content`` the JSON."""
    called: Mapping[str, int] = dataclasses.field(default_factory=dict)
    """How many times each tool name was called successfully so far in the run."""
    strategy_state: dict[int, dict[str, Any]] = dataclasses.field(default_factory=dict)
    capabilities: ModelCapabilities = dataclasses.field(default_factory=ModelCapabilities)
    """What the run's model supports (e.g. ``supports_dynamic_tools``)."""
    run_id: str = ""
    """Identity of the run (the ``CallContext.run_id`` its tools see)."""
    usage: Mapping[str, Usage] = dataclasses.field(default_factory=dict)
    """Live token usage per model so far (``Trace.usage``: nested runs that returned
    included); read-only."""
    turn: int = 1
    """The user turn (1-based): a ``Session``'s ``send`` starts the next one."""
    turn_iteration: int = 1
    """The iteration within the user turn (1-based; ``iteration`` counts the session's)."""

    def state_for(self, strategy: object) -> dict[str, Any]:
        """Private per-run storage for ``strategy`` (strategies stay reusable across runs)."""
        return self.strategy_state.setdefault(id(strategy), {})


class InjectionStrategy:
    """Base for strategies: override one or more hooks; return ``None`` for no change.

    ``on_tool_result`` and ``before_turn`` return toolset changes; ``tool_choice`` decides
    the next request's tool choice (harness/loop/_tool_choice.py).
    """

    resets_per_turn: bool = False
    """True: the strategy's ``state_for`` storage starts empty at each user turn of a
    ``Session`` (the default keeps it across turns, as the toolset and blackboard are)."""

    @property
    def name(self) -> str:
        """The name recorded in the trace: by default the class name; the harness's own
        strategies use short lowercase names (docs/pytest-plugin.md#strategy-names)."""
        return type(self).__name__

    def on_tool_result(
        self, context: InjectionContext
    ) -> ToolsetChange | Sequence[ToolsetChange] | None:
        """Called after each tool call, in call order."""
        return None

    def before_turn(
        self, context: InjectionContext
    ) -> ToolsetChange | Sequence[ToolsetChange] | None:
        """Called before each model request."""
        return None

    def tool_choice(self, context: InjectionContext) -> Any:
        """The next request's ``tool_choice`` (a ``ToolChoice``, ``auto`` / ``none`` /
        ``required`` or a tool name), or ``None`` to leave it to the next strategy of the
        chain (and finally ``LoopOptions.tool_choice``). Called after ``before_turn``."""
        return None


class DeclaredChanges(InjectionStrategy):
    """Applies the change a tool declared in its own result (``ToolResult.change``).

    This is how self-expanding tools (unfolding facades) work; it is always first
    in the default chain. ``change`` may also be a function of the ``InjectionContext``
    returning the change (or ``None``), for tools whose change depends on what is offered.
    """

    @property
    def name(self) -> str:
        """``declared`` in the trace (a facade's own changes say ``unfolding``)."""
        return "declared"

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        result = context.result
        if result is None or result.change is None or result.is_error:
            return None
        change = result.change
        if callable(change) and not isinstance(change, ToolsetChange):
            change = change(context)  # a deferred change: computed against the offered tools
            if change is None:
                return None
        if not isinstance(change, ToolsetChange):
            raise TypeError(
                "ToolResult.change must be a ToolsetChange or a function "
                f"(InjectionContext) -> ToolsetChange | None, got {type(change).__name__}"
            )
        return change

    def _nothing_for(self, result: ToolResult) -> bool:
        """True when ``on_tool_result`` returns ``None`` for ``result`` (harness/loop/_fast.py)."""
        return result.change is None or result.is_error


class StrategyChain(InjectionStrategy):
    """Runs strategies in order and collects all their changes."""

    def __init__(self, strategies: Sequence[InjectionStrategy]) -> None:
        self.strategies = tuple(strategies)
        # strategies that keep a base no-op hook are skipped (saves a call per turn)
        self._results = tuple(s for s in self.strategies if uses_hook(s, "on_tool_result"))
        self._turns = tuple(s for s in self.strategies if uses_hook(s, "before_turn"))

    def on_tool_result(self, context: InjectionContext) -> list[ToolsetChange]:
        return _collect(self._results, context, "on_tool_result")

    def before_turn(self, context: InjectionContext) -> list[ToolsetChange]:
        return _collect(self._turns, context, "before_turn")

    def tool_choice(self, context: InjectionContext) -> Any:
        for strategy in self.strategies:
            choice = strategy.tool_choice(context)
            if choice is not None:
                return choice
        return None


def uses_hook(strategy: InjectionStrategy, hook: str) -> bool:
    """False when ``strategy`` keeps the base class's no-op ``hook`` (it never changes anything)."""
    method = getattr(strategy, hook, None)
    function = getattr(method, "__func__", method)
    if isinstance(strategy, StrategyChain) and function is getattr(StrategyChain, hook):
        if hook == "tool_choice":
            return any(uses_hook(s, hook) for s in strategy.strategies)
        return bool(strategy._results if hook == "on_tool_result" else strategy._turns)
    return function is not getattr(InjectionStrategy, hook)


def hook_strategies(strategy: InjectionStrategy, hook: str) -> tuple[InjectionStrategy, ...]:
    """The strategies to consult for ``hook``: chains flattened, no-op hooks left out."""
    if isinstance(strategy, StrategyChain) and getattr(type(strategy), hook) is getattr(
        StrategyChain, hook
    ):
        return tuple(leaf for inner in strategy.strategies for leaf in hook_strategies(inner, hook))
    return (strategy,) if uses_hook(strategy, hook) else ()


def _collect(
    strategies: Sequence[InjectionStrategy], context: InjectionContext, hook: str
) -> list[ToolsetChange]:
    out: list[ToolsetChange] = []
    for strategy in strategies:
        out.extend(consult(strategy, hook, context))
    return out


def consult(
    strategy: InjectionStrategy, hook: str, context: InjectionContext
) -> list[ToolsetChange]:
    """Call ``strategy``'s ``hook`` and return its changes, each labelled with its strategy.

    An unexpected exception, or a return value that is not a change, becomes a
    ``StrategyError`` naming the strategy (``HarnessError``s pass through).
    """
    try:
        got = getattr(strategy, hook)(context)
    except HarnessError:
        raise
    except Exception as exc:
        where = _where(strategy, hook, context)
        raise StrategyError(f"{where} raised {type(exc).__name__}: {exc}") from exc
    if got is None:
        return []
    if isinstance(got, ToolsetChange):
        items: Sequence[Any] = (got,)
    elif isinstance(got, (list, tuple)) or (
        isinstance(got, Sequence) and not isinstance(got, (str, bytes))
    ):
        if not got:
            return []
        items = got
    else:
        raise StrategyError(
            f"{_where(strategy, hook, context)} returned {got!r}; "
            "return a ToolsetChange, a list of them, or None"
        )
    out = []
    for change in items:
        if not isinstance(change, ToolsetChange):
            raise StrategyError(
                f"{_where(strategy, hook, context)} returned {change!r} in its list; "
                "return ToolsetChange objects only"
            )
        out.append(
            change if change.strategy else dataclasses.replace(change, strategy=strategy.name)
        )
    return out


def _where(strategy: InjectionStrategy, hook: str, context: InjectionContext) -> str:
    return f"strategy {strategy.name!r} in {hook} at iteration {context.iteration}"
