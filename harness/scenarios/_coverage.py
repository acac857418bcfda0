"""Injection coverage: which declared tools and strategy states runs never reached.

Read from traces only (plus what the agent declares): after a fuzz campaign, or over
a whole test session from the pytest plugin (``--harness-coverage``), it says which
declared tools were never offered, offered but never called, or called only with
errors, and which strategy states (state-machine states, playbook steps, facades,
prompt sections, tool groups) no run reached. Tool names made per run
(``article_3f2a_save``) are counted by pattern (``article_*_save``).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.injection import (
    Playbook,
    SectionDisclosure,
    StateMachine,
    StateTransition,
    ToolGroups,
)
from harness.injection._groups import GroupsChanged
from harness.loop import InjectionStrategy, Trace
from harness.tools import Tool

__all__ = [
    "InjectionCoverage",
    "fold_patterns",
    "is_id_like",
    "name_pattern",
    "offered_patterns",
]

_UNFOLDED = re.compile(r"unfolded '([^']+)'")
_SECTION = re.compile(r"(?:opened section|section) '([^']+)'")


def is_id_like(part: str) -> bool:
    """A name part that looks made per run: three characters or more with a digit."""
    return len(part) >= 3 and any(c.isdigit() for c in part)


@functools.lru_cache(maxsize=4096)
def name_pattern(name: str) -> str:
    """The name with its id-like parts as ``*`` (``article_3f2a_save`` -> ``article_*_save``)."""
    parts = name.split("_")
    if not any(is_id_like(p) for p in parts):
        return name
    return "_".join("*" if is_id_like(p) else p for p in parts)


_HEX = frozenset("0123456789abcdef")
_ID_EXAMPLES = 4
"""Names kept per wildcard pattern to fold names made per run into it."""


def _made_like(part: str, id_part: str) -> bool:
    """Whether ``part`` (no digit) is made like ``id_part`` (an id-like part at the same
    place of a sibling name): as long, and hex past their common prefix (``tbcdafa``
    beside ``t1f2e3a``: a per-run id whose hex digits happened to be letters)."""
    if len(part) != len(id_part) or part == id_part:
        return False
    common = 0
    while part[common] == id_part[common]:
        common += 1
    rest = part[common:]
    return len(rest) >= 4 and set(rest) <= _HEX


IdExamples = Mapping[str, Sequence[tuple[str, ...]]]
"""Wildcard patterns with names that made them, split at ``_`` (their id-like parts)."""


def fold_name(name: str, examples: IdExamples) -> str:
    """The wildcard pattern of ``examples`` that ``name`` (no id-like part) is made like,
    or ``name`` itself (see ``fold_patterns``)."""
    parts = name.split("_")
    for pattern, made in examples.items():
        shape = pattern.split("_")
        if len(shape) != len(parts):
            continue
        if any(s != "*" and s != p for s, p in zip(shape, parts, strict=True)):
            continue
        for example in made:
            if all(_made_like(p, example[i]) for i, p in enumerate(parts) if shape[i] == "*"):
                return pattern
    return name


def fold_patterns(names: Iterable[str], keep: Iterable[str] = ()) -> dict[str, str]:
    """Each name's pattern (``name_pattern``), a name with no id-like part taking the
    pattern of a sibling it is made like (``ticket_tbcdafa_add_comment`` beside
    ``ticket_t101_add_comment``: ``ticket_*_add_comment``); ``keep`` (declared names)
    stay as they are."""
    patterns = {n: name_pattern(n) for n in names}
    examples: dict[str, list[tuple[str, ...]]] = {}
    for name, pattern in patterns.items():
        if "*" in pattern:
            examples.setdefault(pattern, []).append(tuple(name.split("_")))
    if examples:
        kept = set(keep)
        for name, pattern in patterns.items():
            if pattern == name and name not in kept:
                patterns[name] = fold_name(name, examples)
    return patterns


@functools.lru_cache(maxsize=256)
def offered_patterns(names: tuple[str, ...]) -> dict[str, str]:
    """``fold_patterns`` of one request's offered names (cached: toolsets repeat)."""
    return fold_patterns(names)


