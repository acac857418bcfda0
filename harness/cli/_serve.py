"""``harness serve``: serve a scenario's model over HTTP, OpenAI and Anthropic wire formats."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from harness._errors import HarnessError

__all__ = ["serve_command"]


def serve_command(
    scenario: Path = typer.Option(  # noqa: B008
        ..., "--scenario", "-s", help="Scenario file whose model to serve.", dir_okay=False
    ),
    port: int = typer.Option(0, "--port", "-p", help="Port on 127.0.0.1 (0: any free port)."),
    strict: bool = typer.Option(
        False, "--strict", help="Add stricter provider rules (undeclared tools in history)."
    ),
) -> None:
    """Serve a scenario's model on 127.0.0.1 for OpenAI and Anthropic clients; stop with Ctrl-C."""
    from harness.models import WireServer
    from harness.scenarios import load_scenario

    console = Console(highlight=False)
    try:
        model = load_scenario(scenario).build_model()
        server = WireServer(model, port=port, profile="strict" if strict else "default").bind()
    except (HarnessError, OSError) as exc:
        console.print(f"[bold red]error:[/bold red] {exc}", soft_wrap=True)
        raise typer.Exit(2) from None
    console.print(f"serving {model.name!r} from {str(scenario)!r}", soft_wrap=True)
    console.print(f"OPENAI_BASE_URL={server.url}", soft_wrap=True)
    console.print(f"ANTHROPIC_BASE_URL={server.url.removesuffix('/v1')}", soft_wrap=True)
    console.print("[dim]press Ctrl-C to stop[/dim]")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        console.print("stopped")
