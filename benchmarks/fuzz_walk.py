"""A deliberately simple random walk over an agent's tools: the comparator of ``harness fuzz``.

What issue 25 describes as the bar to beat: a walk that plays the model with plain
``random``, copies values from earlier results (a value under the argument's own name
first), and keeps a small coverage corpus (walks that reached a new (tool, outcome)
pair or a new "this tool succeeded after that one") whose actions later walks replay
before going on. No hypothesis, no shrinking: it stops at the first run a property or
invariant rejects. ``copy=False`` is the same walk drawing every argument at random.

It judges runs with the harness's own ``judge`` (properties, invariants, crashes), so
both fuzzers look for the same thing. Used by ``benchmarks/fuzz_agents_bench.py``.
"""

from __future__ import annotations

import dataclasses
import json
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

from harness.fuzz.agent._judge import Finding, judge
from harness.fuzz.agent._search import load_agent_factory, load_property
from harness.loop import Model, ModelRequest, ModelResponse
from harness.messages import AssistantMessage, ToolCall, ToolMessage
from harness.scenarios._agent import build_agent, run_agent
from harness.scenarios._properties import AgentRun

MAX_TURNS = 12
STOP = 0.08
COPY = 0.8
CORPUS = 64
WORDS = ("test", "a", "v2.3", "fix", "energy", "guest", "x" * 12, "")

Action = tuple[int, dict[str, Any]]
"""One call: the index of the tool among the offered (sorted) names, and its arguments:
("lit", value) or ("copy", call number, key) per argument."""


@dataclasses.dataclass
class WalkResult:
    """What a walk campaign found."""

    found: bool
    finding: Finding | None
    runs: int
    seconds: float
    found_after: float | None
    calls: int | None
    """Tool calls of the failing run."""


