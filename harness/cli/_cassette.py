"""``harness cassette show|to-scenario|check`` and ``harness record``."""

from __future__ import annotations

import dataclasses
import fnmatch
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import typer
from rich.console import Console

from harness._errors import HarnessError
from harness._validation import choice_problem
from harness.cli._help import HarnessGroup
from harness.cli._output import json_text, output_file
from harness.formats import openai_chat
from harness.loop import Model, ModelRequest, ModelResponse
from harness.models import OpenAIChatModel
from harness.tools import ToolChoice

if TYPE_CHECKING:
    from harness.cassettes import Conversation

__all__ = ["cassette_app", "record_command", "write_scenario"]

cassette_app = typer.Typer(
    name="cassette",
    help="Inspect, validate and convert recorded cassettes (vcrpy YAML, any variant).",
    no_args_is_help=True,
    add_completion=False,
    cls=HarnessGroup,
)


def _console() -> Console:
    return Console(highlight=False, markup=False, soft_wrap=True)


def _say(console: Console, text: str, **style: Any) -> None:
    """Print ``text`` (which may quote a recording) with terminal escapes shown, not obeyed."""
    from harness.cassettes._show import printable

    console.print("\n".join(printable(line) for line in text.splitlines()), markup=False, **style)


def _fail(console: Console, message: str) -> typer.Exit:
    _say(console, f"error: {message}", style="bold red")
    return typer.Exit(2)


@cassette_app.command("show")
def show_command(
    file: Path = typer.Argument(..., help="The cassette file.", dir_okay=False),  # noqa: B008
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print the per-request tool states and responses as JSON (a stable shape "
        "for CI: docs/cassettes.md).",
    ),
) -> None:
    """Print a recording as an injection timeline: per request, the offered tools (deferred
    ones as ?name), the searches and what they discovered (+name), the calls with
    arguments, their results, the text, and errors with their status."""
    from harness.cassettes._show import show_cassette, show_data

    console = _console()
    try:
        if as_json:
            typer.echo(json_text(show_data(file), indent=2))
            return
        lines = show_cassette(file)
    except HarnessError as exc:
        raise _fail(console, str(exc)) from None
    for line in lines:  # already printable
        console.print(line, markup=False)


