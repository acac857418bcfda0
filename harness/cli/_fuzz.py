"""``harness fuzz``: a fuzz campaign with a progress bar, a summary and replayable failures."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from harness._errors import HarnessError

if TYPE_CHECKING:
    from harness.fuzz import CampaignReport

__all__ = ["fuzz_command"]

DEFAULT_DATABASE = ".hypothesis/harness-fuzz"


def _summary(report: CampaignReport) -> Table:
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("examples", str(report.examples))
    table.add_row("distinct timelines", str(len(report.timelines)))
    table.add_row("injections per run", f"{report.injections_per_run:.2f}")
    endings = ", ".join(f"{name} {count}" for name, count in report.errors.most_common())
    table.add_row("run endings", endings or "-")
    violations = ", ".join(f"{name} {count}" for name, count in report.violations.most_common())
    table.add_row("invariant violations", violations or "none")
    table.add_row(
        "throughput",
        f"{report.per_second:.0f}/s total, {report.per_worker_second:.0f}/s per worker "
        f"({report.workers} worker{'s' if report.workers != 1 else ''}, {report.tasks} task"
        f"{'s' if report.tasks != 1 else ''}, {report.elapsed:.1f}s)",
    )
    return table


def fuzz_command(
    universe: str = typer.Option(
        "mixed",
        "--universe",
        "-u",
        help="Universe kind: tools, providers, facades, playbook, "
        "state_machine, sections, groups or mixed.",
    ),
    strategy: str | None = typer.Option(
        None, "--strategy", "-s", help="Strategy under test: a registered name or module:factory."
    ),
    examples: int | None = typer.Option(
        None, "--examples", "-n", help="Scenarios to generate (default: the profile's)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed (worker i uses seed + i)."),
    profile: str | None = typer.Option(
        None,
        "--profile",
        help="Hypothesis settings profile: dev, ci or nightly.",
        envvar="HARNESS_FUZZ_PROFILE",
    ),
    max_tools: int = typer.Option(20, "--max-tools", help="Tools per universe, at most."),
    max_depth: int = typer.Option(2, "--max-depth", help="Nesting depth, at most."),
    max_fan_out: int = typer.Option(3, "--max-fan-out", help="Objects per provider search."),
    max_turns: int = typer.Option(20, "--max-turns", help="Model decisions per scenario."),
    max_iterations: int = typer.Option(20, "--max-iterations", help="The loop's limit."),
    faults: str | None = typer.Option(
        None,
        "--faults",
        help="Comma-separated tool faults ('' for none; default: all of them).",
        show_default=False,
    ),
    database: Path = typer.Option(  # noqa: B008
        Path(DEFAULT_DATABASE),
        "--database",
        help="Hypothesis example database folder.",
        envvar="HARNESS_FUZZ_DATABASE",
    ),
    no_database: bool = typer.Option(False, "--no-database", help="Keep no example database."),
    output: Path = typer.Option(  # noqa: B008
        Path("fuzz-counterexamples"), "--output", "-o", help="Where counterexamples are written."
    ),
    workers: int = typer.Option(1, "--workers", "-w", help="Worker processes on this machine."),
    ray: str | None = typer.Option(
        None, "--ray", help="Run on Ray: 'local' or a cluster address (needs the ray extra)."
    ),
) -> None:
    """Fuzz injection strategies with generated tool universes, model behaviour and faults."""
    console = Console(highlight=False)
    try:  # hypothesis comes with the fuzz extra: only this command needs it
        from harness.fuzz import FAULTS, CampaignConfig, run_campaign
    except ImportError as exc:
        console.print(f"[bold red]error:[/bold red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    chosen = FAULTS if faults is None else tuple(f.strip() for f in faults.split(",") if f.strip())
    config = CampaignConfig(
        kind=universe,
        strategy=strategy,
        examples=examples,
        seed=seed,
        profile=profile,
        max_tools=max_tools,
        max_depth=max_depth,
        max_fan_out=max_fan_out,
        max_turns=max_turns,
        max_iterations=max_iterations,
        faults=chosen,
        database=None if no_database else str(database),
        output=str(output),
        workers=workers,
        ray=ray,
    )
    try:
        config.validate()
    except HarnessError as exc:
        console.print(f"[bold red]error:[/bold red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    where = f"Ray ({ray})" if ray else f"{workers} worker{'s' if workers != 1 else ''}"
    console.print(
        f"fuzzing universe={universe} strategy={strategy or '(universe only)'} "
        f"profile={config.profile_name()} seed={seed} on {where}",
        soft_wrap=True,
    )
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as progress:
        task = progress.add_task("scenarios", total=config.example_count())
        try:
            report = run_campaign(config, progress=lambda n: progress.advance(task, n))
        except HarnessError as exc:
            console.print(f"[bold red]error:[/bold red] {escape(str(exc))}", soft_wrap=True)
            raise typer.Exit(2) from None
    console.print(_summary(report))
    for path, failure in zip(report.counterexamples, report.failures, strict=False):
        console.print(f"[bold red]FAIL[/bold red] {escape(failure)}", soft_wrap=True)
        console.print(f"  counterexample: {path}\n  replay: harness run {path}", soft_wrap=True)
    for path in report.counterexamples[len(report.failures) :]:
        console.print(f"  counterexample: {path}\n  replay: harness run {path}", soft_wrap=True)
    if report.interrupted:
        console.print("[yellow]interrupted: the summary covers the scenarios run so far[/yellow]")
        raise typer.Exit(130)
    if report.failed:
        raise typer.Exit(1)
    console.print("[bold green]no invariant violated[/bold green]")
