"""``harness fuzz``: a fuzz campaign with a progress bar, a summary and replayable failures."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from harness._errors import HarnessError
from harness.cli._command import dataclass_command
from harness.cli._output import json_text, user_output_to_stderr
from harness.cli._paths import extend_import_path

if TYPE_CHECKING:
    from harness.fuzz import AgentFuzzReport, CampaignReport

__all__ = ["FuzzArgs", "fuzz_command"]

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


def _fail(console: Console, message: str) -> NoReturn:
    console.print(f"[bold red]error:[/bold red] {escape(message)}", soft_wrap=True)
    raise typer.Exit(2)


def _write_otel(console: Console, files: list[str], failures: list[str], path: Path) -> None:
    """Replay the counterexamples and write their runs as OTLP JSON (``--otel``)."""
    from harness.cli._otel import write_counterexamples

    try:
        written = write_counterexamples(files, failures, path)
    except (HarnessError, ImportError, OSError) as exc:
        _fail(console, f"--otel: {exc}")
    console.print(f"wrote {written} counterexample run(s) to {escape(str(path))} (OTLP JSON)")


def _agent_summary(report: AgentFuzzReport) -> Table:
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("runs", f"{report.examples} in {report.seconds:.1f}s ({report.per_second:.0f}/s)")
    if report.found_after is not None:
        table.add_row(
            "first failure",
            f"after {report.found_after:.1f}s, run {report.examples_to_find}",
        )
    table.add_row("behaviours seen", str(report.behaviours))
    table.add_row("seed", str(report.seed))
    return table


def _fuzz_agent_command(console: Console, args: FuzzArgs) -> None:
    from harness.fuzz import fuzz_agent

    assert args.agent is not None
    as_json, workers, ray = args.as_json, args.workers, args.ray
    if not as_json:
        where = f"Ray ({ray})" if ray else f"{workers} worker{'s' if workers != 1 else ''}"
        wire = f" through the {args.wire} wire" if args.wire else ""
        console.print(f"fuzzing agent {escape(args.agent)}{wire} on {where}", soft_wrap=True)
    try:
        with user_output_to_stderr(as_json):  # stdout is the JSON report's
            report = fuzz_agent(
                args.agent,
                args.properties or [],
                wire=args.wire,
                max_examples=args.examples,
                max_seconds=args.max_seconds,
                seed=args.seed,
                output=args.output,
                profile=args.profile,
                max_turns=12 if args.max_turns is None else args.max_turns,
                workers=workers,
                ray=ray,
                database=None if args.no_database else args.database,
            )
    except HarnessError as exc:
        _fail(console, str(exc))
    except SystemExit as exc:  # the agent's code tried to end the process
        _fail(console, f"the agent's code raised SystemExit({exc.code!r}) during the campaign")
    if args.otel is not None and report.counterexample:
        found = report.finding
        failure = f"{found.name}: {found.message}" if found is not None else ""
        _write_otel(console, [report.counterexample], [failure], args.otel)
    if as_json:
        typer.echo(json_text(report.to_json()))
    else:
        console.print(_agent_summary(report))
        console.print(escape(report.coverage.format()), soft_wrap=True)
        console.print(escape(report.explain()), soft_wrap=True)
    if report.interrupted:
        raise typer.Exit(130)
    if report.found:
        raise typer.Exit(1)


@dataclasses.dataclass(frozen=True, kw_only=True)
class FuzzArgs:
    """The options of ``harness fuzz``, each declared once: flags, help and default."""

    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            "-a",
            help="Fuzz your own agent: MODULE:FACTORY, a function returning the keyword "
            "arguments of harness.run without the model (prompt, tools, strategies, ...).",
        ),
    ] = None
    properties: Annotated[
        list[str] | None,
        typer.Option(
            "--property",
            "-p",
            help="With --agent: MODULE:FN, a property (run) -> None raising AssertionError "
            "(repeatable; the built-in invariants always run).",
        ),
    ] = None
    wire: Annotated[
        str | None,
        typer.Option(
            "--wire",
            help="With --agent: the agent is on another framework and calls this wire format "
            "(openai-chat, openai-responses or anthropic); FACTORY is then (base_url, api_key) "
            "-> {run, prompt, state}, and the fuzzer answers on a loopback endpoint.",
        ),
    ] = None
    max_seconds: Annotated[
        float | None,
        typer.Option(
            "--max-seconds", help="With --agent: the time budget (default: the profile's)."
        ),
    ] = None
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="With --agent: print only a JSON object (found, property, message, examples, "
            "seconds, steps, counterexample).",
        ),
    ] = False
    import_paths: Annotated[
        list[Path] | None,
        typer.Option(
            "--path",
            help="A folder to import agents, properties and strategies from (repeatable; the "
            "current folder is always searched).",
        ),
    ] = None
    universe: Annotated[
        str,
        typer.Option(
            "--universe",
            "-u",
            help="Universe kind: tools, providers, facades, playbook, "
            "state_machine, sections, groups or mixed.",
        ),
    ] = "mixed"
    strategy: Annotated[
        str | None,
        typer.Option(
            "--strategy", "-s", help="Strategy under test: a registered name or module:factory."
        ),
    ] = None
    examples: Annotated[
        int | None,
        typer.Option(
            "--max-examples",
            "--examples",
            "-n",
            help="Runs to make at most (default: the profile's).",
        ),
    ] = None
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="Seed (default: 0; with --agent the profile's: random under dev, 0 under ci).",
        ),
    ] = None
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile",
            help="Hypothesis settings profile: dev, ci or nightly.",
            envvar="HARNESS_FUZZ_PROFILE",
        ),
    ] = None
    max_tools: Annotated[int, typer.Option("--max-tools", help="Tools per universe, at most.")] = 20
    max_depth: Annotated[int, typer.Option("--max-depth", help="Nesting depth, at most.")] = 2
    max_fan_out: Annotated[
        int, typer.Option("--max-fan-out", help="Objects per provider search.")
    ] = 3
    max_turns: Annotated[
        int | None,
        typer.Option("--max-turns", help="Model turns per run (default: 20, with --agent 12)."),
    ] = None
    max_iterations: Annotated[int, typer.Option("--max-iterations", help="The loop's limit.")] = 20
    faults: Annotated[
        str | None,
        typer.Option(
            "--faults",
            help="Comma-separated tool faults ('' for none; default: all of them).",
            show_default=False,
        ),
    ] = None
    database: Annotated[
        Path,
        typer.Option(
            "--database",
            help="Hypothesis example database folder: failures found once are replayed first "
            "next time (with --agent: the failing script, on a fresh agent).",
            envvar="HARNESS_FUZZ_DATABASE",
        ),
    ] = Path(DEFAULT_DATABASE)
    no_database: Annotated[
        bool, typer.Option("--no-database", help="Keep no example database.")
    ] = False
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            help="The folder counterexamples are written to (created when needed).",
        ),
    ] = Path("fuzz-counterexamples")
    workers: Annotated[
        int, typer.Option("--workers", "-w", help="Worker processes on this machine.")
    ] = 1
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray", help="Run on Ray: 'local' or a cluster address (needs the ray extra)."
        ),
    ] = None
    otel: Annotated[
        Path | None,
        typer.Option(
            "--otel",
            help="Replay each counterexample and write its runs to this file as OpenTelemetry "
            "spans (OTLP JSON: docs/traces.md), to open in a trace viewer.",
        ),
    ] = None


def _fuzz(args: FuzzArgs) -> None:
    """Fuzz your agent (--agent) or injection strategies in generated tool universes.

    With --agent the fuzzer plays the model against the agent your factory makes
    (fresh for every run) and checks your properties and the built-in invariants.
    Without it, generated universes run with the strategy under test (--strategy; none:
    the universe's own strategies only) under the dev profile unless told otherwise.
    Exit status: 0 nothing failed, 1 a failure (its counterexample is written to
    --output, and harness run FILE replays it), 2 bad usage, 130 interrupted.
    """
    console = Console(highlight=False, stderr=args.as_json)
    try:  # hypothesis comes with the fuzz extra: only this command needs it
        import harness.fuzz  # noqa: F401
    except ImportError as exc:
        console.print(f"[bold red]error:[/bold red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    for folder in args.import_paths or []:
        if not folder.is_dir():
            _fail(console, f"--path {folder} is not a folder")
    extend_import_path([*(args.import_paths or []), Path.cwd()])
    if args.agent is not None:
        if args.universe != "mixed" or args.strategy is not None or args.faults is not None:
            _fail(
                console,
                "--universe, --strategy and --faults fuzz generated universes; with --agent "
                "the agent's own tools and strategies are fuzzed: leave them out",
            )
        _fuzz_agent_command(console, args)
        return
    if args.properties or args.max_seconds is not None or args.as_json or args.wire:
        _fail(
            console, "--property, --wire, --max-seconds and --json go with --agent MODULE:FACTORY"
        )
    _campaign_command(console, args)


def _campaign_command(console: Console, args: FuzzArgs) -> None:
    from harness.fuzz import FAULTS, CampaignConfig, run_campaign

    faults = args.faults
    chosen = FAULTS if faults is None else tuple(f.strip() for f in faults.split(",") if f.strip())
    config = CampaignConfig(
        kind=args.universe,
        strategy=args.strategy,
        examples=args.examples,
        seed=args.seed or 0,
        profile=args.profile,
        max_tools=args.max_tools,
        max_depth=args.max_depth,
        max_fan_out=args.max_fan_out,
        max_turns=20 if args.max_turns is None else args.max_turns,
        max_iterations=args.max_iterations,
        faults=chosen,
        database=None if args.no_database else str(args.database),
        output=str(args.output),
        workers=args.workers,
        ray=args.ray,
    )
    try:
        config.validate()
    except HarnessError as exc:
        _fail(console, str(exc))
    workers, ray = args.workers, args.ray
    where = f"Ray ({ray})" if ray else f"{workers} worker{'s' if workers != 1 else ''}"
    console.print(
        f"fuzzing universe={args.universe} strategy={args.strategy or '(universe only)'} "
        f"profile={config.profile_name()} seed={config.seed} on {where}",
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
            _fail(console, str(exc))
    console.print(_summary(report))
    for path, failure in zip(report.counterexamples, report.failures, strict=False):
        console.print(f"[bold red]FAIL[/bold red] {escape(failure)}", soft_wrap=True)
        console.print(f"  counterexample: {path}\n  replay: harness run {path}", soft_wrap=True)
    for path in report.counterexamples[len(report.failures) :]:
        console.print(f"  counterexample: {path}\n  replay: harness run {path}", soft_wrap=True)
    if args.otel is not None and report.counterexamples:
        _write_otel(console, report.counterexamples, report.failures, args.otel)
    if report.interrupted:
        console.print("[yellow]interrupted: the summary covers the scenarios run so far[/yellow]")
        raise typer.Exit(130)
    if report.failed:
        raise typer.Exit(1)
    console.print("[bold green]no invariant violated[/bold green]")


fuzz_command = dataclass_command(FuzzArgs, _fuzz)
"""``harness fuzz`` (its options are ``FuzzArgs``'s fields)."""
