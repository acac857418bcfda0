"""The ``harness_session`` fixture: sessions made in a test are closed after it."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def test_sessions_are_closed_after_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from harness import reply

        def test_two_turns(harness_session, harness_scripted):
            chat = harness_session(harness_scripted([reply("one"), reply("two")]))
            assert chat.send("a").output == "one"
            assert chat.send("b").output == "two"
            assert [t.index for t in chat.trace.turns] == [1, 2]

        def test_a_step_left_fails_at_teardown(harness_session, harness_scripted):
            chat = harness_session(harness_scripted([reply("one"), reply("never")]))
            chat.send("a")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*the run ended after 1 of 2 steps*"])


def test_every_session_is_closed_even_when_closing_one_fails(pytester: pytest.Pytester) -> None:
    """The first session's failure at close did not stop the others being closed (their
    models were never told the session ended: a cassette or script left unchecked)."""
    pytester.makepyfile(
        """
        import harness
        from harness import reply

        closed = []


        class Recording(harness.ScriptedModel):
            def end_run(self, *, completed):
                closed.append(self.name)
                super().end_run(completed=completed)


        def test_three_sessions(harness_session):
            for name in ("first", "second", "third"):
                steps = [reply("one"), reply("left")] if name != "third" else [reply("one")]
                chat = harness_session(Recording(steps, name=name))
                chat.send("a")


        def test_all_three_were_closed():
            assert closed == ["first", "second", "third"]
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*the run ended after 1 of 2 steps*"])
