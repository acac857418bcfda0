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
    import yaml

    from harness.traces._to_scenario import otel_scenario_data

    console = _console()
    if output.is_dir():
        raise _fail(console, f"--output {str(output)!r} is a folder; give the scenario file")
    if strategies and not tools:
        raise _fail(console, "--strategies goes with --tools (the stubs replay the recording)")
    try:
        data = otel_scenario_data(
            file,
            name=name or output.stem,
            conversation=None if conversation is None else conversation - 1,
            tools=tools,
            strategies=strategies or (),
        )
    except HarnessError as exc:
        raise _fail(console, str(exc)) from None
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _fail(console, f"cannot write {str(output)!r}: {exc.strerror or exc}") from None
    sessions = data.get("sessions") or [data]
    console.print(
        f"wrote {output} ({len(sessions)} session(s)); run it with: harness run {output}",
        markup=False,
    )
