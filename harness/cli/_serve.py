"""``harness serve``: serve a scenario's model over HTTP in the OpenAI wire format."""

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
    max_body_bytes: int = typer.Option(
        4 * 1024 * 1024, "--max-body-bytes", help="Largest request body; larger ones get a 413."
    ),
    max_connections: int = typer.Option(
        64, "--max-connections", help="Most connections served at once; more get a 503."
    ),
) -> None:
    """Serve a scenario's model on 127.0.0.1 for OpenAI clients; stop with Ctrl-C."""
    from harness.models import WireServer
    from harness.scenarios import load_scenario

    console = Console(highlight=False)
    try:
        model = load_scenario(scenario).build_model()
        server = WireServer(
            model,
            port=port,
            profile="strict" if strict else "default",
            max_body_bytes=max_body_bytes,
            max_connections=max_connections,
        ).bind()
    except (HarnessError, OSError) as exc:
        console.print(f"[bold red]error:[/bold red] {exc}", soft_wrap=True)
        raise typer.Exit(2) from None
    console.print(f"serving {model.name!r} from {str(scenario)!r}", soft_wrap=True)
    console.print(f"OPENAI_BASE_URL={server.url}", soft_wrap=True)
    console.print("[dim]press Ctrl-C to stop[/dim]")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        console.print("stopped")
