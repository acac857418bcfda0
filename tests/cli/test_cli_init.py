"""``harness init``: a starting point that works, written without ever overwriting a file;
and ``harness run`` in a folder with no scenarios/ says what to do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli._app import app
from harness.cli._init import INI_SETTINGS, SCAFFOLD

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "harness" / "cli" / "_templates"
runner = CliRunner()

EXPECTED = [path for path, _ in SCAFFOLD]


def _init(folder: Path) -> str:
    result = runner.invoke(app, ["init", str(folder)])
    assert result.exit_code == 0, result.output
    return result.output


def test_init_writes_the_example_and_the_settings_and_prints_the_two_commands(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"  # created when missing
    output = _init(project)
    for path in [*EXPECTED, "pytest.ini"]:
        assert (project / path).is_file(), path
        assert f"created {path}" in output
    for name, template in SCAFFOLD:
        assert (project / name).read_text(encoding="utf-8") == (TEMPLATES / template).read_text(
            encoding="utf-8"
        )
    assert (project / "pytest.ini").read_text(encoding="utf-8") == (
        "[pytest]\ntestpaths = tests scenarios\npythonpath = .\n"
        "harness_scenario_paths = scenarios/*.yaml\n"
    )
    assert f"cd {project}" in output
    assert "  pytest " in output and "  harness run " in output


def test_init_never_overwrites_a_file(tmp_path: Path) -> None:
    _init(tmp_path)
    mine = "# my own conftest\n"
    (tmp_path / "conftest.py").write_text(mine, encoding="utf-8")
    (tmp_path / "scenarios" / "example.yaml").unlink()
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    output = _init(tmp_path)
    assert "created scenarios/example.yaml" in output
    assert "kept    conftest.py" in output and "exists, kept" in output
    assert "kept    pytest.ini" in output
    for path, content in before.items():
        assert path.read_bytes() == content, path
    assert (tmp_path / "conftest.py").read_text(encoding="utf-8") == mine


def test_a_pyproject_without_pytest_settings_gets_the_table_appended(tmp_path: Path) -> None:
    original = '[project]\nname = "mine"\n'
    (tmp_path / "pyproject.toml").write_text(original, encoding="utf-8")
    output = _init(tmp_path)
    text = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    assert text == original + (
        '\n[tool.pytest.ini_options]\ntestpaths = ["tests", "scenarios"]\npythonpath = ["."]\n'
        'harness_scenario_paths = ["scenarios/*.yaml"]\n'
    )
    assert not (tmp_path / "pytest.ini").exists()
    assert "created pyproject.toml" in output


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "pyproject.toml",
            '[project]\nname = "mine"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
        ),
        ("pytest.ini", "[pytest]\naddopts = -q\n"),
        ("tox.ini", "[tox]\n\n[pytest]\naddopts = -q\n"),
        ("setup.cfg", "[tool:pytest]\naddopts = -q\n"),
    ],
)
def test_existing_pytest_settings_are_left_alone_and_the_lines_to_add_are_shown(
    tmp_path: Path, name: str, text: str
) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    output = _init(tmp_path)
    assert (tmp_path / name).read_text(encoding="utf-8") == text
    assert f"kept    {name}" in output and "has pytest settings already" in output
    for key, _ in INI_SETTINGS:
        assert key in output
    assert not (tmp_path / "pytest.ini").exists() or name == "pytest.ini"


def test_init_into_a_file_exits_2(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x", encoding="utf-8")
    result = runner.invoke(app, ["init", str(target)])
    assert result.exit_code == 2
    assert "is not a folder" in result.output


def test_the_scaffolded_scenario_passes_under_harness_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _init(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "agent_example", raising=False)
    result = runner.invoke(app, ["run"])
    assert result.exit_code == 0, result.output
    assert "PASS example" in result.output
    assert "+book_b1_get_price +book_b1_get_stock" in result.output


@pytest.mark.slow
def test_the_scaffolded_tests_pass_under_pytest(tmp_path: Path) -> None:
    _init(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_CORE"))}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout


@pytest.mark.slow
def test_the_scaffolded_python_is_lint_clean(tmp_path: Path) -> None:
    _init(tmp_path)
    for command in (
        ["check", "--isolated", "--select", "E,F,W,I,B,UP", "--line-length", "100", "."],
        ["format", "--isolated", "--line-length", "100", "--check", "."],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *command],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_run_without_a_scenarios_folder_says_to_init_or_name_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["run"])
    assert result.exit_code == 2
    assert f"no scenarios/ folder in {tmp_path}" in result.output
    assert "run `harness init`" in result.output
    assert "harness run PATH" in result.output


def test_every_template_ships_as_package_data() -> None:
    assert sorted(p.name for p in TEMPLATES.iterdir()) == sorted(t for _, t in SCAFFOLD)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'harness = ["py.typed", "cli/_templates/*"]' in pyproject
