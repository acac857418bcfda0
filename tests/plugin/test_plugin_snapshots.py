"""Timeline snapshots: created when missing, compared, mismatches explained, updated on purpose."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import UsageError
from harness.loop import IterationRecord, Trace
from harness.testing import TimelineSnapshot, snapshot_text
from harness.testing._snapshot import normalize

SNAPSHOT_TESTS = """
from harness import call, reply, llm_tool

@llm_tool
def ping() -> str:
    "Ping."
    return "pong"

def test_file(harness_runner, harness_scripted, harness_snapshot):
    model = harness_scripted([call("ping"), reply("REPLY")])
    result = harness_runner.run(model, "go", tools=[ping])
    harness_snapshot(result)
    harness_snapshot(result.trace, name="again")

def test_inline(harness_runner, harness_scripted, harness_snapshot):
    model = harness_scripted([call("ping"), reply("REPLY")])
    result = harness_runner.run(model, "go", tools=[ping])
    harness_snapshot(result, '''
        #1 offered=1 calls=ping
        #2 offered=1 answer='REPLY'
    ''')
"""


def _snapshots(root: Path) -> dict[str, str]:
    folder = root / "__timelines__" / "test_snap"
    return {p.name: p.read_text() for p in sorted(folder.glob("*.timeline"))}


def test_create_compare_mismatch_and_update(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_snap=SNAPSHOT_TESTS)
    created = pytester.runpytest("-p", "no:cacheprovider")
    created.assert_outcomes(passed=2)
    assert _snapshots(pytester.path) == {
        "test_file-again.timeline": "#1 offered=1 calls=ping\n#2 offered=1 answer='REPLY'\n",
        "test_file.timeline": "#1 offered=1 calls=ping\n#2 offered=1 answer='REPLY'\n",
    }
    assert "harness: 2 timeline snapshot(s) written" in created.stdout.str()

    again = pytester.runpytest("-p", "no:cacheprovider")
    again.assert_outcomes(passed=2)
    assert "snapshot(s) written" not in again.stdout.str()

    source = pytester.path / "test_snap.py"
    source.write_text(source.read_text().replace('"REPLY"', '"CHANGED"'))
    changed = pytester.runpytest("-p", "no:cacheprovider")
    changed.assert_outcomes(failed=2)
    out = changed.stdout.str()
    assert "the run's timeline differs from the " in out
    assert "test_file.timeline (rerun with --harness-update-snapshots to accept it)" in out
    assert "-#2 offered=1 answer='REPLY'" in out
    assert "+#2 offered=1 answer='CHANGED'" in out
    assert "differs from the inline snapshot" in out

    updated = pytester.runpytest("-p", "no:cacheprovider", "--harness-update-snapshots")
    updated.assert_outcomes(passed=2)
    assert "harness: 2 timeline snapshot(s) written" in updated.stdout.str()
    assert "CHANGED" in _snapshots(pytester.path)["test_file.timeline"]
    new_source = source.read_text()
    assert "#2 offered=1 answer='CHANGED'" in new_source
    assert "answer='REPLY'" not in new_source
    compile(new_source, "test_snap.py", "exec")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_inline_update_is_refused_under_xdist_workers(tmp_path: Path) -> None:
    trace = Trace(iterations=[IterationRecord(index=1, offered=(), finish_reason="stop")])
    snapshot = TimelineSnapshot(
        test_path=tmp_path / "t.py", test_name="t", update=True, worker=True
    )
    with pytest.raises(UsageError, match="without -n"):
        snapshot(trace, "#1 offered=9")
    snapshot(trace, "#1 offered=0 answer=''")  # equal: nothing to update


def test_snapshot_text_and_normalize() -> None:
    trace = Trace(
        iterations=[IterationRecord(index=1, offered=("a",), answer="x", finish_reason="stop")],
        restarts=2,
    )
    assert snapshot_text(trace) == "#1 offered=1 answer='x'\nrestarts=2"
    assert normalize("\n\n    a  \n      b\n\n") == "a\n  b"


def test_literal_escapes_awkward_text(tmp_path: Path) -> None:
    from harness.testing._snapshot import _literal

    assert _literal('say "hi"', "") == repr('say "hi"')
    assert _literal("a\\b", "") == repr("a\\b")
    assert _literal("a\nb", "  ") == '"""\n      a\n      b\n      """'
