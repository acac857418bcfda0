"""``trajectory``: the run's tool calls against a reference, in agentevals' vocabulary.

Modes (which calls must pair with which):

- ``strict``: the same calls in the same order;
- ``unordered``: the same calls, in any order (each call pairs with one reference call);
- ``subset``: every call pairs with a reference call (the run called nothing beyond it);
- ``superset``: every reference call pairs with a call (the run called at least those).

Arguments (whether a call may pair with a reference call of the same tool):

- ``exact``: the same arguments;
- ``ignore``: any arguments;
- ``subset``: the call's arguments are among the reference's (each key, the same value);
- ``superset``: the call's arguments include the reference's.

``per_tool`` overrides the argument mode for a tool: another mode, a list of (dotted)
keys that must be equal, or a function ``(call_args, reference_args) -> bool``.

The verdict never depends on the order of the lists: pairs are found by a maximum
bipartite matching (Hopcroft-Karp), not greedily, so a call that fits two reference calls
never takes the one another call needed. A failure shows the pairing found and the first
call (or reference call) left without a partner.
"""

from __future__ import annotations

import collections
import dataclasses
import fnmatch
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, get_args

from harness._errors import UsageError
from harness._validation import check_choice
from harness.assertions._verdict import Expectation, Failure, after_last, in_turn
from harness.loop import CallRecord, Trace

__all__ = ["ArgsMode", "TrajectoryMode", "maximum_matching", "trajectory"]

TrajectoryMode = Literal["strict", "unordered", "subset", "superset"]
ArgsMode = Literal["exact", "ignore", "subset", "superset"]
ArgsMatcher = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]
_ANY_ARGS = object()
"""The arguments of a reference call given by name alone: any arguments pair with it."""


@dataclasses.dataclass(frozen=True)
class _Call:
    name: str
    args: Any
    """A dict, ``None`` (arguments that are not a JSON object) or ``_ANY_ARGS``."""
    iteration: int | None = None

    def show(self) -> str:
        if self.args is _ANY_ARGS:
            return self.name
        shown = json.dumps(self.args, ensure_ascii=False, sort_keys=True, default=repr)
        return f"{self.name}({shown if len(shown) <= 80 else shown[:77] + '...'})"


def _reference_call(item: Any, position: int) -> _Call:
    if isinstance(item, str):
        return _Call(item, _ANY_ARGS)
    if isinstance(item, CallRecord):
        return _Call(item.name, item.args)
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
        return _Call(item[0], dict(item[1]) if isinstance(item[1], Mapping) else item[1])
    if isinstance(item, Mapping):
        if isinstance(item.get("function"), Mapping):  # an OpenAI tool_call, read by its format
            from harness.formats.openai_chat import message_from_dict

            read = message_from_dict({"role": "assistant", "tool_calls": [{"id": "ref", **item}]})
            (call,) = getattr(read, "tool_calls", None) or (None,)
            if call is not None:
                return _Call(call.name, _parsed(call.arguments))
        if isinstance(item.get("name"), str):
            args = item.get("args", item.get("arguments", _ANY_ARGS))
            return _Call(item["name"], _parsed(args) if isinstance(args, str) else args)
    name, arguments = getattr(item, "name", None), getattr(item, "arguments", None)
    if isinstance(name, str):  # a ToolCall
        return _Call(name, _parsed(arguments) if isinstance(arguments, str) else _ANY_ARGS)
    raise UsageError(
        f"trajectory() reference call {position} is {item!r}; give a tool name, "
        "(name, args), {'name': ..., 'args': {...}}, an OpenAI tool_call, a CallRecord or a "
        "ToolCall, or a whole Trace / run result"
    )


def _parsed(arguments: Any) -> Any:
    if not isinstance(arguments, str):
        return arguments
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _reference(reference: Any) -> list[_Call]:
    trace = reference if isinstance(reference, Trace) else getattr(reference, "trace", None)
    if isinstance(trace, Trace):
        return [_Call(c.name, c.args, it.index) for it in trace.iterations for c in it.calls]
    if isinstance(reference, (str, bytes)) or not isinstance(reference, Sequence):
        raise UsageError(
            f"trajectory() takes the reference calls as a list (or a Trace / run result), "
            f"got {reference!r}"
        )
    return [_reference_call(item, k) for k, item in enumerate(reference, 1)]


# -- argument matchers ---------------------------------------------------------------------


def _exact(call: Mapping[str, Any], reference: Mapping[str, Any]) -> bool:
    return call == reference


