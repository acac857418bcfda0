"""Keeping the requests runs send, for the cache model: ``record_requests`` and ``RecordingModel``.

The loop does not keep its requests (the trace records names, calls and changes); the
cost of a run is a function of them, so a run whose cost is wanted sends them through a
``RecordingModel``. ``record_requests()`` does that for every run made inside its block
(composing with an ``override_model`` around it) and pairs each run's requests with the
run's trace.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence

from harness._errors import UsageError
from harness.loop import Model, ModelRequest, ModelResponse, Trace, capture_run, override_model
from harness.loop._capture import CapturedRun, active_override

__all__ = ["RecordedRun", "RecordingModel", "RequestLog", "record_requests"]


class RecordingModel(Model):
    """``inner`` unchanged, keeping every request it answers in ``requests``.

    The requests keep their history views (the loop's history only grows), so keeping
    them costs one reference each.
    """

    def __init__(self, inner: Model) -> None:
        if not isinstance(inner, Model):
            raise UsageError(f"RecordingModel wraps a harness Model, got {inner!r}")
        self.inner = inner
        self.name = inner.name
        self.capabilities = inner.capabilities
        self.requests: list[ModelRequest] = []
        """Every request, in order."""

    def request(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return self.inner.request(request)

    async def arequest(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return await self.inner.arequest(request)

    def end_run(self, *, completed: bool) -> None:
        self.inner.end_run(completed=completed)

    def __repr__(self) -> str:
        return f"RecordingModel({self.inner!r}, {len(self.requests)} requests)"


@dataclasses.dataclass(frozen=True, kw_only=True)
class RecordedRun:
    """One run's requests and, when it was captured, its trace."""

    requests: tuple[ModelRequest, ...]
    trace: Trace | None = None
    model: str | None = None
    """The name of the model the run used."""


class RequestLog:
    """The runs made inside a ``record_requests()`` block, in the order they started."""

    def __init__(self) -> None:
        self._models: list[RecordingModel] = []
        self._captured: list[CapturedRun] = []

    def _wrap(self, model: Model) -> Model:
        recorder = RecordingModel(model)
        self._models.append(recorder)
        return recorder

    @property
    def runs(self) -> list[RecordedRun]:
        """Each run with requests, paired with its trace (by its first message)."""
        unclaimed = list(self._captured)
        runs = []
        for recorder in self._models:
            if not recorder.requests:
                continue
            first = recorder.requests[0].messages
            trace = None
            for captured in unclaimed:
                if first and captured.messages and captured.messages[0] is first[0]:
                    trace = captured.trace
                    unclaimed.remove(captured)
                    break
            runs.append(
                RecordedRun(
                    requests=tuple(recorder.requests), trace=trace, model=recorder.inner.name
                )
            )
        return runs

    @property
    def requests(self) -> list[ModelRequest]:
        """Every recorded request, run after run."""
        return [r for run in self.runs for r in run.requests]

    def __len__(self) -> int:
        return len(self.runs)

    def __repr__(self) -> str:
        return f"<RequestLog {len(self.runs)} run(s), {len(self.requests)} request(s)>"


@contextlib.contextmanager
def record_requests() -> Iterator[RequestLog]:
    """Record the requests of every run made inside the block (nested runs included).

    ``with record_requests() as log: agent.ask(...)`` then ``harness.cost.analyse(log,
    format="anthropic-messages")``. An ``override_model`` outside the block still applies
    (the recorder wraps the model it chooses); one inside the block replaces the recorder.
    """
    log = RequestLog()
    outer = active_override()

    def wrap(model: Model) -> Model:
        return log._wrap(outer(model) if outer is not None else model)

    with capture_run() as captured, override_model(wrap):
        try:
            yield log
        finally:
            log._captured = list(captured.all_runs)


def runs_of(requests: Sequence[ModelRequest]) -> list[RecordedRun]:
    """Requests without run boundaries split into runs (a new run starts at iteration 1
    again, or lower)."""
    runs: list[list[ModelRequest]] = []
    for request in requests:
        if not runs or request.iteration <= runs[-1][-1].iteration:
            runs.append([])
        runs[-1].append(request)
    return [RecordedRun(requests=tuple(r)) for r in runs]