@dataclasses.dataclass
class InjectionCoverage:
    """Counts over runs: tools by pattern, strategy states declared and reached."""

    declared: dict[str, str] = dataclasses.field(default_factory=dict)
    """Declared tool patterns, each with where it was declared."""
    offered: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    """Runs that offered each pattern."""
    called_ok: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    called_error: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    states: dict[str, set[str]] = dataclasses.field(default_factory=dict)
    """Declared states per strategy (``StateMachine[Order]``, ``playbook``, ...)."""
    reached: dict[str, set[str]] = dataclasses.field(default_factory=dict)
    runs: int = 0
    id_examples: dict[str, list[tuple[str, ...]]] = dataclasses.field(
        default_factory=dict, repr=False
    )
    """A few names behind each wildcard pattern (split at ``_``): a name made per run
    whose id has no digit is counted under the pattern it is made like."""

    # -- declared -------------------------------------------------------------------------

    def declare(self, tools: Iterable[Tool], strategies: Iterable[InjectionStrategy]) -> None:
        """Record the tools and strategy states an agent declares."""
        for tool in tools:
            self._declare_tool(tool, "tools")
        for strategy in strategies:
            self._declare_strategy(strategy)

    def _declare_tool(self, tool: Tool, where: str) -> None:
        self.declared.setdefault(name_pattern(tool.name), where)
        facade = tool.metadata.get("facade") if isinstance(tool.metadata, Mapping) else None
        if isinstance(facade, str):
            self.states.setdefault("facades", set()).add(facade)

    def _declare_strategy(self, strategy: InjectionStrategy) -> None:
        name = strategy.name
        if isinstance(strategy, StateMachine):
            self.states.setdefault(name, set()).update(s.name for s in strategy.states)
            for state, tools in strategy.tools.items():
                for tool in tools:
                    self._declare_tool(tool, f"{name} state {state.name}")
            for tool in strategy.global_tools:
                self._declare_tool(tool, f"{name} (every state)")
        elif isinstance(strategy, Playbook):
            for tool in strategy.always:
                self._declare_tool(tool, f"{name} (always)")
            for rule in strategy.unlocks:
                step = ", ".join(t.name for t in rule.tools)
                self.states.setdefault(name, set()).add(step)
                for tool in rule.tools:
                    self._declare_tool(tool, f"{name} unlock of {step}")
        elif isinstance(strategy, SectionDisclosure):
            template = strategy.template
            self.states.setdefault(name, set()).update(template.keys)
            for key in template.keys:
                for tool in template.section(key).tool_objects:
                    self._declare_tool(tool, f"{name} section {key}")
        elif isinstance(strategy, ToolGroups):
            self.states.setdefault("groups", set()).update(strategy.groups)
            for group in strategy.groups.values():
                if group.source is None:  # a source is asked only when activated
                    for tool in group.tool_objects:
                        self._declare_tool(tool, f"group {group.name}")

    # -- seen -----------------------------------------------------------------------------

    def add_run(self, trace: Trace) -> None:
        """Count one run's trace."""
        self.runs += 1
        offered: set[str] = set()
        for iteration in trace.iterations:
            patterns = offered_patterns(tuple(iteration.offered))
            self._remember_ids(patterns)
            offered.update(patterns.values())
            for call in iteration.calls:
                target = self.called_error if call.is_error else self.called_ok
                target[patterns.get(call.name) or name_pattern(call.name)] += 1
            for change in iteration.changes:
                self._reached_by_change(change.strategy, change.reason)
        self.offered.update(offered)
        for event in trace.events:
            if isinstance(event, StateTransition):
                self.reached.setdefault(event.machine, set()).add(event.to_state)
            elif isinstance(event, GroupsChanged):
                for group in event.activated:
                    self.reached.setdefault("groups", set()).add(group)

    def _remember_ids(self, patterns: Mapping[str, str]) -> None:
        for name, pattern in patterns.items():
            if "*" in pattern:
                made = self.id_examples.setdefault(pattern, [])
                if len(made) < _ID_EXAMPLES:
                    parts = tuple(name.split("_"))
                    if parts not in made:
                        made.append(parts)

    def _fold(self, counts: collections.Counter[str]) -> collections.Counter[str]:
        """``counts`` with names made per run (no digit in their id) under their pattern."""
        if not self.id_examples:
            return counts
        folded: collections.Counter[str] = collections.Counter()
        for key, count in counts.items():
            folded[self._folded(key)] += count
        return folded

    def _folded(self, key: str) -> str:
        """``key`` under the pattern of the names made per run it is made like (a tool
        made per run is declared per run too: the pytest plugin declares each run's)."""
        if "*" in key or not self.id_examples:
            return key
        return fold_name(key, self.id_examples)

    def _reached_by_change(self, strategy: str, reason: str) -> None:
        if reason.startswith("unlocked "):
            step = reason[len("unlocked ") :].split(": ", 1)[0]
            self.reached.setdefault(strategy, set()).add(step)
        found = _UNFOLDED.search(reason)
        if found and strategy == "unfolding":
            self.reached.setdefault("facades", set()).add(found.group(1))
        found = _SECTION.search(reason)
        if found and "section" in reason:
            self.reached.setdefault(strategy, set()).add(found.group(1))

    def merge(self, other: InjectionCoverage) -> None:
        """Add another report's counts (another worker's)."""
        for pattern, where in other.declared.items():
            self.declared.setdefault(pattern, where)
        self.offered.update(other.offered)
        self.called_ok.update(other.called_ok)
        self.called_error.update(other.called_error)
        for key, values in other.states.items():
            self.states.setdefault(key, set()).update(values)
        for key, values in other.reached.items():
            self.reached.setdefault(key, set()).update(values)
        for pattern, made in other.id_examples.items():
            mine = self.id_examples.setdefault(pattern, [])
            mine.extend(m for m in made if m not in mine and len(mine) < _ID_EXAMPLES)
        self.runs += other.runs

    # -- the report -----------------------------------------------------------------------

    @property
    def never_offered(self) -> list[str]:
        """Declared tool patterns no run offered."""
        offered = self._fold(self.offered)
        return sorted({self._folded(p) for p in self.declared if not offered[self._folded(p)]})

    @property
    def never_called(self) -> list[str]:
        """Patterns offered in some run but never called."""
        ok, errors = self._fold(self.called_ok), self._fold(self.called_error)
        return sorted(p for p in self._fold(self.offered) if not ok[p] and not errors[p])

    @property
    def only_errors(self) -> list[str]:
        """Patterns called, but every call ended in an error result."""
        ok = self._fold(self.called_ok)
        return sorted(p for p in self._fold(self.called_error) if not ok[p])

    @property
    def states_never_reached(self) -> dict[str, list[str]]:
        """Per strategy, the declared states no run reached."""
        out = {}
        for key, declared in self.states.items():
            missing = sorted(declared - self.reached.get(key, set()))
            if missing:
                out[key] = missing
        return out

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON data."""
        return {
            "runs": self.runs,
            "never_offered": self.never_offered,
            "offered_never_called": self.never_called,
            "called_only_with_errors": self.only_errors,
            "states_never_reached": self.states_never_reached,
        }

    def format(self) -> str:
        """The report as text lines (empty sections left out)."""
        lines = [f"injection coverage over {self.runs} run(s):"]
        rows: Sequence[tuple[str, Any]] = (
            ("declared tools never offered", self.never_offered),
            ("offered but never called", self.never_called),
            ("called only with errors", self.only_errors),
        )
        for label, items in rows:
            if items:
                lines.append(f"  {label}: {', '.join(items)}")
        for key, missing in self.states_never_reached.items():
            lines.append(f"  {key}: never reached {', '.join(missing)}")
        if len(lines) == 1:
            lines.append("  every declared tool was called successfully; every state reached")
        return "\n".join(lines)