def _subset(call: Mapping[str, Any], reference: Mapping[str, Any]) -> bool:
    return all(k in reference and reference[k] == v for k, v in call.items())


def _superset(call: Mapping[str, Any], reference: Mapping[str, Any]) -> bool:
    return all(k in call and call[k] == v for k, v in reference.items())


def _ignore(call: Mapping[str, Any], reference: Mapping[str, Any]) -> bool:
    return True


_MATCHERS: dict[str, ArgsMatcher] = {
    "exact": _exact,
    "ignore": _ignore,
    "subset": _subset,
    "superset": _superset,
}


def _keys(keys: Sequence[str]) -> ArgsMatcher:
    def value(data: Any, path: str) -> Any:
        for part in path.split("."):
            data = data.get(part) if isinstance(data, Mapping) else None
        return data

    def matcher(call: Mapping[str, Any], reference: Mapping[str, Any]) -> bool:
        return all(value(call, k) == value(reference, k) for k in keys)

    return matcher


def _matcher(spec: Any, where: str) -> ArgsMatcher:
    if isinstance(spec, str):
        check_choice(spec, ArgsMode, name=where)
        return _MATCHERS[spec]
    if callable(spec):
        return spec  # type: ignore[no-any-return]
    if isinstance(spec, Sequence) and all(isinstance(k, str) for k in spec):
        return _keys(list(spec))
    raise UsageError(
        f"{where}={spec!r}: give a mode ({', '.join(get_args(ArgsMode))}), a list of argument "
        "keys that must be equal, or a function (call_args, reference_args) -> bool"
    )


# -- the matching --------------------------------------------------------------------------


def maximum_matching(edges: Sequence[Sequence[int]], right: int) -> list[int | None]:
    """A maximum matching of a bipartite graph (Hopcroft-Karp): ``edges[i]`` lists the
    right vertices left vertex ``i`` may pair with; the result gives each left vertex its
    partner, or ``None``. ``O(E * sqrt(V))``; iterative, so no recursion limit applies."""
    match_left: list[int | None] = [None] * len(edges)
    match_right: list[int | None] = [None] * right
    while True:
        layer = _layers(edges, match_left, match_right)
        if layer is None:
            return match_left
        for start in range(len(edges)):
            if match_left[start] is None:
                _augment(start, edges, layer, match_left, match_right)


def _layers(
    edges: Sequence[Sequence[int]], match_left: list[int | None], match_right: list[int | None]
) -> list[int] | None:
    """Breadth-first layers of the left vertices from the free ones; ``None`` when no
    augmenting path exists."""
    infinity = len(edges) + 1
    layer = [0 if m is None else infinity for m in match_left]
    queue = collections.deque(i for i, m in enumerate(match_left) if m is None)
    found = False
    while queue:
        left = queue.popleft()
        for right in edges[left]:
            partner = match_right[right]
            if partner is None:
                found = True
            elif layer[partner] == infinity:
                layer[partner] = layer[left] + 1
                queue.append(partner)
    return layer if found else None


def _augment(
    start: int,
    edges: Sequence[Sequence[int]],
    layer: list[int],
    match_left: list[int | None],
    match_right: list[int | None],
) -> None:
    """One augmenting path from ``start`` along the layers (depth-first, with a stack)."""
    stack: list[tuple[int, int]] = [(start, 0)]
    path: list[tuple[int, int]] = []
    while stack:
        left, position = stack.pop()
        if position >= len(edges[left]):
            layer[left] = len(edges) + 1  # a dead end: never tried again this phase
            if path:
                path.pop()
            continue
        stack.append((left, position + 1))
        right = edges[left][position]
        partner = match_right[right]
        if partner is None:
            for step_left, step_right in [*path, (left, right)]:
                match_left[step_left] = step_right
                match_right[step_right] = step_left
            return
        if layer[partner] == layer[left] + 1:
            path.append((left, right))
            stack.append((partner, 0))
    return


