"""The ``harness_runner`` fixture's object: runs the loop and keeps every trace."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from harness import _check_sink as _sink
from harness._errors import HarnessError
from harness.loop import Model, RunResult, Trace, arun, run
from harness.scenarios import ScenarioOutcome, load_scenario, run_scenario

__all__ = ["HarnessRunner"]

_T = TypeVar("_T")


class HarnessRunner:
    """Runs tool loops for a test and records their traces for the test report.

    ``run``/``arun`` take exactly the arguments of ``harness.run``/``harness.arun``.
    A run that raises still records the trace it carried.
    """

    __test__ = False

    def __init__(self) -> None:
        self.traces: list[Trace] = []
        """Every trace recorded in this test, in order."""

    @property
    def last(self) -> Trace:
        """The most recent trace (``UsageError`` if nothing ran yet)."""
        if not self.traces:
            from harness._errors import UsageError

            raise UsageError("harness_runner has not run anything yet; call .run(...) first")
        return self.traces[-1]

    def record(self, subject: _T) -> _T:
        """Keep the trace of ``subject`` (a trace, a run result, an error raised out of a
        run) for the test's report; returns ``subject``, so code that runs the loop itself
        can be wrapped: ``result = harness_runner.record(my_agent.ask(...))``."""
        trace = subject if isinstance(subject, Trace) else getattr(subject, "trace", None)
        if isinstance(trace, Trace) and all(t is not trace for t in self.traces):
            self.traces.append(trace)
            _sink.record_trace(trace)
        return subject

    def _record_error(self, exc: BaseException) -> None:
        if isinstance(exc, HarnessError):
            self.record(exc)

    def run(self, model: Model, prompt: Any, **kwargs: Any) -> RunResult:
        """``harness.run(model, prompt, **kwargs)``, recorded."""
        try:
            result = run(model, prompt, **kwargs)
        except BaseException as exc:
            self._record_error(exc)
            raise
        self.record(result.trace)
        return result

    async def arun(self, model: Model, prompt: Any, **kwargs: Any) -> RunResult:
        """``harness.arun(model, prompt, **kwargs)``, recorded."""
        try:
            result = await arun(model, prompt, **kwargs)
        except BaseException as exc:
            self._record_error(exc)
            raise
        self.record(result.trace)
        return result

    def run_scenario(self, path: str | Path) -> ScenarioOutcome:
        """Load and run a scenario file; its trace is recorded."""
        outcome = run_scenario(load_scenario(path))
        self.record(outcome.trace)
        return outcome

    def __len__(self) -> int:
        return len(self.traces)

    def __iter__(self) -> Any:
        return iter(self.traces)

    def __repr__(self) -> str:
        return f"<HarnessRunner {len(self.traces)} trace(s)>"