@cassette_app.command("to-scenario")
def to_scenario_command(
    file: Path = typer.Argument(..., help="The cassette file.", dir_okay=False),  # noqa: B008
    output: Path = typer.Option(  # noqa: B008
        ..., "--output", "-o", help="The scenario file to write (e.g. scenarios/NAME.yaml)."
    ),
    name: str = typer.Option(None, "--name", help="Scenario name (default: the file's stem)."),
    conversation: int = typer.Option(
        None,
        "--conversation",
        "-c",
        help="Only this conversation of the cassette (1-based; default: all of them).",
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
    """Write one scenario file that ``harness run`` replays with every recorded request, in
    order: every conversation of the cassette (interleaved ones placed where they ran), its
    user turns, tool choices and timelines; the recorded tools become stubs that return the
    recorded results, or your own with --tools."""
    from harness.cassettes import scenario_data

    write_scenario(
        scenario_data,
        file,
        output,
        name=name,
        conversation=conversation,
        tools=tools,
        strategies=strategies,
    )


def write_scenario(
    convert: Callable[..., dict[str, Any]],
    file: Path,
    output: Path,
    *,
    name: str | None,
    conversation: int | None,
    tools: str | None,
    strategies: list[str] | None,
    conversations: Callable[[Path], Sequence[Conversation]] | None = None,
) -> None:
    """Convert ``file`` with ``convert`` (a cassette's or a trace file's converter) and write
    the scenario to ``output``; exit 2 with the reason when it cannot. ``conversations``
    reads the file's conversations for the summary line (a cassette's by default)."""
    import yaml

    console = _console()
    if output.is_dir():
        raise _fail(
            console,
            f"--output {str(output)!r} is a folder; give the scenario file to write "
            f"(e.g. {str(output / (file.stem + '.yaml'))!r})",
        )
    try:
        output_file(output, option="--output", inputs=[file], make_folder=True)
    except HarnessError as exc:
        raise _fail(console, str(exc)) from None
    if strategies and not tools:
        raise _fail(console, "--strategies goes with --tools (the stubs replay the recording)")
    try:
        data = convert(
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
    recorded, replies = _counts(file, conversation, conversations)
    more = f", {replies} final repl{'y' if replies == 1 else 'ies'} added" if replies else ""
    console.print(
        f"wrote {output} ({len(sessions)} session(s), {recorded} recorded request(s){more}); "
        f"run it with: harness run {output}"
    )


def _counts(
    file: Path,
    conversation: int | None,
    conversations: Callable[[Path], Sequence[Conversation]] | None,
) -> tuple[int, int]:
    """The recorded requests the file replays, and the final replies it adds (one per
    conversation that ends on a tool call: the loop asks once more)."""
    from harness.cassettes import conversations_of

    found = (conversations or conversations_of)(file)
    chosen = found if conversation is None else [found[conversation - 1]]
    recorded = sum(len(c.requests) for c in chosen)
    replies = sum(
        1 for c in chosen if c.responses[-1] is not None and c.responses[-1].message.tool_calls
    )
    return recorded, replies


@cassette_app.command("check")
def check_command(
    files: list[Path] = typer.Argument(..., help="Cassette files."),  # noqa: B008
) -> None:
    """Validate cassettes: they load, their LLM traffic is well-formed, no credentials are
    left in headers, query strings or bodies. Exit code 2 when any file has a problem."""
    from harness.cassettes._show import check_cassette

    console = _console()
    bad = 0
    for file in files:
        problems = check_cassette(file)
        if problems:
            bad += 1
            for problem in problems:
                _say(console, f"{file}: {problem}", style="red")
        else:
            _say(console, f"{file}: ok")
    if bad:
        console.print(f"{bad} of {len(files)} file(s) have problems", style="bold red")
        raise typer.Exit(2)


class _ForcedChoice(Model):
    """Sets ``tool_choice`` per request from a list (the last entry repeats)."""

    def __init__(self, inner: Model, choices: list[str]) -> None:
        self.inner = inner
        self.choices = choices
        self.name = inner.name
        self.capabilities = inner.capabilities

    def request(self, request: ModelRequest) -> ModelResponse:
        choice: str | None = self.choices[min(request.iteration, len(self.choices)) - 1]
        if choice and choice not in ("auto", "none", "required"):
            # a tool name or glob, resolved against the tools offered on this request
            matching = [n for n in request.tool_names if fnmatch.fnmatchcase(n, choice)]
            choice = matching[0] if matching else "auto"
        settings = dataclasses.replace(request.settings, tool_choice=ToolChoice.of(choice or None))
        return self.inner.request(dataclasses.replace(request, settings=settings))


class _StringContentChat(OpenAIChatModel):
    """Sends ``content: ""`` instead of ``null`` beside tool calls (llama.cpp's server
    refuses ``null``); the semantic matcher treats both the same."""

    def params(self, request: ModelRequest) -> dict[str, Any]:
        return openai_chat.request_body(
            request,
            model=self.model,
            stream=self.stream,
            defaults=self.defaults,
            string_content=True,
        )


def record_command(
    scenario: Path = typer.Option(  # noqa: B008
        ...,
        "--scenario",
        "-s",
        help="Scenario whose prompt, tools and strategies to run.",
        dir_okay=False,
    ),
    base_url: str = typer.Option(
        None, "--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)."
    ),
    model: str = typer.Option(..., "--model", "-m", help="Model name to ask for."),
    output: Path = typer.Option(  # noqa: B008
        None, "--output", "-o", help="Cassette to write (default: cassettes/recorded/NAME.yaml)."
    ),
    api: str = typer.Option("chat", "--api", help="chat (Chat Completions) or responses."),
    stream: bool = typer.Option(False, "--stream", help="Ask for server-sent events."),
    tool_choice: str = typer.Option(
        None,
        "--tool-choice",
        help="tool_choice per request, comma-separated: auto, required, none, or a tool name "
        "or glob resolved against the offered tools (forces that tool); the last one repeats; "
        "empty leaves the default. E.g. 'search_customer,customer_*_get_average_spend,none'.",
    ),
    max_iterations: int = typer.Option(
        8, "--max-iterations", help="Stop after this many requests."
    ),
    string_content: bool = typer.Option(
        False,
        "--string-content",
        help='Chat: send content "" instead of null beside tool calls (llama.cpp servers).',
    ),
) -> None:
    """Run a scenario's tools against a real OpenAI-compatible endpoint, letting the real
    model decide, and write the traffic to a cassette (credentials scrubbed)."""
    from harness._extras import require
    from harness.loop import run
    from harness.models import OpenAIResponsesModel
    from harness.scenarios import load_scenario
    from harness.scenarios._session_files import continuation_from_data, schedule_from_data
    from harness.testing import open_cassette

    console = _console()
    try:
        require("openai", "harness record")
    except ImportError as exc:
        raise _fail(console, str(exc)) from None
    import openai

    url = base_url or os.environ.get("OPENAI_BASE_URL")
    if not url:
        raise _fail(console, "give --base-url URL (or set OPENAI_BASE_URL)")
    problem = choice_problem(api, Literal["chat", "responses"], name="--api")
    if problem:
        raise _fail(console, problem)
    try:
        loaded = load_scenario(scenario)
        tools, strategies = loaded.build_tools(), loaded.build_strategies()
        prompt = loaded.build_prompt()
        options = dataclasses.replace(loaded.build_options(), max_iterations=max_iterations)
        if loaded.spec.tool_choice is not None:  # the scenario's schedule and continuation
            strategies.append(schedule_from_data(loaded.spec.tool_choice, ""))
        if loaded.spec.continuation is not None:
            options = dataclasses.replace(
                options, continuation=continuation_from_data(loaded.spec.continuation, "")
            )
    except HarnessError as exc:
        raise _fail(console, str(exc)) from None
    target = output or Path("cassettes") / "recorded" / f"{loaded.name}.yaml"
    client = openai.OpenAI(
        base_url=url, api_key=os.environ.get("OPENAI_API_KEY") or "sk-no-key", max_retries=0
    )
    adapter_cls: type[Any] = OpenAIChatModel if api == "chat" else OpenAIResponsesModel
    if api == "chat" and string_content:
        adapter_cls = _StringContentChat
    adapter: Any = adapter_cls(client, model, stream=stream)
    if tool_choice:
        adapter = _ForcedChoice(adapter, [c.strip() for c in tool_choice.split(",")])
    if target.exists():
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open_cassette(target, record_mode="all", unused="ignore"):
            result = run(
                adapter,
                prompt,
                tools=tools,
                strategies=strategies,
                system=loaded.spec.system if loaded.spec.messages is None else None,
                options=options,
            )
    except HarnessError as exc:
        raise _fail(console, f"recording {scenario} failed: {exc}") from None
    console.print(f"wrote {target}: {len(result.trace)} request(s)", markup=False)
    for it in result.trace:
        calls = ", ".join(c.name for c in it.calls) or "answer"
        injected = f" +{' +'.join(it.injected)}" if it.injected else ""
        console.print(f"  {it.index}: offered {len(it.offered)}; {calls}{injected}", markup=False)
