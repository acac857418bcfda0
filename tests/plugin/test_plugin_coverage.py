"""``--harness-coverage``: injection coverage over every run a test session made (opt-in)."""

from __future__ import annotations

import pytest

TESTS = '''
import enum

from harness import llm_tool, run
from harness.injection import StateMachine
from harness.models import ScriptedModel


class Door(enum.Enum):
    CLOSED = "closed"
    OPEN = "open"
    LOCKED = "locked"


@llm_tool
def open_door() -> str:
    """Open."""
    return "open"


@llm_tool
def lock_door() -> str:
    """Lock."""
    return "locked"


@llm_tool
def knock() -> str:
    """Knock."""
    raise RuntimeError("nobody")


def agent():
    return StateMachine(
        Door,
        initial=Door.CLOSED,
        tools={Door.CLOSED: [open_door, knock], Door.OPEN: [lock_door], Door.LOCKED: []},
        transitions={"open_door": Door.OPEN, "lock_door": Door.LOCKED},
        name="door",
    )


def test_knocks():
    run(ScriptedModel([{"call": "knock"}, {"reply": "no"}]), "in?", strategies=[agent()])


def test_opens():
    run(ScriptedModel([{"call": "open_door"}, {"reply": "in"}]), "in!", strategies=[agent()])
'''


def test_the_report_covers_the_whole_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_door=TESTS)
    result = pytester.runpytest("--harness-coverage", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*harness injection coverage*",
            "injection coverage over 2 run(s):",
            "  offered but never called: lock_door",
            "  called only with errors: knock",
            "  door: never reached LOCKED",
        ]
    )


def test_the_ini_turns_it_on_and_it_is_off_by_default(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_door=TESTS)
    quiet = pytester.runpytest("-p", "no:cacheprovider")
    quiet.assert_outcomes(passed=2)
    assert "harness injection coverage" not in quiet.stdout.str()
    pytester.makeini("[pytest]\nharness_coverage = true\n")
    on = pytester.runpytest("-p", "no:cacheprovider")
    assert "door: never reached LOCKED" in on.stdout.str()


PER_RUN = '''
import pytest

from harness import Tool, run
from harness.models import ScriptedModel


def comment(text: str) -> str:
    """Comment on the ticket."""
    return "ok"


def ticket_tool(ticket: str) -> Tool:
    return Tool.from_function(comment, name=f"ticket_{ticket}_add_comment")


@pytest.mark.parametrize("ticket", ["t1f2e3a", "tbcdafa", "t9a8b7c"])
def test_ticket(ticket):
    run(ScriptedModel([{"reply": "nothing to do"}]), "hi", tools=[ticket_tool(ticket)])
'''


def test_names_made_per_run_are_listed_by_their_pattern(pytester: pytest.Pytester) -> None:
    """A per-run id whose hex digits all happen to be letters (``tbcdafa``) folds into
    the pattern its siblings made, as docs/fuzzing.md promises."""
    pytester.makepyfile(test_tickets=PER_RUN)
    result = pytester.runpytest("--harness-coverage", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    out = result.stdout.str()
    assert "offered but never called: ticket_*_add_comment" in out
    assert "tbcdafa" not in out.split("harness injection coverage")[-1]
