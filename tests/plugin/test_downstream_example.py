"""The example downstream project in docs/examples/downstream passes, offline, unchanged."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "downstream"


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_the_example_project_passes(pytester: pytest.Pytester) -> None:
    project = pytester.path / "downstream"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__"))
    before = _files(project)
    result = pytester.runpytest_subprocess(
        "--rootdir", str(project), "-c", str(project / "pytest.ini"), str(project), "-v"
    )
    result.assert_outcomes(passed=7)
    out = result.stdout.str()
    assert "scenarios/price_of_dune.yaml::price_of_dune PASSED" in out
    assert "test_replayed_from_a_cassette PASSED" in out
    assert _files(project) == before  # no snapshot or cassette was (re)written


def test_a_cassette_regression_is_reported_once_with_the_harness_advice(
    pytester: pytest.Pytester,
) -> None:
    """A request the cassette cannot answer: one failure (no teardown ``CassetteWarning``
    error under ``filterwarnings = error`` for the interactions left unplayed), not
    chained under vcrpy's exception, whose advice names record modes the harness refuses."""
    project = pytester.path / "downstream"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__"))
    conftest = project / "conftest.py"
    conftest.write_text(conftest.read_text().replace(', match_on=["method", "path"]', ""))
    tests = project / "tests" / "test_bookshop.py"
    tests.write_text(
        tests.read_text().replace(
            'ask_with_openai(harness_openai, "How much is Dune?")',
            'ask_with_openai(harness_openai, "How much is Emma?")',
        )
    )
    result = pytester.runpytest_subprocess(
        "--rootdir", str(project), "-c", str(project / "pytest.ini"), str(tests),
        "-k", "replayed",
    )  # fmt: skip
    result.assert_outcomes(failed=1, errors=0)
    out = result.stdout.str()
    # The short summary repeats the message when the terminal is wide enough: count above it.
    report = out.split("short test summary info")[0]
    assert report.count("CassetteMismatch: cassette") == 1
    assert 'message 1 differs: recorded user: text "How much is Dune?"' in out
    assert "re-record the cassette (--harness-record-mode=all)" in out
    for vcr_text in ("CannotOverwriteExistingCassetteException:", "new_episodes", "direct cause"):
        assert vcr_text not in out
    assert "CassetteWarning" not in out and "never requested" not in out
