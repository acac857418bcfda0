"""The ``harness`` command line (typer + rich)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table

from harness._errors import HarnessError, ScenarioError
from harness.cli._help import HarnessGroup
from harness.cli._init import init_command
from harness.cli._output import user_output_to_stderr
from harness.cli._paths import extend_import_path
from harness.cli._report import json_report
from harness.scenarios import (
    Scenario,
    ScenarioOutcome,
    discover_scenarios,
    load_scenario,
    run_scenario,
)

__all__ = ["app"]

app = typer.Typer(
    name="harness",
    help="Run and inspect tool-loop scenarios with dynamic tool injection.",
    no_args_is_help=True,
    add_completion=False,
    cls=HarnessGroup,
)


def _show_version(value: bool) -> None:
    if value:
        from harness._version import __version__

        typer.echo(f"harness {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_show_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """Run and inspect tool-loop scenarios with dynamic tool injection."""


app.command("init")(init_command)


def _shown(text: object) -> str:
    """Text from a scenario (names, problems) for the console: terminal escapes and lone
    surrogates in it are shown, never obeyed (or crashing the encoder); no markup read."""
    from harness.cassettes._show import printable

    return escape(printable(str(text)))


def _timeline_table(outcome: ScenarioOutcome) -> Table:
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    sessions = any(row.session is not None for row in outcome.rows)
    turns = any(row.turn != 1 for row in outcome.rows)
    if sessions:
        table.add_column("session")
    if turns:
        table.add_column("turn", justify="right")
    table.add_column("iter", justify="right")
    table.add_column("offered", justify="right")
    table.add_column("calls")
    table.add_column("injected / removed")
    divergent = outcome.divergence.iteration if outcome.divergence else None
    for row in outcome.rows:
        calls = ", ".join(
            (f"[red]{_shown(c)}![/red]" if c in row.errors else _shown(c))
            + (" [cyan](to user)[/cyan]" if c in row.to_user else "")
            + (" [magenta](handoff)[/magenta]" if c in row.handoffs else "")
            + (" [magenta](async)[/magenta]" if c in row.started else "")
            for c in row.calls
        ) or (
            "[dim]answer[/dim]"
            if row.final
            else "[dim]text, continued[/dim]"
            if row.continued
            else ""
        )
        if row.follow_ups:
            calls = (
                ", ".join(f"[magenta]<- {_shown(n)}[/magenta]" for n in row.follow_ups)
                + (", " if calls else "")
                + calls
            )
        changes = " ".join(
            [
                *(f"[green]+{_shown(n)}[/green]" for n in row.injected if n not in row.added),
                *(f"[green]+{_shown(n)}[/green]" for n in row.added),
                *(["[cyan](by addition)[/cyan]"] if row.added else []),
                *(f"[red]-{_shown(n)}[/red]" for n in row.removed),
            ]
        )
        marker = "[bold red]>[/bold red]" if row.iteration == divergent else ""
        lead = [_shown(row.session or "")] if sessions else []
        lead += [str(row.turn)] if turns else []
        table.add_row(*lead, f"{marker}{row.iteration}", str(row.offered), calls, changes)
    return table


def _print_outcome(console: Console, outcome: ScenarioOutcome, *, quiet: bool) -> None:
    status = "[bold green]PASS[/bold green]" if outcome.passed else "[bold red]FAIL[/bold red]"
    path = outcome.scenario.path
    where = f" [dim]{_shown(path)}[/dim]" if path else ""
    console.print(f"{status} {_shown(outcome.scenario.name)}{where}", soft_wrap=True)
    if not quiet or not outcome.passed:
        if outcome.rows:
            console.print(_timeline_table(outcome))
        if outcome.problem:
            console.print(f"  [red]{_shown(outcome.problem)}[/red]", soft_wrap=True)
    for note in outcome.notes:
        console.print(f"  [yellow]result differs: {_shown(note)}[/yellow]", soft_wrap=True)


@app.command("run")
def run_command(
    paths: list[Path] = typer.Argument(  # noqa: B008
        None, help="Scenario files or folders (default: scenarios/)."
    ),
    list_only: bool = typer.Option(False, "--list", help="List the scenarios and exit."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Show timelines only for failures."),
    import_paths: list[Path] = typer.Option(  # noqa: B008
        None,
        "--path",
        help="A folder to import the scenarios' tools, strategies and models from "
        "(repeatable; the current folder is always searched).",
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print one JSON report on stdout instead of timelines (the shape is in "
        "docs/scenarios.md#json-report); the exit status is the same.",
    ),
    otel: Path = typer.Option(  # noqa: B008
        None,
        "--otel",
        help="Also write every scenario's runs to this file as OpenTelemetry spans (OTLP "
        "JSON, the GenAI conventions plus harness.* attributes: docs/traces.md).",
        dir_okay=False,
    ),
) -> None:
    """Run scenario files and check each one's expected injection timeline.

    Exit status: 0 when every scenario passed; 1 when a scenario failed; 2 when a
    scenario file is broken (it cannot be read, or its tools, strategies or model cannot
    be built), no scenario file was found, or a --path is not a folder.
    """
    console = Console(highlight=False, stderr=as_json)

    def broken(message: str) -> typer.Exit:
        if as_json:
            typer.echo(json_report([], error=message))
        console.print(f"[bold red]error:[/bold red] {_shown(message)}", soft_wrap=True)
        return typer.Exit(2)

    for folder in import_paths or []:
        if not folder.is_dir():
            raise broken(f"--path {folder} is not a folder")
    extend_import_path([*(import_paths or []), Path.cwd()])
    if not paths and not Path("scenarios").exists():
        raise broken(
            f"no scenarios/ folder in {Path.cwd()}: run `harness init` to scaffold an example "
            "(a scenario, a test of an example agent, a conftest.py), or name scenario files "
            "or folders: harness run PATH..."
        )
    try:
        files = discover_scenarios(paths or [Path("scenarios")])
        scenarios = [load_scenario(f) for f in files]
    except HarnessError as exc:
        raise broken(str(exc)) from None
    if not scenarios:
        raise broken("no scenario files found")
    if list_only:
        for scenario in scenarios:
            description = " ".join(scenario.spec.description.split())
            console.print(
                f"{_shown(scenario.name)}  [dim]{_shown(scenario.path)}[/dim]  "
                f"{_shown(description)}",
                soft_wrap=True,
            )
        return
    outcomes = _run_all(console, scenarios, as_json=as_json)
    failed = sum(1 for o in outcomes if not o.passed)
    if otel is not None:
        _write_otel(console, outcomes, otel, as_json=as_json)
    if as_json:
        typer.echo(json_report(outcomes))
    else:
        for outcome in outcomes:
            _print_outcome(console, outcome, quiet=quiet)
        console.print(
            f"\n{len(outcomes) - failed} passed, {failed} failed",
            style="bold red" if failed else "bold green",
        )
    # a scenario whose tools, strategies or model cannot be built is a broken file: 2
    if any(isinstance(o.error, ScenarioError) and not o.passed for o in outcomes):
        raise typer.Exit(2)
    if failed:
        raise typer.Exit(1)


def _run_all(
    console: Console, scenarios: list[Scenario], *, as_json: bool
) -> list[ScenarioOutcome]:
    """Run each scenario (a progress bar on a terminal for ten or more); a scenario that
    cannot be built is a failed outcome carrying its error."""
    outcomes = []
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        console=console,
        transient=True,
        disable=len(scenarios) < 10 or not console.is_terminal or as_json,
    ) as progress:
        task = progress.add_task("running scenarios", total=len(scenarios))
        for scenario in scenarios:
            try:
                with user_output_to_stderr(as_json):  # stdout is the JSON report's
                    outcome = run_scenario(scenario)
            except HarnessError as exc:
                outcome = ScenarioOutcome(
                    scenario=scenario, passed=False, rows=[], problem=str(exc), error=exc
                )
            outcomes.append(outcome)
            progress.advance(task)
    return outcomes


def _write_otel(
    console: Console, outcomes: list[ScenarioOutcome], path: Path, *, as_json: bool
) -> None:
    from harness.cli._otel import write_outcomes

    try:
        written = write_outcomes(outcomes, path)
    except (HarnessError, ImportError, OSError) as exc:
        console.print(f"[bold red]error:[/bold red] --otel: {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    if not as_json:
        console.print(f"wrote {written} run(s) to {escape(str(path))} (OTLP JSON)")


from harness.cli._serve import serve_command  # noqa: E402

app.command("serve")(serve_command)

from harness.cli._cassette import cassette_app, record_command  # noqa: E402

app.add_typer(cassette_app, name="cassette")
from harness.cli._trace import trace_app  # noqa: E402

app.add_typer(trace_app, name="trace")
app.command("record")(record_command)
from harness.cli._fuzz import fuzz_command  # noqa: E402

app.command("fuzz")(fuzz_command)
from harness.cli._compare import compare_command  # noqa: E402

app.command("compare")(compare_command)
