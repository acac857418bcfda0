"""The corpus of guided search: scripts of runs that got somewhere new.

A run whose features include progress never seen before (a successful call after a
new one, a tool succeeding once more, a toolset or strategy state) is kept as a
script: its turns up to its last successful call, without the turns whose calls all
failed (the references of the turns kept are renumbered). Later examples replay a
prefix of an entry before drawing on, so the search goes on from where it got to.

Which entry an example starts from is weighted by rarity (as rare-branch fuzzers do):
an entry weighs more when the features it brought are still seen by few runs, so the
search spends its examples past the newest, least explored progress rather than on
paths every run takes. Weights are fixed for a round (examples must repeat).
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from harness.fuzz.agent._shrink import step_calls, without_turns

if TYPE_CHECKING:
    from harness.fuzz.agent._runs import FuzzedRun

__all__ = ["Corpus", "corpus_entry", "depth", "is_progress"]

Steps = list[dict[str, Any]]


def is_progress(feature: str) -> bool:
    """Whether a feature is progress (not a failed call, not how the run ended; a new
    extreme of a number, ``low:withdraw.balance``, is)."""
    return not (feature.startswith("end:") or (feature.startswith("call:") and ":error" in feature))


def depth(entry: Steps) -> int:
    """How far an entry got: the distinct tools it calls (one tool called ten times is
    not deep), its failed turns being left out."""
    return len({str(call.get("call")) for step in entry for call in step_calls(step)})


def corpus_entry(fuzzed: FuzzedRun) -> Steps:
    """The run's script to keep: up to its last successful call, failed turns left out."""
    steps = fuzzed.steps()
    failed: set[int] = set()
    last_success = -1
    calls = iter(call for iteration in fuzzed.run.trace.iterations for call in iteration.calls)
    for position, step in enumerate(steps):
        made = [next(calls, None) for _ in step_calls(step)]
        if not made:
            continue
        if all(c is None or c.is_error for c in made):
            failed.add(position)
        else:
            last_success = position
    kept = steps[: last_success + 1]
    for position in sorted((i for i in failed if i <= last_success), reverse=True):
        trimmed = without_turns(kept, {position})  # None: a kept turn copies from it
        if trimmed is not None:
            kept = trimmed
    return kept


@dataclasses.dataclass(frozen=True)
class _Entry:
    steps: Steps
    brought: frozenset[str]
    """The progress features first seen in the run it came from."""


class Corpus:
    """Entries and how often each feature was seen; ``frozen()`` for a round."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.entries: list[_Entry] = []
        self.hits: collections.Counter[str] = collections.Counter()

    def __len__(self) -> int:
        return len(self.entries)

    def seen(self, features: frozenset[str]) -> None:
        """Count one run's features."""
        self.hits.update(features)

    def weight(self, entry: _Entry) -> int:
        """1 plus 64 per brought feature divided by the runs that saw it."""
        rarity = sum(1 / max(self.hits[f], 1) for f in entry.brought)
        return 1 + int(64 * rarity)

    def add(
        self,
        fuzzed: FuzzedRun,
        new: frozenset[str],
        trim: Callable[[Steps, frozenset[str]], Steps] | None = None,
    ) -> None:
        """Keep ``fuzzed`` for the progress ``new`` it made, trimmed by ``trim`` (the
        smallest script still making that progress); the lightest entry goes when the
        corpus is full."""
        steps = corpus_entry(fuzzed)
        brought = frozenset(f for f in new if is_progress(f))
        if not steps or not brought:
            return
        if trim is not None:
            steps = trim(steps, brought)
        self.entries.append(_Entry(steps=steps, brought=brought))
        if len(self.entries) > self.size:
            lightest = min(
                range(len(self.entries)), key=lambda i: (self.weight(self.entries[i]), i)
            )
            del self.entries[lightest]

    def frozen(self) -> tuple[tuple[Steps, ...], tuple[int, ...]]:
        """The entries and their weights, fixed for one round."""
        return tuple(e.steps for e in self.entries), tuple(self.weight(e) for e in self.entries)
