"""A cassette as text: the injection timeline per request, and a validity check."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness._errors import CassetteError
from harness.cassettes._conversations import conversations_of
from harness.cassettes._leaks import credential_leaks
from harness.cassettes._load import Cassette, load_cassette
from harness.cassettes._model import llm_turns, recorded_request
from harness.loop import IterationRecord
from harness.messages import AssistantMessage, SystemMessage
from harness.tools import ToolChoice

__all__ = ["check_cassette", "printable", "request_data", "show_cassette", "show_data"]


_UNPRINTABLE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff]"
)
"""Control characters (C0 but tab, DEL, C1; a newline too: one fact, one line), line
separators, the bidi controls that reorder what a terminal shows, and lone surrogates
(no terminal encoding can print them)."""


def printable(text: str) -> str:
    """``text`` safe to print to a terminal: control and bidi characters escaped
    (``\x1b]0;title\x07`` shows as ``\\x1b]0;title\\x07``, never retitles or clears it)."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _short(text: str, limit: int = 100) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def show_cassette(source: str | Path | Cassette) -> list[str]:
    """The recording as an injection timeline, one line per fact (recorded text is
    ``printable``: terminal escapes in it are shown, not obeyed)."""
    cassette = source if isinstance(source, Cassette) else load_cassette(source)
    turns = llm_turns(cassette)
    lines = [
        f"cassette {cassette.name} ({cassette.variant} format): {len(cassette)} interaction(s), "
        f"{len(turns)} LLM request(s)"
    ]
    errors = {i.index: i for i, _ in turns if i.status >= 400}
    found = conversations_of(cassette)
    for number, conversation in enumerate(found, 1):
        if len(found) > 1:
            lines.append(
                f"conversation {number} (interactions {', '.join(map(str, conversation.numbers))})"
            )
        trace = conversation.trace()
        for it, interaction, request in zip(
            trace, conversation.interactions, conversation.requests, strict=False
        ):
            if it.index > 1:
                lines.extend(_written_lines(conversation.gap(it.index - 2).written))
            stream = ", streamed" if interaction.is_stream else ""
            lines.append(
                f"request {it.index} (interaction {interaction.index + 1}, {interaction.method} "
                f"{interaction.path}{stream}, model {request.model}): offered {len(it.offered)}"
                + (f": {', '.join(it.offered)}" if it.offered else "")
                + (
                    f"; deferred {len(it.deferred)}: " + ", ".join(f"?{n}" for n in it.deferred)
                    if it.deferred
                    else ""
                )
            )
            if it.allowed is not None and it.tools is not None and it.tools.tool_choice:
                lines.append(f"  allowed ({it.tools.tool_choice.mode}): {', '.join(it.allowed)}")
            if interaction.index in errors:
                body = interaction.response.text
                lines.append(f"  error: status {interaction.status}: {_short(body, 160)}")
                continue
            if it.searches or it.discovered:
                shown = ", ".join(f"+{n}" for n in it.discovered) or "nothing"
                lines.append(f"  searched {it.searches} time(s), discovered: {shown}")
            for call in it.calls:
                lines.append(f"  call {call.name}({_short(call.arguments, 80)}) id={call.id}")
                if call.content:
                    lines.append(f"    -> {_short(call.content)}")
            if it.answer is not None:
                lines.append(f"  answer: {_short(it.answer, 160)}")
            elif not it.calls:
                lines.append("  answer: (empty)")
            if it.injected:
                added = {n for c in it.changes if c.via == "addition" for n in c.added}
                shown = ", ".join(n + (" (addition)" if n in added else "") for n in it.injected)
                lines.append(f"  injected: {shown}")
            if it.removed:
                lines.append(f"  removed: {', '.join(it.removed)}")
    return [printable(line) for line in lines]


def _written_lines(written: Any) -> list[str]:
    """What the client wrote into the history before a request, one line each."""
    lines = []
    for message in written:
        if isinstance(message, SystemMessage):
            lines.append(f"  the client changed the system prompt: {_short(message.content, 120)}")
        elif isinstance(message, AssistantMessage) and message.tool_calls:
            names = ", ".join(c.name for c in message.tool_calls)
            lines.append(f"  the client wrote an assistant turn calling {names}")
        else:
            text = _short(str(message.content or ""), 120)
            lines.append(f"  the client wrote, as {message.role}: {text}")
    return lines


