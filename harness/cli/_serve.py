"""``harness serve``: serve a scenario's model over HTTP in the OpenAI wire format."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import typer
from rich.console import Console

from harness._errors import HarnessError
from harness.loop import Model, ModelRequest, ModelResponse
from harness.messages import AssistantMessage

__all__ = ["Repeating", "serve_command"]


class Repeating(Model):
    """Serves a fresh model (from ``factory``) for each new conversation: a request whose
    history holds no assistant message starts one."""

    def __init__(self, factory: Callable[[], Model]) -> None:
        self.factory = factory
        self.current = factory()
        self.name = self.current.name
        self.capabilities = self.current.capabilities
        self.conversations = 1
        """How many conversations were started."""
        self._used = False

    def request(self, request: ModelRequest) -> ModelResponse:
        fresh = not any(isinstance(m, AssistantMessage) for m in request.messages)
        if fresh and self._used:
            self.current = self.factory()
            self.conversations += 1
        self._used = True
        return self.current.request(request)


def serve_command(
    scenario: Path = typer.Option(  # noqa: B008
        ..., "--scenario", "-s", help="Scenario file whose model to serve.", dir_okay=False
    ),
    port: int = typer.Option(0, "--port", "-p", help="Port on 127.0.0.1 (0: any free port)."),
    strict: bool = typer.Option(
        False, "--strict", help="Add stricter provider rules (undeclared tools in history)."
    ),
    repeat: bool = typer.Option(
        False,
        "--repeat",
        help="Serve the scenario again for every new conversation (a request whose history "
        "has no assistant turn), so one server records several tests.",
    ),
) -> None:
    """Serve a scenario's model on 127.0.0.1 for OpenAI clients; stop with Ctrl-C."""
    from harness.models import WireServer
    from harness.scenarios import load_scenario

    console = Console(highlight=False)
    try:
        loaded = load_scenario(scenario)
        model = Repeating(loaded.build_model) if repeat else loaded.build_model()
        server = WireServer(model, port=port, profile="strict" if strict else "default").bind()
    except (HarnessError, OSError) as exc:
        console.print(f"[bold red]error:[/bold red] {exc}", soft_wrap=True)
        raise typer.Exit(2) from None
    again = " (again for every new conversation)" if repeat else ""
    console.print(
        f"serving {model.name!r} from {str(scenario)!r}{again}", soft_wrap=True, markup=False
    )
    console.print(f"OPENAI_BASE_URL={server.url}", soft_wrap=True)
    console.print("[dim]press Ctrl-C to stop[/dim]")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        console.print("stopped")
