"""Hypothesis strategies: tool universes, model decisions, faults, whole fuzz scenarios.

Sizes and structure are drawn from hypothesis (so they shrink); names and text come
from faker, seeded from a drawn integer (so they are realistic and reproducible).
Every parameter is checked when the strategy is built, before anything runs.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from typing import Any, Literal, cast

from hypothesis import strategies as st

from harness._errors import UsageError
from harness._validation import check_choice, check_choices, check_int
from harness.fuzz.universe._decisions import ArgsMode, FuzzDecision
from harness.fuzz.universe._scenario import FuzzScenario
from harness.fuzz.universe._specs import (
    FAULTS,
    UNIVERSE_KINDS,
    FacadeSpec,
    Fault,
    FuzzParamSpec,
    FuzzProviderSpec,
    FuzzToolSpec,
    GroupSpec,
    MachineSpec,
    PlaybookSpec,
    SectionSpec,
    UniverseSpec,
    UnlockSpec,
)
from harness.tools import sanitize_part

__all__ = ["decisions", "fuzz_scenarios", "tool_specs", "tool_universes"]

ParamType = Literal["string", "integer", "number", "boolean", "array", "enum"]
_PARAM_TYPES: tuple[ParamType, ...] = ("string", "integer", "number", "boolean", "array", "enum")
_CATEGORIES = ("read", "write", "admin", "search")


@functools.lru_cache(maxsize=1)
def _word_pools() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Faker's English word lists (all words, verbs, nouns), read once per process.

    Names and text are drawn from these with a seeded ``random.Random``: the same
    realistic words faker would give, without faker's per-call overhead.
    """
    from faker import Faker

    fake = Faker("en_US")

    def pool(part_of_speech: str | None) -> tuple[str, ...]:
        words = fake.get_words_list(part_of_speech=part_of_speech)
        return tuple(w for w in dict.fromkeys(words) if sanitize_part(w) == w)

    return pool(None), pool("verb"), pool("noun")


@functools.lru_cache(maxsize=1)
def _sentences() -> tuple[str, ...]:
    """A fixed pool of faker-style sentences (seeded), so a description costs one pick."""
    words = _word_pools()[0]
    rng = random.Random(0)
    return tuple(
        " ".join(rng.choices(words, k=rng.randint(4, 8))).capitalize() + "." for _ in range(4096)
    )


@functools.lru_cache(maxsize=4096)
def _integers(low: int, high: int) -> st.SearchStrategy[int]:
    """``st.integers(low, high)``, built once per range (building one is not free)."""
    return st.integers(low, high)


_BOOLEANS = st.booleans()


