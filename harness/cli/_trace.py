"""``harness trace show|to-scenario``: OpenTelemetry trace files, read like cassettes."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from harness._errors import HarnessError
from harness.cli._help import HarnessGroup

__all__ = ["trace_app"]

trace_app = typer.Typer(
    name="trace",
    help="Inspect and convert OpenTelemetry trace files (OTLP JSON: the GenAI conventions, "
    "OpenLLMetry, OpenInference, the harness's own export).",
    no_args_is_help=True,
    add_completion=False,
    cls=HarnessGroup,
)


def _console() -> Console:
    return Console(highlight=False, markup=False, soft_wrap=True)


def _fail(console: Console, message: str) -> typer.Exit:
    from harness.cassettes._show import printable

    console.print(printable(f"error: {message}"), markup=False, style="bold red")
    return typer.Exit(2)


@trace_app.command("show")
def show_command(
    file: Path = typer.Argument(..., help="The OTLP JSON file.", dir_okay=False),  # noqa: B008
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print the per-request tool states and responses as JSON: the shape of "
        "harness cassette show --json (docs/traces.md).",
    ),
) -> None:
    """Print a trace file as injection timelines: per conversation and model request, the
    offered tools, the calls with arguments and results, the answer, the tools injected or
    removed, and the facts the spans do not hold."""
    from harness.traces._show import otel_show_data, show_otel

    console = _console()
    try:
        if as_json:
            print(json.dumps(otel_show_data(file), indent=2, ensure_ascii=False))
            return
        lines = show_otel(file)
    except HarnessError as exc:
        raise _fail(console, str(exc)) from None
    for line in lines:  # already printable
        console.print(line, markup=False)


@trace_app.command("to-scenario")
def to_scenario_command(
    file: Path = typer.Argument(..., help="The OTLP JSON file.", dir_okay=False),  # noqa: B008
    output: Path = typer.Option(  # noqa: B008
        ..., "--output", "-o", help="The scenario file to write (e.g. scenarios/NAME.yaml)."
    ),
    name: str = typer.Option(None, "--name", help="Scenario name (default: the file's stem)."),
    conversation: int = typer.Option(
        None,
        "--conversation",
        "-c",
        help="Only this conversation of the file (1-based; default: all of them).",
    ),
    tools: str = typer.Option(
        None,
        "--tools",
        help="Your tools instead of stubs: MODULE:FACTORY() (or MODULE:NAME); every result "
        "that differs from the recorded one is reported.",
    ),
    strategies: list[str] = typer.Option(  # noqa: B008
        None,
        "--strategies",
        help="Your strategies with --tools: a registered name or MODULE:FACTORY (repeatable).",
    ),
) -> None:
    """Write one scenario file that ``harness run`` replays with every model request the
    trace recorded, in order (as ``harness cassette to-scenario`` does for a recording);
    the trace must hold the content (histories, tool definitions, answers)."""
    from harness.cli._cassette import write_scenario
    from harness.traces._to_scenario import otel_cassette_conversations, otel_scenario_data

    write_scenario(
        otel_scenario_data,
        file,
        output,
        name=name,
        conversation=conversation,
        tools=tools,
        strategies=strategies,
        conversations=otel_cassette_conversations,
    )
