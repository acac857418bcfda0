"""Agent factories: everything ``harness.run`` needs except the model, built fresh per run.

A factory is a callable with no arguments returning the keyword arguments of
``harness.run`` without the model: ``prompt`` (required), ``tools``, ``strategies``,
``system``, ``options``, ``observers``, ``state`` and loose loop options
(``max_iterations=5``). The fuzzer calls it once per example and a scenario file
names it (``agent: module:factory``) to replay a counterexample on fresh state.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness._errors import HarnessError, UsageError
from harness._names import did_you_mean, format_names
from harness._secrets import hidden_values, scrub_message
from harness.loop import InjectionStrategy, LoopOptions, Model, Observer, RunResult, run
from harness.messages import Message
from harness.tools import ContextObjects, Tool, Toolset, as_tool

__all__ = ["AGENT_KEYS", "Agent", "AgentFactory", "build_agent", "describe_factory", "run_agent"]

AgentFactory = Callable[[], Mapping[str, Any]]
"""Makes one fresh agent: the keyword arguments of ``harness.run`` except the model."""

AGENT_KEYS = ("prompt", "tools", "strategies", "system", "options", "observers", "state")
"""The keys a factory may return besides loose ``LoopOptions`` fields."""

_OPTION_KEYS = tuple(f.name for f in dataclasses.fields(LoopOptions))
_DEFAULT_OPTIONS = LoopOptions()


def describe_factory(factory: object) -> str:
    """How a message names a factory: ``module:qualname``, else its ``repr``."""
    module = getattr(factory, "__module__", None)
    qualname = getattr(factory, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str):
        return f"{module}:{qualname}"
    return repr(factory)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Agent:
    """One fresh agent, checked: what ``run_agent`` passes to ``harness.run``."""

    name: str
    """The factory that made it (``module:qualname``)."""
    prompt: str | Sequence[Message]
    tools: tuple[Tool, ...]
    strategies: tuple[InjectionStrategy, ...]
    system: str | None
    options: LoopOptions
    observers: tuple[Observer, ...] = ()
    state: dict[str, Any] | None = None
    explicit_options: frozenset[str] = frozenset()
    """The loop options the factory set (the others are ``LoopOptions`` defaults)."""

    def with_defaults(self, **defaults: Any) -> Agent:
        """The agent with loop options the factory left at their default set to ``defaults``."""
        changes = {k: v for k, v in defaults.items() if k not in self.explicit_options}
        if not changes:
            return self
        return dataclasses.replace(self, options=dataclasses.replace(self.options, **changes))

    def secret_values(self) -> list[str]:
        """Preset and call-context values of the agent (the texts ``hidden_values`` hides).

        Only strings count: a preset ``limit=1000`` is not a secret to look for in text.
        """
        values: list[Any] = [
            v for tool in self.tools for v in tool.presets.values.values() if isinstance(v, str)
        ]
        values += [v for v in self.options.context.values() if isinstance(v, str)]
        texts = hidden_values(values)
        if self.options.context_objects:
            texts += ContextObjects(self.options.context_objects).secret_texts()
        return texts


def _call(factory: AgentFactory, name: str) -> Any:
    try:
        return factory()
    except HarnessError as exc:
        raise UsageError(
            scrub_message(f"agent factory {name} raised {type(exc).__name__}: {exc}")
        ) from exc
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit, GeneratorExit, a BaseException of its own
        what = (
            f"SystemExit({exc.code!r}): a factory must return the agent, not exit the process"
            if isinstance(exc, SystemExit)
            else f"{type(exc).__name__}: {exc}"
        )
        raise UsageError(scrub_message(f"agent factory {name} raised {what}")) from exc


def _tools(value: Any, name: str) -> tuple[Tool, ...]:
    if isinstance(value, Toolset):
        return tuple(value)
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise UsageError(
            f"agent factory {name}: 'tools' must be a list of tools or functions, got {value!r}"
        )
    try:
        return tuple(as_tool(t) for t in value)
    except UsageError as exc:
        raise UsageError(f"agent factory {name}: 'tools': {exc}") from None


def _strategies(value: Any, name: str) -> tuple[InjectionStrategy, ...]:
    if isinstance(value, InjectionStrategy):
        value = [value]
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise UsageError(
            f"agent factory {name}: 'strategies' must be a list of InjectionStrategy "
            f"instances, got {value!r}"
        )
    bad = [s for s in value if not isinstance(s, InjectionStrategy)]
    if bad:
        raise UsageError(
            f"agent factory {name}: 'strategies' holds {bad!r}, not InjectionStrategy "
            "instances; build them inside the factory (e.g. [EntityDiscovery()])"
        )
    return tuple(value)


def _options(data: Mapping[str, Any], name: str) -> tuple[LoopOptions, frozenset[str]]:
    loose = {k: v for k, v in data.items() if k in _OPTION_KEYS}
    given = data.get("options")
    if given is not None and loose:
        raise UsageError(
            f"agent factory {name}: give either options=LoopOptions(...) or loose loop "
            f"options ({format_names(loose)}), not both"
        )
    if given is not None:
        if not isinstance(given, LoopOptions):
            raise UsageError(
                f"agent factory {name}: 'options' must be a harness.LoopOptions, got {given!r}"
            )
        explicit = frozenset(
            f for f in _OPTION_KEYS if getattr(given, f) != getattr(_DEFAULT_OPTIONS, f)
        )
        return given, explicit
    try:
        return LoopOptions(**loose), frozenset(loose)
    except UsageError as exc:
        raise UsageError(f"agent factory {name}: {exc}") from None


def build_agent(factory: AgentFactory, *, name: str | None = None) -> Agent:
    """Call ``factory`` and check what it returned; every problem is a ``UsageError``."""
    name = name or describe_factory(factory)
    if not callable(factory):
        raise UsageError(
            f"an agent factory must be a function with no arguments returning the keyword "
            f"arguments of harness.run, got {factory!r}"
        )
    data = _call(factory, name)
    if not isinstance(data, Mapping):
        raise UsageError(
            f"agent factory {name} returned {type(data).__name__} {data!r:.80}; return a dict "
            "of harness.run keyword arguments without the model: "
            "{'prompt': ..., 'tools': [...], 'strategies': [...]}"
        )
    unknown = [k for k in data if k not in AGENT_KEYS and k not in _OPTION_KEYS]
    if unknown:
        hints = ", ".join(
            f"{k!r}{did_you_mean(str(k), (*AGENT_KEYS, *_OPTION_KEYS))}" for k in unknown
        )
        raise UsageError(
            f"agent factory {name} returned unknown key(s) {hints}; valid: "
            f"{format_names(AGENT_KEYS, quote=False)} and the LoopOptions fields"
        )
    prompt = data.get("prompt")
    if not (isinstance(prompt, str) and prompt.strip()) and not (
        isinstance(prompt, Sequence) and not isinstance(prompt, str) and prompt
    ):
        raise UsageError(
            f"agent factory {name} must return a 'prompt' (the user's message), got {prompt!r}"
        )
    system = data.get("system")
    if system is not None and not isinstance(system, str):
        raise UsageError(f"agent factory {name}: 'system' must be a text, got {system!r}")
    state = data.get("state")
    if state is not None and not isinstance(state, dict):
        raise UsageError(f"agent factory {name}: 'state' must be a dict, got {state!r}")
    observers = data.get("observers", ())
    if not isinstance(observers, Sequence) or not all(callable(o) for o in observers):
        raise UsageError(
            f"agent factory {name}: 'observers' must be a list of functions, got {observers!r}"
        )
    options, explicit = _options(data, name)
    return Agent(
        name=name,
        prompt=prompt,
        tools=_tools(data.get("tools", ()), name),
        strategies=_strategies(data.get("strategies", ()), name),
        system=system,
        options=options,
        observers=tuple(observers),
        state=state,
        explicit_options=explicit,
    )


def run_agent(model: Model, agent: Agent, **overrides: Any) -> RunResult:
    """Run ``agent`` against ``model`` with ``harness.run`` (``overrides``: loop options)."""
    options = dataclasses.replace(agent.options, **overrides) if overrides else agent.options
    return run(
        model,
        agent.prompt,
        tools=list(agent.tools),
        strategies=list(agent.strategies),
        system=agent.system if isinstance(agent.prompt, str) else None,
        options=options,
        observers=agent.observers,
        state=agent.state,
    )
