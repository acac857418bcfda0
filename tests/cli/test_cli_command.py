"""``dataclass_command``: a typer command whose options are a dataclass's fields."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from harness.cli._command import dataclass_command
from harness.cli._fuzz import FuzzArgs, fuzz_command

runner = CliRunner()


@dataclasses.dataclass(frozen=True, kw_only=True)
class GreetArgs:
    name: Annotated[str, typer.Option("--name", "-n", help="Who to greet.")] = "world"
    times: Annotated[int, typer.Option("--times", help="How often.", envvar="GREET_TIMES")] = 1
    names: Annotated[list[str] | None, typer.Option("--also", help="More names.")] = None
    loud: Annotated[bool, typer.Option("--loud", help="Shout.")] = False


def _greet(args: GreetArgs) -> None:
    """Greet someone."""
    for _ in range(args.times):
        text = " ".join(["hello", args.name, *(args.names or [])])
        typer.echo(text.upper() if args.loud else text)


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("greet")(dataclass_command(GreetArgs, _greet))
    app.command("other")(lambda: None)  # two commands: "greet" is a subcommand
    return app


def test_the_fields_are_the_options_with_their_flags_defaults_and_environment() -> None:
    app = _app()
    assert runner.invoke(app, ["greet"]).output == "hello world\n"
    result = runner.invoke(app, ["greet", "-n", "ada", "--also", "bob", "--also", "cy", "--loud"])
    assert result.output == "HELLO ADA BOB CY\n"
    assert runner.invoke(app, ["greet"], env={"GREET_TIMES": "2"}).output == "hello world\n" * 2
    bad = runner.invoke(app, ["greet", "--times", "x"])
    assert bad.exit_code == 2 and "Invalid value for '--times'" in bad.output


def test_the_help_is_the_docstring_and_the_fields_in_order() -> None:
    text = runner.invoke(_app(), ["greet", "--help"], env={"COLUMNS": "120"}).output
    assert "Greet someone." in text
    flags = [flag for flag in ("--name", "--times", "--also", "--loud") if flag in text]
    assert sorted(flags, key=text.index) == ["--name", "--times", "--also", "--loud"]


def test_a_field_without_a_default_or_a_class_that_is_no_dataclass_is_refused() -> None:
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Required:
        path: Annotated[Path, typer.Option("--path")]

    with pytest.raises(TypeError, match=r"every field needs a default .*\['path'\]"):
        dataclass_command(Required, lambda args: None)
    with pytest.raises(TypeError, match="is not a dataclass"):
        dataclass_command(str, lambda args: None)


def test_harness_fuzz_takes_its_options_from_fuzz_args() -> None:
    names = [field.name for field in dataclasses.fields(FuzzArgs)]
    assert list(fuzz_command.__signature__.parameters) == names  # type: ignore[attr-defined]
    assert fuzz_command.__doc__ and fuzz_command.__doc__.startswith("Fuzz your agent (--agent)")
