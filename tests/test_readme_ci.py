"""README opens with the two set-up commands, and .ci/run runs exactly those."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    head = text.split("---", 1)[0]
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", head, re.S)]


def test_readme_starts_with_two_commands() -> None:
    commands = _readme_commands()
    assert len(commands) == 2
    install, tests = commands
    assert "pip install" in install and install.endswith("harness run")
    assert "pytest" in tests and "coverage report" in tests


def test_ci_runs_exactly_the_readme_commands() -> None:
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    for command in _readme_commands():
        assert command in ci_lines, f".ci/run does not run the README command: {command}"


def test_coverage_threshold_is_90() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r"^fail_under = 90$", pyproject, re.M)
    assert re.search(r"^branch = true$", pyproject, re.M)


def test_the_readme_test_command_runs_on_every_core_without_the_slow_tests() -> None:
    _install, tests = _readme_commands()
    assert "pytest -p no:cacheprovider -n auto -m 'not slow'" in tests
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^patch = \["subprocess"\]$', pyproject, re.M), "xdist workers measured"
    assert re.search(r'^    "slow: ', pyproject, re.M), "the marker is registered"


def test_ci_runs_the_slow_tests_linters_and_type_checker() -> None:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    for command in (
        "python -m pytest -p no:cacheprovider -q -n auto -m slow",
        "ruff check .",
        "ruff format --check .",
        "mypy --strict harness",
        "python tests/typecheck.py",
    ):
        assert command in lines, f".ci/run does not run: {command}"
    assert sum('pytest_status "$status"' in line for line in lines) == 2  # exit code 5 handled
