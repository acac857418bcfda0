"""Call order, exact sequences, unordered calls, argument matchers, never called."""

from __future__ import annotations

import pytest

from harness import UsageError
from harness.assertions import (
    ANY,
    call_to,
    called,
    called_exactly,
    called_in_order,
    called_unordered,
    never_called,
)
from harness.loop import Trace


def test_ordered_subsequence(shop_trace: Trace) -> None:
    assert shop_trace == called_in_order("search", "cart_show")
    assert shop_trace == called_in_order("search", "cart_*", "cart_show")
    assert shop_trace != called_in_order("cart_show", "search")
    verdict = called_in_order("cart_add", "search").check(shop_trace)
    assert "no call matching search after the calls before it" in str(verdict.problem)


def test_exact_sequence(shop_trace: Trace) -> None:
    assert shop_trace == called_exactly("search", "cart_add", "cart_show", "cart_show")
    short = called_exactly("search", "cart_add").check(shop_trace)
    assert short.problem == "unexpected call #3 'cart_show'; expected exactly 2 calls"
    assert short.failure is not None and short.failure.iteration == 2
    long = called_exactly("search", "cart_add", "cart_show", "cart_show", "pay").check(shop_trace)
    assert "call #5 missing: expected pay" in str(long.problem)
    wrong = called_exactly("search", "cart_show").check(shop_trace)
    assert wrong.problem == "call #2: expected cart_show, called 'cart_add'"
    assert Trace() == called_exactly()


def test_unordered(shop_trace: Trace) -> None:
    assert shop_trace == called_unordered("cart_show", "search", "cart_show")
    assert shop_trace == called_unordered("cart_*", "cart_add")  # needs distinct calls
    assert shop_trace == called_unordered("search", "cart_add", "cart_show", "cart_show", only=True)
    assert shop_trace != called_unordered("search", only=True)
    assert shop_trace != called_unordered("search", "search")
    missing = called_unordered("pay").check(shop_trace)
    assert "no call matches pay" in str(missing.problem)
    too_few = called_unordered("search", "search").check(shop_trace)
    assert "not enough distinct calls" in str(too_few.problem)


def test_argument_matchers(shop_trace: Trace) -> None:
    assert shop_trace == called(call_to("search", query="red shoes"))
    assert shop_trace == called(call_to("search", query=ANY, limit=lambda v: v > 3))
    assert shop_trace == called(
        call_to("search", args={"query": "red shoes", "limit": 5}, exact_args=True)
    )
    assert shop_trace != called(call_to("search", query="blue"))
    assert shop_trace != called(call_to("search", query="red shoes", exact_args=True))
    assert shop_trace != called(call_to("search", page=ANY))
    assert shop_trace == called(call_to("cart_show", error=True))
    assert shop_trace == called(call_to("cart_add", error=False))
    wrong = called(call_to("search", query="blue")).check(shop_trace)
    assert "closest: search argument query='red shoes', expected 'blue'" in str(wrong.problem)


def test_argument_matcher_messages(shop_trace: Trace) -> None:
    calls = shop_trace.calls
    assert (
        call_to("cart_show", x=1).mismatch(calls[2])
        == "cart_show arguments are not JSON: 'not json'"
    )
    assert call_to("search", limit=lambda v: v > 9).mismatch(calls[0]) == (
        "search argument limit=5 fails <lambda>"
    )
    assert call_to("search", page=1).mismatch(calls[0]) == (
        "search has no argument 'page' (arguments {'query': 'red shoes', 'limit': 5})"
    )
    assert "unexpected arguments ['limit']" in str(
        call_to("search", query="red shoes", exact_args=True).mismatch(calls[0])
    )
    assert call_to("cart_show", error=False).mismatch(calls[2]) == "cart_show failed ('boom')"
    assert str(call_to("a", x=1, error=True)) == "a(x=1, ...) failing"
    assert str(call_to("a", error=False, exact_args=True, args={})) == "a() succeeding"


def test_called_times(shop_trace: Trace) -> None:
    assert shop_trace == called("cart_show", times=2)
    assert shop_trace == called("pay", times=0)
    verdict = called("cart_show", times=1).check(shop_trace)
    assert verdict.problem == "cart_show was called 2 time(s), expected 1"
    assert verdict.failure is not None and verdict.failure.iteration == 3
    with pytest.raises(UsageError, match="count >= 0"):
        called("x", times=-1)


def test_never_called(shop_trace: Trace) -> None:
    assert shop_trace == never_called("pay", "admin_*")
    verdict = never_called("cart_*").check(shop_trace)
    assert (
        verdict.problem
        == '\'cart_add\' was called (call #2, arguments \'{"sku": "S-1", "qty": 2}\')'
    )
    assert verdict.failure is not None and verdict.failure.iteration == 2
    assert shop_trace == never_called(call_to("search", query="blue"))


@pytest.mark.parametrize(
    "build",
    [
        lambda: called_in_order(),
        lambda: called_unordered(),
        lambda: never_called(),
        lambda: called_in_order(""),
        lambda: called_exactly(3),  # type: ignore[arg-type]
        lambda: call_to(""),
    ],
)
def test_bad_call_specs_raise_usage_errors(build: object) -> None:
    with pytest.raises(UsageError):
        build()  # type: ignore[operator]