class _Namer:
    """Unique, valid, realistic names from faker's word lists, seeded per universe."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)
        self.words, self.verbs, self.nouns = _word_pools()
        self.used: set[str] = set()

    def unique(self, base: str) -> str:
        base = (sanitize_part(base) or "tool")[:40].strip("_") or "tool"
        name, n = base, 2
        while name in self.used:
            name = f"{base}_{n}"
            n += 1
        self.used.add(name)
        return name

    def tool(self) -> str:
        choice = self.random.choice
        name = f"{choice(self.verbs)}_{choice(self.nouns)}"  # pool words are clean already
        if name in self.used:
            return self.unique(name)
        self.used.add(name)
        return name

    def word(self) -> str:
        return self.random.choice(self.words)

    def sentence(self) -> str:
        """Four to eight words, capitalised, with a full stop (as faker's ``sentence()``)."""
        pool = _sentences()
        return pool[int(self.random.random() * len(pool))]


class _Builder:
    """Draws the parts of one universe within a tool budget."""

    def __init__(
        self, draw: Callable[..., Any], namer: _Namer, budget: int, faults: Sequence[str]
    ) -> None:
        self.draw = draw
        self.namer = namer
        self.budget = budget
        self.faults = tuple(faults)

    def count(self, low: int, high: int) -> int:
        high = min(high, self.budget)
        low = min(low, high)
        return int(self.draw(_integers(low, high))) if high > low else high

    def tool(self, category: str | None = None) -> FuzzToolSpec:
        """One tool from a single drawn integer (one draw per tool keeps generation fast).

        Its bits give the number of arguments, each argument's type and whether it is
        required, and the fault; zero, where shrinking goes, is a sound tool with no
        arguments.
        """
        self.budget = max(self.budget - 1, 0)
        code = int(self.draw(_integers(0, 2**22 - 1)))
        count, code = code & 3, code >> 2
        params = []
        for j in range(count):
            kind: ParamType = _PARAM_TYPES[(code & 15) % len(_PARAM_TYPES)]
            required = not (code & 16)
            code >>= 5
            params.append(
                FuzzParamSpec(
                    name=f"{self.namer.word()}_{j}",
                    type=kind,
                    required=required,
                    choices=[f"{self.namer.word()}_{k}" for k in range(2)]
                    if kind == "enum"
                    else [],
                )
            )
        code >>= 5 * (3 - count)
        fault: Fault | None = None
        if self.faults:
            # mostly sound tools: a fault in about one tool in four
            pick = code % (4 * len(self.faults))
            if pick >= 3 * len(self.faults):
                fault = cast("Fault", self.faults[pick - 3 * len(self.faults)])
        return FuzzToolSpec(
            name=self.namer.tool(),
            description=self.namer.sentence(),
            params=params,
            fault=fault,
            category=category,
        )

    def tools(self, low: int, high: int) -> list[FuzzToolSpec]:
        return [self.tool() for _ in range(self.count(low, high))]

    def provider(self, depth: int, fan_out: int) -> FuzzProviderSpec:
        prefix = self.namer.unique(self.namer.word())
        methods = [
            self.namer.unique(f"get_{self.namer.word()}") for _ in range(self.count(1, 3) or 1)
        ]
        self.budget = max(self.budget - len(methods), 0)
        # one draw: objects per search (1..fan_out), then whether a nested level follows
        head = self.draw(_integers(0, fan_out * (2 if depth > 1 else 1) - 1))
        child = self.provider(depth - 1, fan_out) if head >= fan_out else None
        return FuzzProviderSpec(
            prefix=prefix,
            find_tool=self.namer.unique(f"find_{prefix}"),
            methods=methods,
            fan_out=head % fan_out + 1,
            child=child,
        )

    def facade(self, depth: int) -> FacadeSpec:
        # one draw: which categories (bits 0-3), exclusive (bit 4), nested (bit 5)
        head = self.draw(_integers(0, 2 ** (len(_CATEGORIES) + (2 if depth > 1 else 1)) - 1))
        categories = (None, *(c for i, c in enumerate(_CATEGORIES) if head >> i & 1))
        inner = []
        for _ in range(self.count(1, 4) or 1):
            pick = self.draw(_integers(0, len(categories) - 1)) if len(categories) > 1 else 0
            inner.append(self.tool(categories[pick]))
        nested = [self.facade(depth - 1)] if head >> (len(_CATEGORIES) + 1) & 1 else []
        return FacadeSpec(
            name=self.namer.unique(f"{self.namer.word()}_tools"),
            description=self.namer.sentence(),
            inner=inner,
            nested=nested,
            exclusive=bool(head >> len(_CATEGORIES) & 1),
        )

    def playbook(self) -> PlaybookSpec:
        always = self.tools(1, 3) or [self.tool()]
        known = [t.name for t in always]
        unlocks = []
        for _ in range(self.count(1, 5)):
            # one or two earlier tools (a DAG by construction), in two cheap draws
            first = known[self.draw(_integers(0, len(known) - 1))]
            second = self.draw(_integers(0, len(known)))
            requires = [first]
            if second < len(known) and known[second] != first:
                requires.append(known[second])
            tool = self.tool()
            unlocks.append(UnlockSpec(tool=tool, requires=requires))
            known.append(tool.name)
        mode: Literal["gated", "hidden"] = "hidden" if self.draw(_BOOLEANS) else "gated"
        return PlaybookSpec(always=always, unlocks=unlocks, mode=mode)

    def machine(self) -> MachineSpec:
        states = [f"s{i}" for i in range(self.draw(_integers(2, 4)))]
        tools = {s: self.tools(1, 3) or [self.tool()] for s in states}
        transitions = {}
        for state_tools in tools.values():
            # one draw per state: a digit per tool, 0 for no transition, else 1 + target
            base = len(states) + 1
            code = self.draw(_integers(0, base ** len(state_tools) - 1))
            for tool in state_tools:
                code, digit = divmod(code, base)
                if digit:
                    transitions[tool.name] = states[digit - 1]
        return MachineSpec(
            states=states,
            initial=self.draw(_integers(0, len(states) - 1)),
            tools=tools,
            transitions=transitions,
            global_tools=self.tools(0, 2),
        )

    def section(self, depth: int, index: list[int]) -> SectionSpec:
        index[0] += 1
        key = f"{self.namer.word()}_{index[0]}"  # before the children take their numbers
        # one draw: summarised (bit 0) and how many children (0 to 2, above it)
        head = self.draw(_integers(0, 5 if depth > 1 else 1))
        children = [self.section(depth - 1, index) for _ in range(head >> 1)]
        return SectionSpec(
            key=key,
            text=self.namer.sentence(),
            summary=self.namer.sentence(),
            summarized=bool(head & 1),
            tools=self.tools(0, 3),
            children=children,
        )

    def groups(self) -> list[GroupSpec]:
        return [
            GroupSpec(
                name=self.namer.unique(f"{self.namer.word()}_group"),
                tools=self.tools(1, 3) or [self.tool()],
            )
            for _ in range(self.draw(_integers(1, 3)))
        ]


def tool_specs(*, faults: Sequence[str] = (), seed: int = 0) -> st.SearchStrategy[FuzzToolSpec]:
    """One generated tool definition (valid JSON schema, faker name and description)."""
    faults = check_choices(faults, FAULTS, name="faults")

    @st.composite
    def build(draw: Callable[..., Any]) -> FuzzToolSpec:
        namer = _Namer(draw(_integers(0, 255)) + seed)
        return _Builder(draw, namer, 1, faults).tool()

    return build()


def tool_universes(
    kind: str = "mixed",
    *,
    max_tools: int = 20,
    max_depth: int = 2,
    max_fan_out: int = 3,
    faults: Sequence[str] = FAULTS,
) -> st.SearchStrategy[UniverseSpec]:
    """Generated tool universes of ``kind`` (one of ``UNIVERSE_KINDS``).

    ``max_tools`` is the budget of tools defined (injectable ones included; the few a
    structure needs, such as a provider's search tool, may go over it), ``max_depth``
    the nesting of providers, facades and sections, ``max_fan_out`` how many objects
    a provider search returns; ``faults`` which tool faults may appear.
    """
    kind = check_choice(kind, UNIVERSE_KINDS, name="kind")
    max_tools = check_int(max_tools, name="max_tools", minimum=1)
    max_depth = check_int(max_depth, name="max_depth", minimum=1)
    max_fan_out = check_int(max_fan_out, name="max_fan_out", minimum=1)
    faults = check_choices(faults, FAULTS, name="faults")

    @st.composite
    def build(draw: Callable[..., Any]) -> UniverseSpec:
        b = _Builder(draw, _Namer(draw(_integers(0, 255))), max_tools, faults)
        parts: dict[str, Any] = {"kind": kind}
        mixed = kind == "mixed"
        # mixed: one draw says which parts (a bit each, in the order below). One mask
        # rather than a boolean per part: hypothesis's span mutations in a campaign keep
        # a mask's universes as large as plain draws; a boolean per part shrinks them.
        mask = draw(_integers(0, 2**6 - 1)) if mixed else 0
        if kind == "tools":
            parts["tools"] = b.tools(1, max_tools)
        if mixed:
            parts["tools"] = b.tools(0, 4)
        if kind == "providers" or mask & 1:
            parts["providers"] = [
                b.provider(max_depth, max_fan_out) for _ in range(draw(_integers(1, 2)))
            ]
            if not mixed:
                parts["tools"] = b.tools(0, 3)
        if kind == "facades" or mask & 2:
            parts["facades"] = [b.facade(max_depth) for _ in range(draw(_integers(1, 2)))]
            if not mixed:
                parts["tools"] = b.tools(0, 3)
        if kind == "playbook" or mask & 4:
            parts["playbook"] = b.playbook()
        if kind == "state_machine" or mask & 8:
            parts["machine"] = b.machine()
        if kind == "groups" or mask & 16:
            parts["groups"] = b.groups()
            if not mixed:
                parts["tools"] = b.tools(0, 2)
        if kind == "sections" or mask & 32:
            counter = [0]
            parts["sections"] = [
                b.section(max_depth, counter) for _ in range(draw(_integers(1, 3)))
            ]
            if not mixed:
                parts["tools"] = b.tools(0, 2)
        return UniverseSpec(**parts)

    return build()


def decisions(
    *, max_turns: int = 20, kinds: Sequence[str] | None = None
) -> st.SearchStrategy[list[FuzzDecision]]:
    """Lists of model decisions (at most ``max_turns``) that name offered tools by index.

    ``kinds`` limits the decision kinds (default: all of ``DECISION_KINDS``).
    """
    from harness.fuzz.universe._decisions import DECISION_KINDS

    max_turns = check_int(max_turns, name="max_turns", minimum=0)
    chosen = check_choices(
        kinds if kinds is not None else DECISION_KINDS, DECISION_KINDS, name="kinds"
    )
    if not chosen:
        raise UsageError(f"kinds must name at least one of {list(DECISION_KINDS)}, got []")
    return st.lists(_integers(0, 2**_CODE_BITS - 1), max_size=max_turns).map(
        functools.partial(_decode_all, chosen)
    )


# A decision is one drawn integer (one hypothesis choice instead of four or five), read
# as bit fields. The fields that matter most sit in the low bits, so the shrinker's
# "mask the high bits" step keeps them while it zeroes the rest, and 0 is the simplest
# decision: call offered[0] with valid arguments. Hypothesis draws wide integers with
# small magnitudes more often, so only the low ~10 bits are close to uniform: what
# must be uniform (kind, arguments, index, how many parallel calls) lives there.
_CODE_BITS = 31
_ARGS: tuple[ArgsMode, ...] = ("valid", "empty", "malformed", "invalid")
_STATUSES = (500, 429, 503)


def _decode_all(chosen: tuple[str, ...], codes: list[int]) -> list[FuzzDecision]:
    return [_decode(chosen, code) for code in codes]


@functools.lru_cache(maxsize=8192)
def _decode(chosen: tuple[str, ...], code: int) -> FuzzDecision:
    """The decision of a drawn ``code`` (decisions are immutable, so equal codes share one).

    Bits 0-2 pick the kind among ``chosen`` (a value past the end picks the first, a
    plain call: 0 and 7 both shrink to it), bits 3-4 the arguments, bits 5-10 the
    index (a provider error's status comes from bits 3-8). A ``parallel`` decision reads bits
    5-6 as how many more calls (1 to 3), bits 7-12 as the index, and from bit 13 six
    bits per further call, added to the index (0: the next tools). Fields a kind does
    not use keep their defaults, so equal behaviour is equal data.
    """
    pick = code & 7
    kind = chosen[pick] if pick < len(chosen) else chosen[0]
    args = _ARGS[(code >> 3) & 3]
    if kind == "call":
        return FuzzDecision(kind="call", index=(code >> 5) & 63, args=args)
    if kind == "parallel":
        count = 1 + min((code >> 5) & 3, 2)
        index = (code >> 7) & 63
        more = tuple((index + 1 + i + (code >> (13 + 6 * i))) & 63 for i in range(count))
        return FuzzDecision(kind="parallel", index=index, more=more, args=args)
    if kind in ("repeat_id", "recall"):
        return FuzzDecision(kind=kind, index=(code >> 5) & 63)  # type: ignore[arg-type]
    if kind == "provider_error":
        status = _STATUSES[((code >> 3) & 63) % len(_STATUSES)]
        return FuzzDecision(kind="provider_error", status=status)
    return FuzzDecision(kind=kind)  # type: ignore[arg-type]


def fuzz_scenarios(
    kind: str = "mixed",
    *,
    max_tools: int = 20,
    max_depth: int = 2,
    max_fan_out: int = 3,
    max_turns: int = 20,
    max_iterations: int = 20,
    faults: Sequence[str] = FAULTS,
    kinds: Sequence[str] | None = None,
    static_models: bool = True,
) -> st.SearchStrategy[FuzzScenario]:
    """Whole fuzz scenarios: a universe, decisions, the model's capability and limits.

    ``static_models`` lets some scenarios use a model without dynamic tools (the
    restart path); ``max_iterations`` is the loop limit the runs are held to.
    """
    universes = tool_universes(
        kind, max_tools=max_tools, max_depth=max_depth, max_fan_out=max_fan_out, faults=faults
    )
    moves = decisions(max_turns=max_turns, kinds=kinds)
    max_iterations = check_int(max_iterations, name="max_iterations", minimum=1)
    # one draw: a static model (bit 0, when allowed) and the iteration limit (shrinking
    # goes to a dynamic model and the highest limit)
    head = _integers(0, max_iterations * (2 if static_models else 1) - 1)

    @st.composite
    def build(draw: Callable[..., Any]) -> FuzzScenario:
        universe = draw(universes)
        moves_drawn = draw(moves)
        code = draw(head)
        static = static_models and bool(code & 1)
        return FuzzScenario(
            universe=universe,
            decisions=moves_drawn,
            static_tools=static,
            max_iterations=max_iterations - (code >> 1 if static_models else code),
        )

    return build()
