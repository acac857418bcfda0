"""``harness init``: a working starting point in a project, written from the wheel's templates.

It writes an example agent, a test of it, a scenario, a recorded conversation, a
``conftest.py`` and the plugin's pytest settings, never over a file that exists: a file
already there is kept and reported, and the settings go to ``pyproject.toml`` (a new
``[tool.pytest.ini_options]`` table) or a new ``pytest.ini`` only when the project has no
pytest settings yet; otherwise it prints the lines to add. The templates are package
data (``harness/cli/_templates``), so an installed wheel scaffolds the same files.
"""

from __future__ import annotations

import dataclasses
import json
import re
from importlib.resources import files
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

__all__ = ["INI_SETTINGS", "SCAFFOLD", "Written", "init_command", "scaffold"]

SCAFFOLD = (
    ("agent_example.py", "agent_example.py.tmpl"),
    ("tests/test_agent_example.py", "test_agent_example.py.tmpl"),
    ("scenarios/example.yaml", "example.yaml"),
    ("cassettes/example.yaml", "example_cassette.yaml"),
    ("conftest.py", "conftest.py.tmpl"),
)
"""What ``harness init`` writes (relative to the project) and from which template."""

INI_SETTINGS = (
    ("testpaths", ("tests", "scenarios")),
    ("pythonpath", (".",)),
    ("harness_scenario_paths", ("scenarios/*.yaml",)),
)
"""The pytest settings the example needs: where tests live, the project folder importable
(``agent_example``), and scenario files collected as tests."""

_PYTEST_TABLE = re.compile(r"^\s*\[\s*tool\.pytest\b", re.MULTILINE)
"""A ``[tool.pytest.ini_options]`` (or ``[tool.pytest]``) table in ``pyproject.toml``."""
_OTHER_CONFIGS = (("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]"))
NEXT_STEPS = (
    ("pytest", "the example tests, the scenario and the replayed recording, offline"),
    ("harness run", "the scenarios under scenarios/, with their timelines"),
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Written:
    """What ``scaffold`` did with one file."""

    path: str
    """Relative to the project folder."""
    created: bool
    """False: the file existed and was kept as it is."""
    note: str = ""


def _template(name: str) -> str:
    return (files("harness.cli") / "_templates" / name).read_text(encoding="utf-8")


def _ini_text() -> str:
    lines = ["[pytest]"]
    for key, values in INI_SETTINGS:
        lines.append(f"{key} = {' '.join(values)}")
    return "\n".join(lines) + "\n"


def _toml_table() -> str:
    lines = ["[tool.pytest.ini_options]"]
    for key, values in INI_SETTINGS:
        lines.append(f"{key} = [{', '.join(json.dumps(v) for v in values)}]")
    return "\n".join(lines) + "\n"


def _appended(text: str, table: str) -> str:
    """``text`` with ``table`` after it, one blank line between."""
    if not text.strip():
        return table
    return text.rstrip("\n") + "\n\n" + table


def _pytest_settings(project: Path) -> Written:
    """Write the settings where the project has none; else say where to add them."""
    pyproject = project / "pyproject.toml"
    existing = [
        name
        for name, header in _OTHER_CONFIGS
        if (project / name).is_file()
        and header in (project / name).read_text(encoding="utf-8", errors="replace")
    ]
    if (project / "pytest.ini").is_file():
        existing.insert(0, "pytest.ini")
    if pyproject.is_file():
        text = pyproject.read_text(encoding="utf-8")
        if _PYTEST_TABLE.search(text):
            existing.insert(0, "pyproject.toml")
        elif not existing:
            pyproject.write_text(_appended(text, _toml_table()), encoding="utf-8")
            return Written(
                path="pyproject.toml", created=True, note="added [tool.pytest.ini_options]"
            )
    if existing:
        return Written(
            path=existing[0],
            created=False,
            note="has pytest settings already: add the ones below it lacks",
        )
    (project / "pytest.ini").write_text(_ini_text(), encoding="utf-8")
    return Written(path="pytest.ini", created=True, note="the plugin's settings")


def scaffold(project: Path) -> list[Written]:
    """Write the example files into ``project`` (created if missing), keeping every file
    that exists; then the pytest settings."""
    texts = {relative: _template(template) for relative, template in SCAFFOLD}
    project.mkdir(parents=True, exist_ok=True)
    done = []
    for relative, text in texts.items():
        target = project / relative
        if target.exists():
            done.append(Written(path=relative, created=False, note="exists, kept"))
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        done.append(Written(path=relative, created=True))
    done.append(_pytest_settings(project))
    return done


def init_command(
    folder: Path = typer.Argument(  # noqa: B008
        Path("."), help="The project folder (default: the current one; created if missing)."
    ),
) -> None:
    """Scaffold a working starting point: an example agent, a test of it, a scenario, a
    recorded conversation, a conftest.py and the plugin's pytest settings. Files that
    exist are never overwritten. Then run the two commands it prints.

    Exit status: 0 when done; 2 when FOLDER is a file or cannot be written.
    """
    console = Console(highlight=False, soft_wrap=True)
    if folder.exists() and not folder.is_dir():
        console.print(f"[bold red]error:[/bold red] {escape(str(folder))} is not a folder")
        raise typer.Exit(2)
    try:
        written = scaffold(folder)
    except OSError as exc:
        console.print(f"[bold red]error:[/bold red] cannot write in {escape(str(folder))}: {exc}")
        raise typer.Exit(2) from None
    console.print(f"harness init: {escape(str(folder.resolve()))}")
    for item in written:
        status = "[green]created[/green]" if item.created else "[yellow]kept   [/yellow]"
        note = f"  [dim]({escape(item.note)})[/dim]" if item.note else ""
        console.print(f"  {status} {escape(item.path)}{note}")
    settings = written[-1]
    if not settings.created:
        body = _toml_table() if settings.path == "pyproject.toml" else _ini_text()
        console.print(f"\nThe pytest settings the example needs:\n{escape(body)}")
    console.print("\nNext:")
    if folder.resolve() != Path.cwd().resolve():
        console.print(f"  cd {escape(str(folder))}")
    for command, what in NEXT_STEPS:
        console.print(f"  {command:<12} [dim]# {what}[/dim]")
