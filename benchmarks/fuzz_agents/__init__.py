"""Realistic agents with planted bugs: the benchmark of ``harness fuzz --agent``.

Each module has a factory ``make()`` (the keyword arguments of ``harness.run`` without
the model, fresh state each call), the property that catches its bug, and a
``KNOWN_BAD`` script: the shortest calls reaching the bug (``depth`` calls), which
``tests/benchmarks/test_fuzz_agents_bench.py`` replays to prove the bug is really there
and that the property holds without it. ``benchmarks/fuzz_agents_bench.py`` measures how
fast the fuzzer finds each one. Three agents are built on other frameworks (pydantic-ai,
the OpenAI Agents SDK, a hand-written ``openai`` loop): their factory is a wire factory
``make(base_url, api_key)`` and the fuzzer plays the model on the wire (``wire``).
"""

from __future__ import annotations

import dataclasses

__all__ = ["AGENTS", "WIRE_AGENTS", "BenchAgent"]


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
    wire: str | None = None
    """The wire format of an agent on another framework (``None``: on the harness loop)."""


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
    BenchAgent(
        name="ledger",
        factory="fuzz_agents.ledger:make",
        properties=("fuzz_agents.ledger:no_overdraft",),
        depth=4,
        turns=5,
        kind="a sum: three transfers of at most 400 from 850.00",
    ),
    BenchAgent(
        name="quota",
        factory="fuzz_agents.quota:make",
        properties=("fuzz_agents.quota:quota_kept",),
        depth=7,
        turns=8,
        kind="a counter: a sixth text to one contact",
    ),
    BenchAgent(
        name="venue",
        factory="fuzz_agents.venue:make",
        properties=("fuzz_agents.venue:never_overbooked",),
        depth=5,
        turns=6,
        kind="a sum walked to a limit, then one more",
    ),
)
"""The benchmark, shallow to deep, then the bugs in sums over several calls."""

WIRE_AGENTS: tuple[BenchAgent, ...] = (
    BenchAgent(
        name="refunds",
        factory="fuzz_agents.refunds_openai:make",
        properties=("fuzz_agents.refunds_openai:refunds_within_totals",),
        depth=3,
        turns=4,
        kind="a hand-written openai SDK loop (Chat Completions)",
        wire="openai-chat",
    ),
    BenchAgent(
        name="stock",
        factory="fuzz_agents.stock_agents_sdk:make",
        properties=("fuzz_agents.stock_agents_sdk:reservations_within_stock",),
        depth=3,
        turns=4,
        kind="the OpenAI Agents SDK (Responses)",
        wire="openai-responses",
    ),
    BenchAgent(
        name="credits",
        factory="fuzz_agents.credits_pydantic_ai:make",
        properties=("fuzz_agents.credits_pydantic_ai:credit_within_policy",),
        depth=4,
        turns=5,
        kind="pydantic-ai (Anthropic Messages), structured output",
        wire="anthropic",
    ),
)
"""Agents on other frameworks, fuzzed through the wire (no walk to compare: it plays
the harness loop only)."""
