"""The built wheel, as a user gets it: built with the sdist, checked by twine, installed
(not editable, with the ``openai`` extra) into a fresh virtual environment in an empty
folder, where ``harness init`` scaffolds a project whose tests pass, whose scenario
passes under ``harness run``, and whose recorded conversation ``harness cassette show``
reads. Everything the commands need comes from the wheel (its package data), nothing
from this checkout.

One test, marked slow: building and installing take about a minute (most of it pip
resolving and unpacking the dependencies, from its cache when it has them).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_OUR_ENV = ("PYTHONPATH", "VIRTUAL_ENV", "PYTEST_", "COV_CORE", "COVERAGE_")


def _clean_env() -> dict[str, str]:
    """The environment without this checkout's traces: no PYTHONPATH, no active venv, no
    coverage or pytest-xdist variables."""
    return {k: v for k, v in os.environ.items() if not k.startswith(_OUR_ENV)}


def _run(command: list[str], cwd: Path, timeout: float = 600) -> str:
    done = subprocess.run(
        command,
        cwd=cwd,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.slow
def test_the_wheel_installs_into_an_empty_folder_and_its_scaffold_passes(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    _run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)],
        cwd=tmp_path,
    )
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(dist.iterdir())
    assert "PASSED" in _run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir())],
        cwd=tmp_path,
    )

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    python, harness = venv / "bin" / "python", venv / "bin" / "harness"
    _run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            f"{wheels[0]}[openai]",
        ],
        cwd=tmp_path,
    )
    project = tmp_path / "project"
    project.mkdir()
    where = _run([str(python), "-c", "import harness; print(harness.__file__)"], cwd=project)
    assert Path(where.strip()).is_relative_to(venv), where  # the wheel, not this checkout

    scaffolded = _run([str(harness), "init"], cwd=project)
    assert "created tests/test_agent_example.py" in scaffolded
    assert "pytest" in scaffolded and "harness run" in scaffolded

    tests = _run([str(python), "-m", "pytest", "-p", "no:cacheprovider", "-q"], cwd=project)
    assert "3 passed" in tests, tests

    scenarios = _run([str(harness), "run"], cwd=project)
    assert "PASS example" in scenarios and "1 passed, 0 failed" in scenarios

    shown = _run([str(harness), "cassette", "show", "cassettes/example.yaml"], cwd=project)
    assert "3 LLM request(s)" in shown
    assert "injected: book_b1_get_price, book_b1_get_stock" in shown
