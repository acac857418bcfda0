"""Assertions over a run's trace: offered tools, injections, calls, counts, timelines.

Build an expectation and compare it with a trace (or a run result) using ``==``::

    assert result.trace == injected("customer_*", after_call="search_customer")
    assert result == called_in_order("search_customer", "customer_*_get_average_spend")

The cost of a run's requests in prompt cache is judged on a ``harness.cost.CostReport``:
``assert report == no_cache_break(after=1)``, ``cache_breaks(2, cause="tools-changed")``.

In a session, ``turn=`` judges one user turn (``called("customer_*", turn=2)``, ``at=``
then counts that turn's requests); ``tool_choices("none", "required")`` checks the
``tool_choice`` each request was made with. ``trajectory(reference, mode=..., args=...)``
matches the run's calls against another trace or a list of calls in agentevals' terms.

Or check several at once with ``expect(result, ...)`` / ``expect_timeline(result, ...)``,
which return a truthy-or-falsy ``Verdict``. Under the pytest plugin a failure shows
a compact timeline table with the first divergence marked.
"""

from harness.assertions._calls import (
    ANY,
    CallSpec,
    call_to,
    called,
    called_exactly,
    called_in_order,
    called_unordered,
    never_called,
)
from harness.assertions._choices import tool_choices
from harness.assertions._cost import cache_breaks, cache_marks, no_cache_break
from harness.assertions._counts import has_events, has_injections, has_iterations, has_restarts
from harness.assertions._native import allowed, deferred, discovered, searched
from harness.assertions._offered import injected, matching, never_offered, offered, removed
from harness.assertions._render import render_table
from harness.assertions._timeline import expect_timeline, timeline
from harness.assertions._trajectory import trajectory
from harness.assertions._verdict import Expectation, Failure, Verdict, as_trace, expect

__all__ = [
    "ANY",
    "CallSpec",
    "Expectation",
    "Failure",
    "Verdict",
    "allowed",
    "as_trace",
    "cache_breaks",
    "cache_marks",
    "call_to",
    "called",
    "called_exactly",
    "called_in_order",
    "called_unordered",
    "deferred",
    "discovered",
    "expect",
    "expect_timeline",
    "has_events",
    "has_injections",
    "has_iterations",
    "has_restarts",
    "injected",
    "matching",
    "never_called",
    "never_offered",
    "no_cache_break",
    "offered",
    "removed",
    "render_table",
    "searched",
    "timeline",
    "tool_choices",
    "trajectory",
]
