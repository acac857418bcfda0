"""``--help`` reads as prose for people: no Python types, no reST markup, exit codes."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from harness.cli._app import app
from harness.cli._help import plain_help

runner = CliRunner()
COMMANDS = [[], ["run"], ["serve"], ["record"], ["fuzz"], ["cassette"], ["cassette", "show"],
            ["cassette", "to-scenario"], ["cassette", "check"]]  # fmt: skip


def _help(*command: str) -> str:
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "120"}, color=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "harness")
def test_help_shows_no_python_types_and_no_rest_markup(command: list[str]) -> None:
    text = _help(*command)
    assert "<bool>" not in text  # a flag shows no type
    assert not re.search(r"list\[|\{file\}|<Path>|<str\]", text), text
    assert "``" not in text, text


def test_run_names_its_exit_codes_and_lists_read_as_items() -> None:
    text = " ".join(_help("run").split())
    assert "Exit status: 0 when every scenario passed; 1 when a scenario failed; 2 when" in text
    assert "paths... <path>..." in text
    assert "--quiet -q Show timelines only for failures." in text


def test_a_docstring_paragraph_is_one_line_of_prose() -> None:
    listing = _help()
    assert "(or, with --mcp, its tools" in " ".join(listing.split())
    assert "that harness run replays" in " ".join(_help("cassette").split())
    assert plain_help("Write ``x``\nthat runs.\n\n  Exit: 2.") == "Write x that runs.\n\nExit: 2."
