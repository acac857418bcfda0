"""The outer main loop for sectioned prompts: restart when the model cannot take new tools.

``run_with_sections`` renders the template into the system prompt, runs the loop,
and on ``VisibilityExpansionRequired`` persists the requested overrides in the
session state and evaluates the run again from the start with the re-rendered
prompt (the opened sections now in full, with their tools offered from the start).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from harness._errors import UsageError, VisibilityExpansionRequired
from harness.injection._sections import PromptTemplate, Visibility
from harness.injection._sections_strategy import SESSION_KEY, SectionDisclosure, session_of
from harness.loop import (
    Event,
    InjectionStrategy,
    Model,
    Observer,
    RunResult,
    arun,
    record_metric,
    run,
)
from harness.messages import Message, SystemMessage

__all__ = ["RunRestarted", "arun_with_sections", "run_with_sections"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RunRestarted(Event):
    """The run was evaluated again from the start with sections shown in full."""

    attempt: int
    """1 for the first restart, 2 for the second, ..."""
    section_keys: tuple[str, ...]
    """The sections that are now shown in full."""
    reason: str


class _Restarter:
    """The restart bookkeeping shared by the sync and async outer loops."""

    def __init__(
        self,
        prompt: str | Sequence[Message],
        *,
        sections: SectionDisclosure | PromptTemplate | None,
        strategies: Sequence[InjectionStrategy] | None,
        system: str | None,
        observers: Sequence[Observer],
        state: dict[str, Any] | None,
        max_restarts: int,
    ) -> None:
        found = [s for s in strategies or () if isinstance(s, SectionDisclosure)]
        if isinstance(sections, PromptTemplate):
            sections = SectionDisclosure(sections)
        if sections is not None and sections not in found:
            found.append(sections)
        if len(found) != 1:
            raise UsageError(
                "run_with_sections needs exactly one SectionDisclosure (pass sections= a "
                f"PromptTemplate or SectionDisclosure, or put one in strategies), got {len(found)}"
            )
        if not isinstance(max_restarts, int) or max_restarts < 0:
            raise UsageError(f"max_restarts must be an int >= 0, got {max_restarts!r}")
        self.disclosure = found[0]
        self.strategies = [s for s in strategies or () if s is not self.disclosure]
        self.strategies.append(self.disclosure)
        self.prompt = prompt
        self.system = system
        self.observers = tuple(observers)
        self.caller_state = state
        self.base_state = dict(state or {})
        self.session = session_of(self.base_state)
        self.max_restarts = max_restarts
        self.restarted: list[RunRestarted] = []

    def attempt(self) -> dict[str, Any]:
        """Keyword arguments for the next run: the re-rendered prompt and a fresh state."""
        rendered = self.disclosure.template.render(self.session.overrides)
        state = {**self.base_state, SESSION_KEY: self.session}
        if isinstance(self.prompt, str):
            system = "\n\n".join(p for p in (self.system, rendered) if p)
            return {"prompt": self.prompt, "system": system, "state": state}
        if self.system is not None:
            raise UsageError("pass system= only with a text prompt; put it in the messages")
        messages = [SystemMessage(content=rendered), *self.prompt]
        return {"prompt": messages, "system": None, "state": state}

    def restart(self, exc: VisibilityExpansionRequired) -> None:
        """Persist the overrides of ``exc`` (or re-raise it when out of restarts)."""
        if len(self.restarted) >= self.max_restarts:
            raise exc
        for key, visibility in exc.overrides.items():
            self.session.overrides[key] = Visibility(visibility)
        self.session.restarts += 1
        record_metric("visibility_restarts")
        event = RunRestarted(
            iteration=0,
            attempt=self.session.restarts,
            section_keys=exc.section_keys,
            reason=exc.reason,
        )
        self.restarted.append(event)
        for observer in self.observers:
            observer(event)

    def finish(self, result: RunResult) -> RunResult:
        """Record the restarts in the final trace and hand the state back to the caller."""
        result.trace.restarts = len(self.restarted)
        result.trace.events[:0] = self.restarted
        if self.caller_state is not None:
            self.caller_state.update(result.state)
        return result


def run_with_sections(
    model: Model,
    prompt: str | Sequence[Message],
    *,
    sections: SectionDisclosure | PromptTemplate | None = None,
    strategies: Sequence[InjectionStrategy] | None = None,
    system: str | None = None,
    observers: Sequence[Observer] = (),
    state: dict[str, Any] | None = None,
    max_restarts: int = 5,
    **run_kwargs: Any,
) -> RunResult:
    """``run`` with a sectioned system prompt, restarting for models without dynamic tools.

    ``run_kwargs`` go to ``run`` (``tools=``, ``options=``, loop options). The final
    trace has ``restarts`` set and a ``RunRestarted`` event per restart; the session
    (overrides and counters) is in ``result.state["harness.sections"]``.
    """
    restarter = _Restarter(
        prompt,
        sections=sections,
        strategies=strategies,
        system=system,
        observers=observers,
        state=state,
        max_restarts=max_restarts,
    )
    while True:
        try:
            result = run(
                model,
                strategies=restarter.strategies,
                observers=observers,
                **restarter.attempt(),
                **run_kwargs,
            )
        except VisibilityExpansionRequired as exc:
            restarter.restart(exc)
            continue
        return restarter.finish(result)


async def arun_with_sections(
    model: Model,
    prompt: str | Sequence[Message],
    *,
    sections: SectionDisclosure | PromptTemplate | None = None,
    strategies: Sequence[InjectionStrategy] | None = None,
    system: str | None = None,
    observers: Sequence[Observer] = (),
    state: dict[str, Any] | None = None,
    max_restarts: int = 5,
    **run_kwargs: Any,
) -> RunResult:
    """Async ``run_with_sections``."""
    restarter = _Restarter(
        prompt,
        sections=sections,
        strategies=strategies,
        system=system,
        observers=observers,
        state=state,
        max_restarts=max_restarts,
    )
    while True:
        try:
            result = await arun(
                model,
                strategies=restarter.strategies,
                observers=observers,
                **restarter.attempt(),
                **run_kwargs,
            )
        except VisibilityExpansionRequired as exc:
            restarter.restart(exc)
            continue
        return restarter.finish(result)
