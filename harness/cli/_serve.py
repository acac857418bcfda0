"""``harness serve``: serve a scenario's model over HTTP, OpenAI, Anthropic and Gemini wire
formats."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

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
    mcp: bool = typer.Option(
        False,
        "--mcp",
        help="Serve the scenario's tools as an MCP server (streamable HTTP) instead of its model.",
    ),
    mcp_server: str | None = typer.Option(
        None,
        "--mcp-server",
        help="With --mcp: serve this fake server of the scenario's mcp_servers.",
    ),
    max_body_bytes: int = typer.Option(
        4 * 1024 * 1024, "--max-body-bytes", help="Largest request body; larger ones get a 413."
    ),
    max_connections: int = typer.Option(
        64,
        "--max-connections",
        help="Most connections served at once; more take an idle or slow client's place, "
        "or wait for one, or get a 503.",
    ),
    repeat: bool = typer.Option(
        False,
        "--repeat",
        help="Serve the scenario again for every new conversation (a request whose history "
        "has no assistant turn), so one server records several tests.",
    ),
) -> None:
    """Serve a scenario's model on 127.0.0.1 for OpenAI, Anthropic and Gemini clients (or,
    with --mcp, its tools for MCP clients); stop with Ctrl-C."""
    if mcp or mcp_server is not None:
        _serve_mcp(scenario, port, mcp_server)
        return
    from harness.models import WireServer
    from harness.scenarios import load_scenario

    console = Console(highlight=False)
    try:
        loaded = load_scenario(scenario)
        model = Repeating(loaded.build_model) if repeat else loaded.build_model()
        server = WireServer(
            model,
            port=port,
            profile="strict" if strict else "default",
            max_body_bytes=max_body_bytes,
            max_connections=max_connections,
        ).bind()
    except (HarnessError, OSError) as exc:
        console.print(f"[bold red]error:[/bold red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    again = " (again for every new conversation)" if repeat else ""
    console.print(
        f"serving {model.name!r} from {str(scenario)!r}{again}", soft_wrap=True, markup=False
    )
    console.print(f"OPENAI_BASE_URL={server.url}", soft_wrap=True)
    console.print(f"ANTHROPIC_BASE_URL={server.url.removesuffix('/v1')}", soft_wrap=True)
    # boto3 reads a service's endpoint from this variable (botocore >= 1.31)
    console.print(
        f"AWS_ENDPOINT_URL_BEDROCK_RUNTIME={server.url.removesuffix('/v1')}", soft_wrap=True
    )
    # google-genai reads its base URL from this variable
    console.print(f"GOOGLE_GEMINI_BASE_URL={server.url.removesuffix('/v1')}/", soft_wrap=True)
    try:
        with _interruptible():  # before the prompt: Ctrl-C works once it is shown
            console.print("[dim]press Ctrl-C to stop[/dim]")
            server.serve_forever()
    except KeyboardInterrupt:
        console.print("stopped")


def _mcp_target(scenario: Path, server: str | None) -> object:
    """What ``--mcp`` serves: a named fake server, else the scenario's tools, else its only
    fake server."""
    from harness.mcp import ToolsAsMcp
    from harness.scenarios import load_scenario

    loaded = load_scenario(scenario)
    fakes = {f.name: f for f in loaded.build_mcp().fakes}
    if server is not None:
        if server not in fakes:
            raise HarnessError(
                f"scenario {loaded.name!r} has no fake MCP server {server!r}; "
                f"fake servers: {sorted(fakes) or 'none'}"
            )
        return fakes[server]
    tools = loaded.build_tools()
    if tools:
        return ToolsAsMcp(loaded.name, tools)
    if len(fakes) == 1:
        return next(iter(fakes.values()))
    raise HarnessError(
        f"scenario {loaded.name!r} has no tools to serve and {len(fakes)} fake MCP servers; "
        f"choose one with --mcp-server ({', '.join(sorted(fakes)) or 'none'})"
    )


def _serve_mcp(scenario: Path, port: int, server: str | None) -> None:
    from harness.mcp import McpHttpServer

    console = Console(highlight=False)
    try:
        target = _mcp_target(scenario, server)
        http = McpHttpServer(target, port=port).start()
    except (HarnessError, OSError) as exc:
        console.print(f"[bold red]error:[/bold red] {exc}", soft_wrap=True)
        raise typer.Exit(2) from None
    console.print(f"serving MCP tools of {str(scenario)!r}", soft_wrap=True)
    console.print(f"MCP_URL={http.url}", soft_wrap=True)
    try:
        with _interruptible():
            console.print("[dim]press Ctrl-C to stop[/dim]")
            http.serve_forever()
    except KeyboardInterrupt:
        console.print("stopped")


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C (SIGINT) stops the server even when whatever started it ignored or blocked
    SIGINT (both survive ``exec``: a shell's background job, a test runner's worker);
    the previous handling is restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    masks = hasattr(signal, "pthread_sigmask")  # POSIX only
    blocked = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}) if masks else set()
    try:
        yield
    finally:
        if signal.SIGINT in blocked:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, previous)
