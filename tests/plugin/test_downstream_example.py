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
