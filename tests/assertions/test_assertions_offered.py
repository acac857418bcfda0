"""Offered tools, injections and removals."""

from __future__ import annotations

from typing import Any

import pytest

from harness import UsageError
from harness.assertions import expect, injected, never_offered, offered, removed
from harness.loop import Trace


def test_offered_includes_excludes_and_exactly_with_globs(shop_trace: Trace) -> None:
    assert shop_trace == offered(at=2, includes=["cart_*", "search"])
    assert shop_trace == offered(at=1, excludes="cart_*")
    assert shop_trace == offered(at=-1, exactly=["search", "help", "cart_show"])
    assert shop_trace == offered(at=3, exactly=["cart_*", "search", "help"])
    assert shop_trace != offered(at=1, includes="cart_*")
    assert shop_trace != offered(at=2, excludes="cart_add")
    assert shop_trace != offered(at=2, exactly=["search", "help"])


def test_offered_failure_names_the_problem_and_iteration(shop_trace: Trace) -> None:
    verdict = offered(at=1, includes="cart_*").check(shop_trace)
    assert verdict.passed is False  # bool() would raise the table under the plugin
    assert verdict.failure is not None and verdict.failure.iteration == 1
    assert "'cart_*' is not offered; offered ['search', 'help']" in str(verdict.problem)
    exact = offered(at=2, exactly=["search", "nope"]).check(shop_trace)
    assert "missing ['nope'], unexpected ['help', 'cart_add', 'cart_show']" in str(exact.problem)
    excluded = offered(at=2, excludes="cart_*").check(shop_trace)
    assert "'cart_*' is offered: ['cart_add', 'cart_show']" in str(excluded.problem)


def test_offered_at_a_missing_iteration(shop_trace: Trace) -> None:
    verdict = offered(at=9, includes="search").check(shop_trace)
    assert verdict.problem == "the run has 4 iterations, no iteration 9"
    assert verdict.failure is not None and verdict.failure.iteration == 5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"at": 0, "includes": "x"}, "1-based iteration"),
        ({"at": True, "includes": "x"}, "1-based iteration"),
        ({"at": 1}, "needs includes=, excludes= or exactly="),
        ({"at": 1, "includes": [""]}, "tool names or globs"),
        ({"at": 1, "includes": [3]}, "tool names or globs"),
    ],
)
def test_offered_rejects_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        offered(**kwargs)  # type: ignore[arg-type]


def test_never_offered(shop_trace: Trace) -> None:
    assert shop_trace == never_offered("admin_*", "delete")
    verdict = never_offered("help", "cart_*").check(shop_trace)
    assert verdict.problem == "'help' is offered at iteration 1: ['help']"
    with pytest.raises(UsageError, match="at least one"):
        never_offered()


def test_injected_by_name_iteration_call_and_strategy(shop_trace: Trace) -> None:
    assert shop_trace == injected("cart_add", "cart_show")
    assert shop_trace == injected("cart_*", at=1, after_call="search", strategy="Shop")
    assert shop_trace == injected(at=1)
    assert shop_trace == injected(strategy="Sh*")
    assert shop_trace != injected("cart_*", at=2)
    assert shop_trace != injected("cart_*", strategy="Other")
    assert shop_trace != injected("cart_*", after_call="cart_*")
    assert shop_trace != injected("wishlist_*")


def test_injected_failure_explains_what_was_injected(shop_trace: Trace) -> None:
    verdict = injected("cart_*", strategy="Other").check(shop_trace)
    assert verdict.problem == (
        "'cart_*' was not injected as asked: it was injected at iteration 1 by 'Shop' "
        "after a call of 'search', not by 'Other'"
    )
    nothing = injected(at=3).check(shop_trace)
    assert nothing.problem == (
        "no tool was injected as asked: tools were injected at iteration 1 by 'Shop' after a "
        "call of 'search', not at iteration 3"
    )
    assert "no iteration 7" in str(injected("x", at=7).check(shop_trace).problem)
    with pytest.raises(UsageError, match="1-based iteration"):
        injected("x", at=0)


@pytest.mark.parametrize(
    ("expectation", "problem"),
    [
        (
            injected("cart_add", strategy="shop"),
            "'cart_add' was not injected as asked: it was injected at iteration 1 by 'Shop' "
            "after a call of 'search', not by 'shop'",
        ),
        (
            injected("cart_show", at=2),
            "'cart_show' was not injected as asked: it was injected at iteration 1 by 'Shop' "
            "after a call of 'search', not at iteration 2",
        ),
        (
            injected("cart_*", after_call="checkout", strategy="Other"),
            "'cart_*' was not injected as asked: it was injected at iteration 1 by 'Shop' "
            "after a call of 'search', not after a call of 'checkout' and not by 'Other'",
        ),
        (
            removed("cart_add", strategy="Shop"),
            "'cart_add' was not removed as asked: it was removed at iteration 2 by 'Cleanup' "
            "after a call of 'cart_add', not by 'Shop'",
        ),
    ],
)
def test_a_filter_that_does_not_match_is_named_with_the_recorded_value(
    shop_trace: Trace, expectation: Any, problem: str
) -> None:
    """Not "'x' was not injected; injected: [..., 'x']": which filter failed, and what the
    trace recorded instead."""
    assert expectation.check(shop_trace).problem == problem


def test_removed(shop_trace: Trace) -> None:
    assert shop_trace == removed("cart_add", at=2, after_call="cart_add", strategy="Cleanup")
    assert shop_trace != removed("cart_show")
    assert "injected" not in str(removed("cart_show").description)


def test_descriptions_read_like_sentences(shop_trace: Trace) -> None:
    assert injected("a", at=1, after_call="b", strategy="S").description == (
        "injected ['a'] at iteration 1 after a call of 'b' by strategy 'S'"
    )
    assert injected().description == "some tool injected"
    assert offered(at=2, includes="a", excludes="b", exactly=["c"]).description == (
        "offered at iteration 2 includes ['a'] and excludes ['b'] and exactly ['c']"
    )
    assert repr(never_offered("x")) == "<expectation: never offered ['x']>"


def test_expect_combines_and_reports_the_first_failure(shop_trace: Trace) -> None:
    ok = expect(shop_trace, injected("cart_*"), offered(at=1, excludes="cart_*"))
    assert ok and ok.problem is None
    assert "holds" in ok.explain()
    assert repr(ok).startswith("<Verdict passed:")
    bad = expect(shop_trace, injected("cart_*"), never_offered("help"), injected("zzz"))
    assert bad.passed is False
    assert bad.description == "never offered ['help']"
    with pytest.raises(UsageError, match="at least one expectation"):
        expect(shop_trace)
    with pytest.raises(UsageError, match="takes expectations"):
        expect(shop_trace, "cart_*")  # type: ignore[arg-type]