class _Trajectory(Expectation):
    def __init__(
        self,
        reference: list[_Call],
        mode: str,
        args: str,
        per_tool: Mapping[str, ArgsMatcher],
    ) -> None:
        self.reference, self.mode, self.args, self.per_tool = reference, mode, args, per_tool
        self.default = _MATCHERS[args]

    @property
    def description(self) -> str:
        return (
            f"trajectory ({self.mode}, args {self.args}"
            + (f", per tool {sorted(self.per_tool)}" if self.per_tool else "")
            + f") of {len(self.reference)} reference call(s)"
        )

    def _pairs(self, call: _Call, reference: _Call) -> bool:
        if not (
            call.name == reference.name
            if not any(ch in reference.name for ch in "*?[")
            else fnmatch.fnmatchcase(call.name, reference.name)
        ):
            return False
        if reference.args is _ANY_ARGS:
            return True
        matcher = self.per_tool.get(call.name, self.default)
        if call.args is None or reference.args is None:  # arguments that are no JSON object
            return matcher is _ignore
        return bool(matcher(call.args, reference.args))

    def evaluate(self, trace: Trace) -> Failure | None:
        calls = [_Call(c.name, c.args, it.index) for it in trace.iterations for c in it.calls]
        if self.mode == "strict":
            return self._strict(trace, calls)
        edges = [
            [j for j, ref in enumerate(self.reference) if self._pairs(call, ref)] for call in calls
        ]
        matched = maximum_matching(edges, len(self.reference))
        partners = {j: i for i, j in enumerate(matched) if j is not None}
        lonely_calls = [i for i, j in enumerate(matched) if j is None]
        lonely_refs = [j for j in range(len(self.reference)) if j not in partners]
        must_cover_calls = self.mode in ("unordered", "subset")
        must_cover_refs = self.mode in ("unordered", "superset")
        if (not must_cover_calls or not lonely_calls) and (not must_cover_refs or not lonely_refs):
            return None
        pairing = ", ".join(
            f"{calls[i].show()} ~ reference {j + 1}" for i, j in enumerate(matched) if j is not None
        )
        problem = f"best pairing: {pairing or 'none'}; "
        if must_cover_calls and lonely_calls:
            first = calls[lonely_calls[0]]
            problem += (
                f"call {lonely_calls[0] + 1}, {first.show()}, pairs with no reference call "
                f"({len(lonely_calls)} call(s) unpaired)"
            )
            return Failure(problem=problem, iteration=first.iteration, expected=self.description)
        first_ref = self.reference[lonely_refs[0]]
        problem += (
            f"reference call {lonely_refs[0] + 1}, {first_ref.show()}, was not made "
            f"({len(lonely_refs)} reference call(s) unpaired)"
        )
        return Failure(problem=problem, iteration=after_last(trace), expected=first_ref.show())

    def _strict(self, trace: Trace, calls: list[_Call]) -> Failure | None:
        for k, (call, reference) in enumerate(zip(calls, self.reference, strict=False)):
            if not self._pairs(call, reference):
                return Failure(
                    problem=f"call {k + 1} is {call.show()}, the reference's call {k + 1} is "
                    f"{reference.show()}",
                    iteration=call.iteration,
                    expected=reference.show(),
                )
        if len(calls) > len(self.reference):
            extra = calls[len(self.reference)]
            return Failure(
                problem=f"{len(calls)} calls were made, the reference has "
                f"{len(self.reference)}; the first one beyond it: {extra.show()}",
                iteration=extra.iteration,
                expected="no further call",
            )
        if len(calls) < len(self.reference):
            missing = self.reference[len(calls)]
            return Failure(
                problem=f"{len(calls)} calls were made, the reference has "
                f"{len(self.reference)}; the first one not made: {missing.show()}",
                iteration=after_last(trace),
                expected=missing.show(),
            )
        return None


def trajectory(
    reference: Any,
    *,
    mode: TrajectoryMode = "strict",
    args: ArgsMode = "exact",
    per_tool: Mapping[str, ArgsMode | Sequence[str] | ArgsMatcher] | None = None,
    turn: int | None = None,
) -> Expectation:
    """The run's tool calls (``turn=``: of that user turn) match ``reference`` (see the
    module docstring for ``mode``, ``args`` and ``per_tool``).

    ``reference``: another run's trace (any ``Trace``: a harness run, a cassette's or the
    wire's, one read from OpenTelemetry spans) or a run result, or a list of calls, each a
    tool name (any arguments; a glob such as ``customer_*`` matches names), ``(name, args)``,
    ``{"name": ..., "args": {...}}`` (agentevals' form), an OpenAI ``tool_call`` dict, a
    ``CallRecord`` or a ``ToolCall``.
    """
    check_choice(mode, TrajectoryMode, name="mode")
    check_choice(args, ArgsMode, name="args")
    overrides = {
        name: _matcher(spec, f"per_tool[{name!r}]") for name, spec in (per_tool or {}).items()
    }
    return in_turn(_Trajectory(_reference(reference), mode, args, overrides), turn)
