"""A cassette as text: the injection timeline per request, and a validity check."""

from __future__ import annotations

import re
from pathlib import Path

from harness._errors import CassetteError
from harness.cassettes._conversations import conversations_of as conversations
from harness.cassettes._leaks import credential_leaks
from harness.cassettes._load import Cassette, load_cassette
from harness.cassettes._model import llm_turns, recorded_request

__all__ = ["check_cassette", "printable", "show_cassette"]


_UNPRINTABLE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
"""Control characters (C0 but tab, DEL, C1; a newline too: one fact, one line), line
separators and the bidi controls that reorder what a terminal shows."""


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
    found = conversations(cassette)
    for number, conversation in enumerate(found, 1):
        if len(found) > 1:
            lines.append(
                f"conversation {number} (interactions {', '.join(map(str, conversation.numbers))})"
            )
        trace = conversation.trace()
        for it, interaction, request in zip(
            trace, conversation.interactions, conversation.requests, strict=False
        ):
            stream = ", streamed" if interaction.is_stream else ""
            lines.append(
                f"request {it.index} (interaction {interaction.index + 1}, {interaction.method} "
                f"{interaction.path}{stream}, model {request.model}): offered {len(it.offered)}"
                + (f": {', '.join(it.offered)}" if it.offered else "")
            )
            if interaction.index in errors:
                body = interaction.response.text
                lines.append(f"  error: status {interaction.status}: {_short(body, 160)}")
                continue
            for call in it.calls:
                lines.append(f"  call {call.name}({_short(call.arguments, 80)}) id={call.id}")
                if call.content:
                    lines.append(f"    -> {_short(call.content)}")
            if it.answer is not None:
                lines.append(f"  answer: {_short(it.answer, 160)}")
            elif not it.calls:
                lines.append("  answer: (empty)")
            if it.injected:
                lines.append(f"  injected: {', '.join(it.injected)}")
            if it.removed:
                lines.append(f"  removed: {', '.join(it.removed)}")
    return [printable(line) for line in lines]


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
