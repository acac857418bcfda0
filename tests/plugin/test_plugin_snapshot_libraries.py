"""Timeline snapshots kept by inline-snapshot and by syrupy, beside the built-in files."""

from __future__ import annotations

import pytest

pytest.importorskip("inline_snapshot", reason="inline-snapshot is in the snapshots extra")
pytest.importorskip("syrupy", reason="syrupy is in the snapshots extra")

AGENT = """
from harness import ScriptedModel, call, llm_tool, reply, run


@llm_tool
def lookup(city: str) -> str:
    "Weather for a city."
    return "sunny"


def weather_run(second_call: str = "lookup"):
    script = [call("lookup", city="Oslo"), reply("Sunny.")]
    if second_call != "lookup":
        script = [call(second_call), reply("Sunny.")]
    return run(ScriptedModel(script), "Weather?", tools=[lookup])
"""


def test_inline_snapshot_creates_then_checks_a_timeline(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # inline-snapshot refuses to write under xdist; the inner session is not distributed
    # ... and refuses to write in CI (CI=true): the inner session is a developer's run
    for name in (
        "PYTEST_XDIST_WORKER",
        "PYTEST_XDIST_WORKER_COUNT",
        "PYTEST_XDIST_TESTRUNUID",
        "CI",
        "GITHUB_ACTIONS",
        "TEAMCITY_VERSION",
    ):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(agent=AGENT)
    test_file = pytester.makepyfile(
        test_weather="""
        from inline_snapshot import snapshot
        from harness.testing import snapshot_text
        from agent import weather_run

        def test_weather():
            assert snapshot_text(weather_run()) == snapshot()
        """
    )
    created = pytester.runpytest("-p", "no:cacheprovider", "--inline-snapshot=create")
    created.assert_outcomes(passed=1, errors=1)  # inline-snapshot flags the value it created
    source = test_file.read_text()
    assert "#1 offered=1 calls=lookup" in source  # written into the test itself
    assert "#2 offered=1 answer='Sunny.'" in source
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    # a changed timeline fails against the stored snapshot
    test_file.write_text(source.replace("#2 offered=1 answer", "#2 offered=0 answer"))
    changed = pytester.runpytest("-p", "no:cacheprovider")
    changed.assert_outcomes(failed=1, errors=1)  # the failure, and inline-snapshot's "fix me"
    assert "- #2 offered=0 answer='Sunny.'" in changed.stdout.str()


def test_syrupy_extension_stores_a_timeline_file(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(agent=AGENT)
    pytester.makepyfile(
        test_weather="""
        import pytest
        from harness.testing import TimelineSnapshotExtension
        from agent import weather_run

        @pytest.fixture
        def snapshot(snapshot):
            return snapshot.use_extension(TimelineSnapshotExtension)

        def test_weather(snapshot):
            assert weather_run() == snapshot
        """
    )
    pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=1)
    files = list(pytester.path.rglob("*.timeline"))
    assert len(files) == 1
    assert files[0].read_text() == "#1 offered=1 calls=lookup\n#2 offered=1 answer='Sunny.'\n"
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    files[0].write_text("#1 offered=1 answer='Cloudy.'\n")
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    assert "answer='Sunny.'" in failed.stdout.str()


BOTH = """
from agent import weather_run


def test_timeline(harness_snapshot):
    harness_snapshot(weather_run())


def test_other_value(snapshot):  # syrupy's own fixture, in the same project
    assert {"city": "Oslo"} == snapshot
"""


def test_harness_snapshot_and_syrupy_coexist(pytester: pytest.Pytester) -> None:
    """With syrupy installed, the harness's timeline files are neither reported unused
    (pytest exited 1 with every test passing) nor deleted by ``--snapshot-update``."""
    pytester.makepyfile(agent=AGENT, test_both=BOTH)
    pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=2)
    (timeline,) = pytester.path.rglob("*.timeline")
    text = timeline.read_text()
    again = pytester.runpytest("-p", "no:cacheprovider")
    again.assert_outcomes(passed=2)
    assert again.ret == 0, again.stdout.str()
    assert "unused" not in again.stdout.str()
    updated = pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update")
    assert updated.ret == 0 and "deleted" not in updated.stdout.str().lower()
    assert timeline.read_text() == text  # still there, unchanged


def test_a_timeline_stored_where_syrupy_looks_is_moved_and_still_compared(
    pytester: pytest.Pytester,
) -> None:
    """Files written by earlier versions (``__snapshots__/<module>/<test>.timeline``) keep
    working: compared as before, then moved out of syrupy's folder."""
    pytester.makepyfile(agent=AGENT, test_both=BOTH)
    old = pytester.path / "__snapshots__" / "test_both" / "test_timeline.timeline"
    old.parent.mkdir(parents=True)
    old.write_text("#1 offered=1 calls=lookup\n#2 offered=1 answer='Cloudy.'\n")
    failed = pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update")
    failed.assert_outcomes(passed=1, failed=1)  # the old file was read and compared
    assert "answer='Cloudy.'" in failed.stdout.str()
    assert not old.exists()
    (moved,) = pytester.path.rglob("*.timeline")
    assert moved.read_text() == "#1 offered=1 calls=lookup\n#2 offered=1 answer='Cloudy.'\n"
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_text(moved.read_text())
    moved.unlink()  # an old, matching file: the run passes and moves it
    passed = pytester.runpytest("-p", "no:cacheprovider", "--harness-update-snapshots")
    passed.assert_outcomes(passed=2)
    assert passed.ret == 0 and not old.exists()
    assert [p.name for p in pytester.path.rglob("*.timeline")] == ["test_timeline.timeline"]
