"""Realistic agents with planted bugs: the benchmark of ``harness fuzz --agent``.

Each module has a factory ``make()`` (the keyword arguments of ``harness.run`` without
the model, fresh state each call), the property that catches its bug, and a
``KNOWN_BAD`` script: the shortest calls reaching the bug (``depth`` calls), which
``tests/fuzz/test_benchmark_agents.py`` replays to prove the bug is really there and
that the property holds without it. ``benchmarks/fuzz_agents_bench.py`` measures how
fast the fuzzer finds each one.
"""

from __future__ import annotations

import dataclasses

__all__ = ["AGENTS", "BenchAgent"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class BenchAgent:
    """One agent of the benchmark."""

    name: str
    factory: str
    """Import path of the factory (``fuzz_agents.mail:make`` with ``benchmarks/`` on the path)."""
    properties: tuple[str, ...]
    """Import paths of the properties that catch the bug (empty: a built-in invariant does)."""
    depth: int
    """Tool calls of the shortest path to the bug."""
    turns: int
    """Model turns of that path, with the final answer (two calls in one turn count once)."""
    kind: str
    """What makes the bug deep."""


AGENTS: tuple[BenchAgent, ...] = (
    BenchAgent(
        name="mail",
        factory="fuzz_agents.mail:make",
        properties=("fuzz_agents.mail:kept_threads_survive",),
        depth=3,
        turns=4,
        kind="ids returned by earlier tools",
    ),
    BenchAgent(
        name="crm",
        factory="fuzz_agents.crm:make",
        properties=("fuzz_agents.crm:refunds_stay_with_their_customer",),
        depth=3,
        turns=4,
        kind="entity discovery (tools named after fresh ids)",
    ),
    BenchAgent(
        name="shop",
        factory="fuzz_agents.shop:make",
        properties=("fuzz_agents.shop:charged_at_most_once",),
        depth=6,
        turns=7,
        kind="a state machine",
    ),
    BenchAgent(
        name="admin",
        factory="fuzz_agents.admin:make",
        properties=("fuzz_agents.admin:owners_are_never_deleted",),
        depth=3,
        turns=4,
        kind="a facade",
    ),
    BenchAgent(
        name="bank",
        factory="fuzz_agents.bank:make",
        properties=("fuzz_agents.bank:no_overdraft",),
        depth=2,
        turns=3,
        kind="a numeric boundary",
    ),
    BenchAgent(
        name="support",
        factory="fuzz_agents.support:make",
        properties=(),
        depth=4,
        turns=5,
        kind="a secret on a rare path (the built-in secrets invariant)",
    ),
    BenchAgent(
        name="seats",
        factory="fuzz_agents.seats:make",
        properties=("fuzz_agents.seats:no_double_booking",),
        depth=3,
        turns=3,
        kind="two calls in one turn",
    ),
    BenchAgent(
        name="research",
        factory="fuzz_agents.research:make",
        properties=("fuzz_agents.research:nothing_retracted_is_published",),
        depth=4,
        turns=5,
        kind="a playbook (tools unlocked step by step)",
    ),
    BenchAgent(
        name="release",
        factory="fuzz_agents.release:make",
        properties=("fuzz_agents.release:promoted_builds_are_reviewed",),
        depth=8,
        turns=9,
        kind="an id chain eight calls deep",
    ),
)
"""The benchmark, shallow to deep."""
