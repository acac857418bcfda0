"""What ``fuzz_agent`` found: the report, its ``--json`` form and the readable counterexample."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from harness._secrets import scrub_message
from harness.fuzz.agent._args import short_repr
from harness.fuzz.agent._judge import Finding
from harness.fuzz.agent._shrink import step_calls
from harness.models._scripted._refs import REF_KEY, ref_from_data
from harness.scenarios import format_timeline, timeline_rows
from harness.scenarios._coverage import InjectionCoverage
from harness.scenarios._properties import AgentRun

__all__ = ["JSON_KEYS", "AgentFuzzReport", "counterexample_text", "describe_steps"]

JSON_KEYS = ("found", "property", "message", "examples", "seconds", "steps", "counterexample")
"""The keys of ``harness fuzz --agent --json``, in order (a contract: see docs/fuzzing.md)."""


def _shown_args(call: dict[str, Any], arguments: str | None) -> str:
    """``name=value`` pairs: the value sent, and where a copied one came from."""
    sent: Any = None
    if arguments is not None:
        try:
            sent = json.loads(arguments)
        except ValueError:
            sent = None
    args = call.get("args") or {}
    parts = []
    for key, given in args.items() if isinstance(args, dict) else ():
        value = sent.get(key, given) if isinstance(sent, dict) else given
        if isinstance(given, dict) and REF_KEY in given:
            ref = ref_from_data(given, "counterexample")
            parts.append(f"{key}={short_repr(value)} <- {ref.describe()}")
        else:
            parts.append(f"{key}={short_repr(value)}")
    return ", ".join(parts)


def describe_steps(steps: list[dict[str, Any]], run: AgentRun) -> list[str]:
    """One line per model turn: the calls with their arguments (values as sent, and
    the result each copied value came from), or the answer."""
    made = [call for iteration in run.trace.iterations for call in iteration.calls]
    position = 0
    lines = []
    for step in steps:
        calls = step_calls(step)
        if not calls:
            if "raise" in step:
                lines.append(f"<provider error {step['raise']}>")
            else:
                lines.append(f"answer({short_repr(step.get('reply', step.get('output')))})")
            continue
        shown = []
        for call in calls:
            record = made[position] if position < len(made) else None
            position += 1
            name = record.name if record is not None else call["call"]
            arguments = record.arguments if record is not None else None
            shown.append(f"{name}({_shown_args(call, arguments)})")
        lines.append(" + ".join(shown))
    return lines


def counterexample_text(
    steps: list[dict[str, Any]], run: AgentRun, *, hidden: Sequence[Any] = ()
) -> str:
    """The calls the model made, numbered, with arguments, then the timeline table;
    registered secrets and ``hidden`` (the agent's preset and context values) scrubbed,
    as the run's error comes from the agent's code."""
    lines = [f"counterexample ({len(steps)} model turn(s)):"]
    lines += [f"  {n}. {line}" for n, line in enumerate(describe_steps(steps, run), start=1)]
    error = run.error
    if error is not None:
        lines.append(f"  the run ended with {type(error).__name__}: {error}")
    rows = timeline_rows(run.trace)
    if rows:
        lines.append("timeline:")
        lines += [f"  {line}" for line in format_timeline(rows).splitlines()]
    return scrub_message("\n".join(lines), hidden)


@dataclasses.dataclass(kw_only=True)
class AgentFuzzReport:
    """The outcome of ``fuzz_agent``; reports of workers merge into one."""

    agent: str
    """The agent factory (``module:function``)."""
    examples: int = 0
    """Runs made (shrinking included)."""
    seconds: float = 0.0
    """Wall-clock seconds of the whole search (shrinking included)."""
    seed: int = 0
    """The seed of the search (worker ``i`` used ``seed + 1000 * i``)."""
    finding: Finding | None = None
    """The (first) failure, shrunk."""
    found_after: float | None = None
    """Seconds from the start to the first failing run (before shrinking)."""
    found_cpu: float | None = None
    """CPU seconds of the searching process up to the first failing run (a fairer clock
    than ``found_after`` on a busy machine)."""
    examples_to_find: int | None = None
    """Runs made up to and including the first failing one."""
    moves: dict[str, int] = dataclasses.field(default_factory=dict)
    """How the fuzzer made the first failing run's calls, counted: ``repeat`` (an
    earlier call again), ``largest``/``smallest`` (its number at the schema's bound or
    the extreme seen), ``limit`` (a number walking a total seen toward a limit seen),
    ``copy``/``boundary`` (a value seen, or a number seen moved by one), ``schema`` and
    ``text`` (drawn), ``search`` (a tool search); empty when it came from the database."""
    steps: int | None = None
    """Model turns of the shrunk counterexample."""
    counterexample: str | None = None
    """The scenario file written (``harness run`` replays it)."""
    counterexample_text: str | None = None
    """The shrunk run as numbered calls and its timeline."""
    coverage: InjectionCoverage = dataclasses.field(default_factory=InjectionCoverage)
    """Injection coverage over every run."""
    behaviours: int = 0
    """Distinct coverage features seen (offered sets, tool outcomes, transitions)."""
    rounds: int = 0
    workers: int = 1
    interrupted: bool = False
    busy: float = 0.0
    """Seconds searching, summed over workers."""
    by_worker: dict[str, tuple[int, float]] = dataclasses.field(default_factory=dict)

    @property
    def found(self) -> bool:
        """A property, invariant, crash or hang failed."""
        return self.finding is not None

    @property
    def per_second(self) -> float:
        """Runs per wall-clock second."""
        return self.examples / self.seconds if self.seconds else 0.0

    @property
    def per_worker_second(self) -> float:
        """Runs per second of one worker (per core)."""
        return self.examples / self.busy if self.busy else 0.0

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` object: exactly ``JSON_KEYS``."""
        return {
            "found": self.found,
            "property": self.finding.name if self.finding else None,
            "message": self.finding.message if self.finding else None,
            "examples": self.examples,
            "seconds": round(self.seconds, 3),
            "steps": self.steps,
            "counterexample": self.counterexample,
        }

    def merge(self, other: AgentFuzzReport) -> None:
        """Add another worker's report (its finding wins only when this has none)."""
        self.examples += other.examples
        self.busy += other.busy
        self.rounds += other.rounds
        self.interrupted = self.interrupted or other.interrupted
        self.coverage.merge(other.coverage)
        self.behaviours = max(self.behaviours, other.behaviours)
        for name, (examples, busy) in other.by_worker.items():
            before = self.by_worker.get(name, (0, 0.0))
            self.by_worker[name] = (before[0] + examples, before[1] + busy)
        if self.finding is None and other.finding is not None:
            for field in (
                "finding",
                "found_after",
                "found_cpu",
                "examples_to_find",
                "moves",
                "steps",
                "counterexample",
                "counterexample_text",
                "seed",
            ):
                setattr(self, field, getattr(other, field))

    def explain(self) -> str:
        """A readable account: the failure and its counterexample, or that none was found."""
        if self.finding is None:
            return (
                f"no failure in {self.examples} runs of {self.agent} "
                f"({self.seconds:.1f}s, seed {self.seed})"
            )
        lines = [f"FAIL {self.finding}", self.counterexample_text or ""]
        if self.counterexample:
            lines.append(f"replay: harness run {self.counterexample}")
        return "\n".join(line for line in lines if line)

    def raise_for_failure(self) -> None:
        """``AssertionError`` with ``explain()`` when something failed (for pytest)."""
        if self.finding is not None:
            raise AssertionError(self.explain())
