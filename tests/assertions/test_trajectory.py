"""``trajectory``: agentevals' modes over any trace, decided by a maximum matching."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from harness import UsageError
from harness.assertions import expect, trajectory
from harness.assertions._trajectory import ArgsMode, TrajectoryMode, maximum_matching
from harness.loop import CallRecord, IterationRecord, Trace

MODES: tuple[TrajectoryMode, ...] = ("strict", "unordered", "subset", "superset")
ARGS: tuple[ArgsMode, ...] = ("exact", "ignore", "subset", "superset")
Calls = list[tuple[str, dict[str, Any]]]


def _trace(calls: Sequence[tuple[str, Mapping[str, Any]]], per_request: int = 2) -> Trace:
    records = [
        CallRecord(id=f"c{k}", name=name, arguments=json.dumps(args), content="")
        for k, (name, args) in enumerate(calls)
    ]
    chunks = [records[k : k + per_request] for k in range(0, len(records), per_request)] or [[]]
    return Trace(
        iterations=[
            IterationRecord(index=k + 1, offered=("a", "b"), calls=tuple(chunk))
            for k, chunk in enumerate(chunks)
        ]
    )


# -- a brute-force matcher: the definitions, written out ------------------------------------


def _args_ok(mode: str, call: Mapping[str, Any], reference: Mapping[str, Any]) -> bool:
    if mode == "exact":
        return dict(call) == dict(reference)
    if mode == "ignore":
        return True
    if mode == "subset":
        return all(k in reference and reference[k] == v for k, v in call.items())
    return all(k in call and call[k] == v for k, v in reference.items())


def _brute(calls: Calls, reference: Calls, mode: str, args: str) -> bool:
    def ok(i: int, j: int) -> bool:
        return calls[i][0] == reference[j][0] and _args_ok(args, calls[i][1], reference[j][1])

    if mode == "strict":
        return len(calls) == len(reference) and all(ok(i, i) for i in range(len(calls)))
    if mode == "unordered" and len(calls) != len(reference):
        return False
    if mode in ("unordered", "subset"):  # every call gets its own reference call
        return any(
            all(ok(i, j) for i, j in enumerate(chosen))
            for chosen in itertools.permutations(range(len(reference)), len(calls))
        )
    return any(  # superset: every reference call gets its own call
        all(ok(i, j) for j, i in enumerate(chosen))
        for chosen in itertools.permutations(range(len(calls)), len(reference))
    )


_CALL = st.tuples(
    st.sampled_from(["a", "b"]),
    st.dictionaries(st.sampled_from(["x", "y"]), st.integers(0, 1), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(
    calls=st.lists(_CALL, max_size=5),
    reference=st.lists(_CALL, max_size=5),
    shuffle=st.randoms(use_true_random=False),
)
def test_agrees_with_brute_force_in_all_sixteen_mode_pairs(
    calls: Calls, reference: Calls, shuffle: Any
) -> None:
    trace = _trace(calls)
    for mode, args in itertools.product(MODES, ARGS):
        expected = _brute(calls, reference, mode, args)
        verdict = trajectory(reference, mode=mode, args=args).check(trace, record=False)
        assert verdict.passed is expected, (mode, args, verdict.problem)
        if mode != "strict":  # the verdict does not depend on the order of either list
            mixed_calls, mixed_reference = list(calls), list(reference)
            shuffle.shuffle(mixed_calls)
            shuffle.shuffle(mixed_reference)
            again = trajectory(mixed_reference, mode=mode, args=args)
            assert again.check(_trace(mixed_calls), record=False).passed is expected


def test_a_greedy_pairing_would_fail_where_the_optimal_one_passes() -> None:
    # the first call fits both reference calls; greedy gives it the first, leaving the second
    # call (which fits only the first reference call) without a partner
    calls = [("lookup", {"id": 1, "verbose": True}), ("lookup", {"id": 1})]
    reference = [("lookup", {"id": 1}), ("lookup", {"verbose": True})]
    trace = _trace(calls)
    assert trace == trajectory(reference, mode="unordered", args="superset")
    assert trace != trajectory(reference, mode="unordered", args="exact")


def test_a_failure_shows_the_pairing_and_the_first_unpaired_call() -> None:
    trace = _trace([("a", {"x": 1}), ("b", {}), ("a", {"x": 2})])
    verdict = expect(trace, trajectory([("a", {"x": 2}), "b"], mode="subset"))
    assert not verdict.passed
    assert 'best pairing: b({}) ~ reference 2, a({"x": 2}) ~ reference 1' in str(verdict.problem)
    assert 'call 1, a({"x": 1}), pairs with no reference call' in str(verdict.problem)
    assert verdict.failure is not None and verdict.failure.iteration == 1


def test_superset_names_the_reference_call_that_was_not_made() -> None:
    trace = _trace([("a", {"x": 1})])
    verdict = expect(trace, trajectory(["a", ("b", {"y": 1})], mode="superset"))
    assert 'reference call 2, b({"y": 1}), was not made' in str(verdict.problem)


def test_strict_names_the_first_difference() -> None:
    trace = _trace([("a", {"x": 1}), ("b", {})])
    assert trace == trajectory([("a", {"x": 1}), ("b", {})])
    verdict = expect(trace, trajectory([("a", {"x": 1}), ("a", {})]))
    assert "call 2 is b({}), the reference's call 2 is a({})" in str(verdict.problem)
    assert not expect(trace, trajectory([("a", {"x": 1})])).passed


def test_per_tool_overrides_modes_keys_and_functions() -> None:
    trace = _trace([("search", {"q": "john", "limit": 5}), ("fetch", {"id": 3, "v": 1})])
    reference = [("search", {"q": "john"}), ("fetch", {"id": 3, "v": 2})]
    assert trace != trajectory(reference)
    assert trace == trajectory(reference, per_tool={"search": "superset", "fetch": ["id"]})
    assert trace == trajectory(
        reference,
        per_tool={"search": "ignore", "fetch": lambda call, ref: call["id"] == ref["id"]},
    )


def test_reference_forms_and_any_trace() -> None:
    trace = _trace([("customer_c1_get", {"n": 1}), ("search", {})])
    other = _trace([("customer_c1_get", {"n": 1}), ("search", {})], per_request=1)
    assert trace == trajectory(other)  # another run's trace, however its requests split
    assert trace == trajectory(["customer_*", "search"])  # names (and globs), any arguments
    assert trace == trajectory(
        [
            {"name": "customer_c1_get", "args": {"n": 1}},
            {"function": {"name": "search", "arguments": "{}"}},
        ]
    )
    with pytest.raises(UsageError, match="mode"):
        trajectory([], mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="reference call 1"):
        trajectory([42])


def test_maximum_matching_finds_the_augmenting_path() -> None:
    # left 0 can take 0 or 1, left 1 only 0: the maximum pairs both
    assert maximum_matching([[0, 1], [0]], 2) == [1, 0]
    assert maximum_matching([[0], [0], [0]], 1).count(None) == 2
    big = [[k, k + 1] for k in range(2000)]  # a long chain, no recursion limit
    assert None not in maximum_matching(big, 2001)