def show_data(source: str | Path | Cassette) -> dict[str, Any]:
    """The recording as plain data, the shape ``harness cassette show --json`` prints (a
    contract CI tools rely on; see ``docs/cassettes.md``)::

        {"cassette": str, "format": str,
         "conversations": [{"requests": [{
             "interaction": int, "provider": str, "model": str, "stream": bool,
             "tools": {"visible": [...], "deferred": [...], "search": [...],
                       "namespaces": {ns: [...]}, "added": [...]},
             "tool_choice": {"mode": ..., "allowed": [...] | None, "name": ...} | None,
             "response": {"status": int, "calls": [...], "discovered": [...],
                          "searches": int, "text": str | None},
             "changes": [{"added": [...], "removed": [...], "via": "edit" | "addition"}],
             "written": [role, ...]}]}]}

    ``tools.added``: the visible tools a client's mid-conversation addition made callable;
    ``changes``: how the next request offers tools differently (an edited ``tools`` array,
    or an addition); ``written``: the roles of the messages the client wrote into the
    history before this request beyond answers, results and user turns (``system``: a new
    system prompt, as at a handoff). Names are plain function names. Extra keys may be
    added; these never change.
    """
    cassette = source if isinstance(source, Cassette) else load_cassette(source)
    out: list[dict[str, Any]] = []
    for conversation in conversations_of(cassette):
        trace = conversation.trace()
        requests: list[dict[str, Any]] = []
        for it, interaction, request, provider in zip(
            trace,
            conversation.interactions,
            conversation.requests,
            conversation.formats,
            strict=True,
        ):
            states = it.tools
            written = conversation.gap(it.index - 2).written if it.index > 1 else ()
            requests.append(
                request_data(
                    it,
                    interaction=interaction.index + 1,
                    provider=provider,
                    model=request.model or "",
                    stream=bool(request.stream or interaction.is_stream),
                    status=interaction.status,
                    tool_choice=states.tool_choice if states is not None else request.tool_choice,
                    error=_short(interaction.response.text, 300)
                    if interaction.status >= 400
                    else None,
                    written=[m.role for m in written],
                )
            )
        out.append({"requests": requests})
    return {"cassette": cassette.name, "format": cassette.variant, "conversations": out}


def request_data(
    it: IterationRecord,
    *,
    interaction: int,
    provider: str,
    model: str,
    stream: bool,
    status: int,
    tool_choice: ToolChoice | None,
    error: str | None = None,
    tools_known: bool = True,
    written: Sequence[str] = (),
) -> dict[str, Any]:
    """One request of the ``--json`` shape (see ``show_data``), from its trace record: the
    one builder ``harness cassette show`` and ``harness trace show`` share. ``tools_known``
    false (a trace that did not record the definitions) gives ``"tools": null``;
    ``written`` the roles of the messages the client wrote before this request."""
    states = it.tools
    response: dict[str, Any] = {
        "status": status,
        "calls": [c.name for c in it.calls],
        "discovered": list(it.discovered),
        "searches": it.searches,
        "text": it.answer,
    }
    if error is not None:
        response["error"] = error
    tools: dict[str, Any] | None = None
    if tools_known:
        tools = states.to_data() if states is not None else _plain_tools(it.offered)
        tools.setdefault("added", [])
    return {
        "interaction": interaction,
        "provider": provider,
        "model": model,
        "stream": stream,
        "tools": tools,
        "tool_choice": tool_choice.to_data() if tool_choice is not None else None,
        "response": response,
        "changes": [
            {"added": list(c.added), "removed": list(c.removed), "via": c.via} for c in it.changes
        ],
        "written": list(written),
    }


def _plain_tools(names: tuple[str, ...]) -> dict[str, Any]:
    return {"visible": list(names), "deferred": [], "search": [], "namespaces": {}, "added": []}


def check_cassette(path: str | Path) -> list[str]:
    """Problems of a cassette file (empty when it is fine): unreadable, malformed LLM
    traffic, or credentials left in headers, query strings or bodies."""
    try:
        cassette = load_cassette(path)
    except CassetteError as exc:
        return [str(exc)]
    problems: list[str] = []
    if not cassette.interactions:
        problems.append("it holds no interactions")
    for interaction, codec in llm_turns(cassette):
        where = f"interaction {interaction.index + 1}"
        try:
            recorded_request(cassette, interaction, codec)
        except CassetteError as exc:  # names the file and the interaction
            problems.append(str(exc))
        if interaction.status < 400:
            try:
                codec.decode_response(
                    interaction.status, interaction.response.headers, interaction.response.body
                )
            except Exception as exc:  # any failure of the codec is a finding, never a crash
                problems.append(
                    f"{where}: the response cannot be read as {codec.name}: {_short(str(exc))}"
                )
    problems.extend(credential_leaks(cassette))
    return problems