class _Walker(Model):
    """Plays actions (replayed first, then random ones) against the offered tools."""

    __test__ = False

    def __init__(self, rng: random.Random, prefix: Sequence[Action], copy: bool) -> None:
        self.rng, self.prefix, self.copy = rng, list(prefix), copy
        self.actions: list[Action] = []
        self.results: list[Any] = []  # parsed JSON of each call's result, by call number
        self.seen_ids: set[str] = set()
        self.definitions: list[Any] = []  # tool definitions sent (the secrets invariant)

    def _read(self, request: ModelRequest) -> None:
        answers = {m.tool_call_id: m for m in request.messages if isinstance(m, ToolMessage)}
        for call_id in sorted(answers.keys() - self.seen_ids, key=lambda i: int(i[1:])):
            self.seen_ids.add(call_id)
            try:
                self.results.append(json.loads(answers[call_id].content.split("\n\n[")[0]))
            except ValueError:
                self.results.append(answers[call_id].content)

    def request(self, request: ModelRequest) -> ModelResponse:
        self._read(request)
        self.definitions.extend(d for d in request.tools if d not in self.definitions)
        names = sorted(request.tool_names)
        if self.prefix:
            action: Action | None = self.prefix.pop(0)
        elif len(self.actions) >= MAX_TURNS or not names or self.rng.random() < STOP:
            action = None
        else:
            index = self.rng.randrange(len(names))
            schema = _schema(request, names[index])
            action = (index, self._arguments(schema))
        if action is None or action[0] >= len(names):
            return ModelResponse(message=AssistantMessage(content="Done."))
        self.actions.append(action)
        args = {k: self._value(spec) for k, spec in action[1].items()}
        call = ToolCall(
            id=f"w{len(self.actions)}", name=names[action[0]], arguments=json.dumps(args)
        )
        return ModelResponse(
            message=AssistantMessage(tool_calls=(call,)), finish_reason="tool_calls"
        )

    def _value(self, spec: tuple[Any, ...]) -> Any:
        if spec[0] == "lit":
            return spec[1]
        _, number, key = spec
        result = self.results[number] if number < len(self.results) else None
        return _lookup(result, key)

    def _arguments(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        properties = schema.get("properties") or {}
        required = set(schema.get("required") or ())
        out = {}
        for name, prop in properties.items():
            if name not in required and self.rng.random() < 0.5:
                continue
            copied = self._copied(name) if self.copy and self.rng.random() < COPY else None
            out[name] = copied or ("lit", self._random(prop))
        return out

    def _copied(self, name: str) -> tuple[Any, ...] | None:
        """A value seen earlier: under the same key first, else any key."""
        seen = [(n, k) for n, r in enumerate(self.results) for k in _keys(r)]
        same = [s for s in seen if _leaf(s[1]) and name.endswith(_leaf(s[1]))]
        pool = same or seen
        if not pool:
            return None
        number, key = self.rng.choice(pool)
        return ("copy", number, key)

    def _random(self, prop: Mapping[str, Any]) -> Any:
        if prop.get("enum"):
            return self.rng.choice(prop["enum"])
        kind = prop.get("type") or next(
            (m.get("type") for m in prop.get("anyOf", ()) if m.get("type") != "null"), "string"
        )
        if kind == "integer":
            return self.rng.choice((0, 1, 2, 10, 100, 1000, -1))
        if kind == "number":
            return self.rng.choice((0.0, 1.5, 100.0))
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "array":
            return []
        return self.rng.choice(WORDS)


def _schema(request: ModelRequest, name: str) -> Mapping[str, Any]:
    for definition in request.tools:
        if definition.name == name:
            return definition.parameters
    return {}


def _keys(value: Any, prefix: str = "") -> list[str]:
    """Paths of the scalar leaves of a JSON value (``[0].order_id``); ``""`` for a scalar."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _keys(v, f"{prefix}.{k}" if prefix else k)]
    if isinstance(value, list):
        return [p for i, v in enumerate(value[:8]) for p in _keys(v, f"{prefix}[{i}]")]
    return [prefix]


def _leaf(path: str) -> str:
    """The last key of a path (``[0].order_id`` -> ``order_id``); ``""`` for none."""
    return path.rsplit(".", 1)[-1] if path and not path.endswith("]") else ""


def _lookup(value: Any, path: str) -> Any:
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        if part.startswith("["):
            index = int(part[1:-1])
            value = value[index] if isinstance(value, list) and index < len(value) else None
        else:
            value = value.get(part) if isinstance(value, dict) else None
    return value


def _features(run: AgentRun) -> set[str]:
    found, previous = set(), "start"
    for iteration in run.trace.iterations:
        for call in iteration.calls:
            found.add(f"{call.name}:{'error' if call.is_error else 'ok'}")
            if not call.is_error:
                found.add(f"{previous}>{call.name}")
                previous = call.name
    return found


def walk(
    factory: str,
    properties: Sequence[str] = (),
    *,
    seconds: float = 60.0,
    max_runs: int = 1_000_000,
    seed: int = 0,
    copy: bool = True,
) -> WalkResult:
    """Walk until a run fails, ``seconds`` pass or ``max_runs`` runs are made."""
    make, name = load_agent_factory(factory)
    props = [load_property(p) for p in properties]
    rng = random.Random(seed)
    corpus: list[list[Action]] = []
    coverage: set[str] = set()
    started = time.perf_counter()
    runs = 0
    while runs < max_runs and time.perf_counter() - started < seconds:
        runs += 1
        prefix = rng.choice(corpus) if corpus and rng.random() < 0.7 else []
        walker = _Walker(rng, prefix, copy)
        agent = build_agent(make, name=name).with_defaults(
            pending_completions="lost", parallel_tool_calls=False, tool_timeout=10.0
        )
        try:
            run = AgentRun.from_result(run_agent(walker, agent))
        except Exception as exc:
            run = AgentRun.from_error(exc)
        finding = judge(
            run, agent, props, definitions=walker.definitions, played=bool(walker.actions)
        )
        if finding is not None:
            elapsed = time.perf_counter() - started
            calls = sum(len(i.calls) for i in run.trace.iterations)
            return WalkResult(
                found=True,
                finding=finding,
                runs=runs,
                seconds=elapsed,
                found_after=elapsed,
                calls=calls,
            )
        new = _features(run) - coverage
        if new:
            coverage |= new
            corpus.append(walker.actions)
            del corpus[:-CORPUS]
    return WalkResult(
        found=False,
        finding=None,
        runs=runs,
        seconds=time.perf_counter() - started,
        found_after=None,
        calls=None,
    )
