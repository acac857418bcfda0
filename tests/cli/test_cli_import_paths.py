"""`harness run` from a downstream project: the scenario's tools live in the user's own
package, the scenario file lives outside a ``scenarios/`` folder."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli._app import app

runner = CliRunner()

SCENARIO = """\
name: close_ticket
prompt: Close ticket T17.
tools:
  - {package}.tools:make_tools()
model:
  steps:
    - call: close_ticket
      args: {{ticket: T17}}
    - reply: closed
expect:
  output: closed
  timeline:
    - {{offered: 1, calls: [close_ticket]}}
    - {{answer: true}}
"""

TOOLS = '''\
from harness.tools import llm_tool


def make_tools():
    @llm_tool
    def close_ticket(ticket: str) -> str:
        """Close a ticket."""
        return f"{ticket} closed"

    return [close_ticket]
'''


@pytest.fixture
def clean_imports() -> Iterator[None]:
    """Undo what a run adds to ``sys.path`` and ``sys.modules``."""
    path = list(sys.path)
    modules = set(sys.modules)
    yield
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        del sys.modules[name]


def _project(root: Path, package: str) -> Path:
    """``root/<package>/tools.py`` and ``root/checks/flows/close.yaml`` (no ``scenarios/``)."""
    (root / package).mkdir(parents=True)
    (root / package / "__init__.py").write_text("")
    (root / package / "tools.py").write_text(TOOLS)
    checks = root / "checks" / "flows"
    checks.mkdir(parents=True)
    (checks / "close.yaml").write_text(SCENARIO.format(package=package))
    return checks / "close.yaml"


@pytest.mark.usefixtures("clean_imports")
def test_run_from_the_project_root_imports_the_users_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(tmp_path, "tracker_root")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["run", "checks"])
    assert result.exit_code == 0, result.output
    assert "1 passed, 0 failed" in result.output


@pytest.mark.usefixtures("clean_imports")
def test_path_option_names_the_project_from_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = _project(tmp_path / "project", "tracker_path")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = runner.invoke(app, ["run", str(scenario), "--path", str(tmp_path / "project")])
    assert result.exit_code == 0, result.output
    assert "1 passed" in result.output


@pytest.mark.usefixtures("clean_imports")
def test_a_module_that_cannot_be_imported_exits_2_with_advice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = _project(tmp_path / "project", "tracker_missing")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = runner.invoke(app, ["run", str(scenario)])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "cannot import module 'tracker_missing.tools'" in text
    assert "--path" in text


def test_path_option_must_name_a_folder(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", str(tmp_path), "--path", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "is not a folder" in result.output


@pytest.mark.usefixtures("clean_imports")
def test_sys_path_gains_entries_only_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(tmp_path, "tracker_order")
    monkeypatch.chdir(tmp_path)
    before = list(sys.path)
    runner.invoke(app, ["run", "checks"])
    assert sys.path[: len(before)] == before
    assert str(tmp_path.resolve()) in sys.path[len(before) :]


def test_scenario_text_is_valid() -> None:
    # the template is YAML once formatted (guards the doubled braces above)
    import yaml

    data = yaml.safe_load(textwrap.dedent(SCENARIO.format(package="p")))
    assert data["tools"] == ["p.tools:make_tools()"]
