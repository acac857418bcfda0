"""``harness compare FILE``: one task, several injection designs, what each costs."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from harness._errors import HarnessError, UsageError
from harness.cli._output import json_text, output_file, user_output_to_stderr, write_output

__all__ = ["compare_command", "comparison_html"]

_UNWRAPPED = 1_000
"""The console width when the output is not a terminal: wide enough for any row."""


def _shown(text: object) -> str:
    """Text from the comparison (names, problems) for the console: terminal escapes in
    it are shown, never obeyed, and rich markup is not read."""
    from harness.cassettes._show import printable

    return escape(printable(str(text)))


def _table(result: object) -> Table:
    from harness.scenarios import ComparisonResult

    assert isinstance(result, ComparisonResult)
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for column, justify in (
        ("variant", "left"),
        ("passed", "left"),
        ("requests", "right"),
        ("calls", "right"),
        ("tool def tokens", "right"),
        ("input tokens", "right"),
        ("cached", "right"),
        ("cache breaks", "left"),
        ("cost", "right"),
    ):
        # a narrow terminal folds a cell onto more lines; it never cuts a cause short
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for variant in result.variants:
        data = variant.to_data()
        breaks = ", ".join(b.label for b in variant.report.breaks)
        cost = data["cost"]
        table.add_row(
            _shown(variant.name),
            "[green]yes[/green]" if variant.passed else "[red]no[/red]",
            str(data["requests"]),
            str(data["calls"]),
            str(data["tool_definition_tokens"]),
            str(data["input_tokens"]),
            f"{data['cached_input_tokens']} ({variant.report.cached_share:.0%})"
            + ("*" if variant.report.under_minimum else ""),
            _shown(breaks) or "none",
            "-" if cost is None else f"${cost:.4f}",
        )
    return table


def _timeline(variant: object) -> list[str]:
    """The variant's last run as a timeline table, each cache break marked."""
    from harness.assertions import cache_marks, render_table
    from harness.scenarios import VariantResult, timeline_rows

    assert isinstance(variant, VariantResult)
    trace = variant.report.trace or variant.outcome.trace
    if trace is None:
        return ["(no run)"]
    from harness.cassettes._show import printable

    rows = render_table(timeline_rows(trace), cache=cache_marks(variant.report, trace))
    return [printable(row) for row in rows]


def comparison_html(result: object) -> str:
    """The comparison as one self-contained HTML page (``harness.cost``'s page)."""
    from harness.cost._html import PageSection, cost_page
    from harness.scenarios import ComparisonResult

    assert isinstance(result, ComparisonResult)
    sections = [
        PageSection(
            title=variant.name,
            description=variant.description,
            report=variant.report,
            passed=variant.passed,
            cost=variant.cost,
            timeline=_timeline(variant),
        )
        for variant in result.variants
    ]
    pending = "; ".join(f"{name}: {reason}" for name, reason in result.pending)
    spec = result.comparison.spec
    note = f"{spec.description.strip()}" + (f" Not run: {pending}." if pending else "")
    return cost_page(f"harness compare: {spec.name}", sections, note=note)


def compare_command(
    file: Path = typer.Argument(..., help="The comparison file.", dir_okay=False),  # noqa: B008
    as_json: bool = typer.Option(
        False, "--json", help="Print the comparison as JSON (the shape in docs/cost.md)."
    ),
    prices: Path = typer.Option(  # noqa: B008
        None,
        "--prices",
        help="A price table (YAML or JSON, USD per million tokens).",
        dir_okay=False,
    ),
    html_file: Path = typer.Option(  # noqa: B008
        None, "--html", help="Also write the comparison as one self-contained HTML page."
    ),
    timeline: bool = typer.Option(
        False, "--timeline", help="Also print each variant's timeline, cache breaks marked."
    ),
) -> None:
    """Run every variant of a comparison file and show what each one's requests cost:
    requests, tool calls, tool-definition tokens, input and cached tokens, cache breaks
    with their cause, and the price under --prices (nothing is fetched).

    Exit status: 0 when every variant reached the goal; 1 when one did not; 2 when the
    file (or the price table) cannot be read.
    """
    from harness.cost import load_prices
    from harness.scenarios import run_comparison

    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal:  # a pipe or a CI log: whole lines, at the table's own width
        console = Console(highlight=False, soft_wrap=True, width=_UNWRAPPED)
    errors = Console(stderr=True, highlight=False, soft_wrap=True)
    if str(Path.cwd()) not in sys.path:
        sys.path.append(str(Path.cwd()))  # the project's own fixtures, as `harness run` does
    try:
        if html_file is not None:  # checked before anything runs
            output_file(html_file, option="--html", inputs=[file, prices])
        table = load_prices(prices) if prices is not None else None
        with user_output_to_stderr(as_json):  # stdout is the JSON report's
            result = run_comparison(file, prices=table)
        if html_file is not None:
            write_output(html_file, comparison_html(result), option="--html")
    except (HarnessError, UsageError) as exc:
        errors.print(f"[bold red]error:[/bold red] {_shown(exc)}")
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json_text(result.to_data(), indent=2))
    else:
        spec = result.comparison.spec
        console.print(
            f"[bold]{_shown(spec.name)}[/bold]: {_shown(spec.format)}"
            + (f", {_shown(spec.model)}" if spec.model else "")
            + f", tokens by {_shown(_tokenizer(result))}"
        )
        console.print(_table(result))
        short = [v for v in result.variants if v.report.under_minimum]
        if short:
            minimum = short[0].report.rules.minimum_tokens
            console.print(
                f"* nothing can be cached: every request is shorter than the {minimum:,} "
                f"tokens the provider caches at the least "
                f"({', '.join(_shown(v.name) for v in short)})"
            )
        if timeline:
            for variant in result.variants:
                console.print(f"\n[bold]{_shown(variant.name)}[/bold]")
                console.print("\n".join(_timeline(variant)), markup=False)
        for variant in result.variants:
            if not variant.passed:
                console.print(f"  [red]{_shown(variant.name)}: {_shown(variant.problem)}[/red]")
        for name, reason in result.pending:
            console.print(f"  [dim]not run: {_shown(name)} ({_shown(reason)})[/dim]")
        if html_file is not None:
            console.print(f"wrote {_shown(html_file)}")
    if not result.passed:
        raise typer.Exit(1)


def _tokenizer(result: object) -> str:
    from harness.scenarios import ComparisonResult

    assert isinstance(result, ComparisonResult)
    names = sorted({v.report.tokenizer for v in result.variants})
    return ", ".join(names) or "-"
