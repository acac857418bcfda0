"""``CassetteModel``: play a recording's assistant turns into the harness loop, in process.

No HTTP: each request the loop makes is encoded with the recording's codec, compared
with the recorded request (``semantic`` by default), and answered with the recorded
response, while the user's real tools run. A divergence raises ``CassetteMismatch``
naming the cassette, the request and the difference; a recorded call to a tool the
loop no longer offers is reported as an injection regression.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Literal

from harness._errors import (
    CassetteError,
    CassetteExhausted,
    CassetteMismatch,
    CassetteUnused,
    MalformedResponse,
)
from harness._validation import check_choice
from harness.cassettes._load import Cassette, Interaction, load_cassette
from harness.cassettes._match import MatchMode, request_differences
from harness.formats import Codec, ParsedRequest, codec_for
from harness.loop import Model, ModelCapabilities, ModelRequest, ModelResponse
from harness.loop._tool_states import tool_states
from harness.messages import SystemMessage, ToolMessage, UserMessage
from harness.models._capabilities import FORMAT_NAMES, format_capabilities

__all__ = ["CassetteModel", "llm_turns", "recorded_request"]


def llm_turns(cassette: Cassette) -> list[tuple[Interaction, Codec]]:
    """The interactions a codec reads (LLM calls), in order, with their codec."""
    out = []
    for interaction in cassette.interactions:
        codec = codec_for(interaction.method, interaction.path)
        if codec is not None:
            out.append((interaction, codec))
    return out


def recorded_request(cassette: Cassette, interaction: Interaction, codec: Codec) -> ParsedRequest:
    """The recorded request, read by ``codec``; ``CassetteError`` naming the file and the
    interaction when the body is not a request of that format (any shape a hostile or
    damaged file holds, e.g. Anthropic ``"content": 5``)."""
    path = "" if cassette.path is None else str(cassette.path)
    try:
        parsed = codec.parse_request(interaction.request.json() or {})
        if parsed.model is None and codec.model_of(interaction.path) is not None:
            parsed = dataclasses.replace(parsed, model=codec.model_of(interaction.path))
        return parsed
    except CassetteError as exc:  # the body itself (too deep): say where it is
        raise CassetteError(str(exc), path=path, index=interaction.index) from None
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError) as exc:
        problem = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        raise CassetteError(
            f"cassette {cassette.name!r}: interaction {interaction.index + 1} is not a "
            f"{codec.name} request the harness reads: {problem}",
            path=path,
            index=interaction.index,
        ) from None


def _recorded_capabilities(turns: list[tuple[Interaction, Codec]]) -> ModelCapabilities:
    """What the recording's formats support natively, as their adapters declare it: a
    strategy then picks the native tools (a tool search's kind, an allowed subset) the
    recorded client picked. A format without an adapter (a codec of your own) allows any."""
    known = [c.name for _, c in turns if c.name in FORMAT_NAMES]
    streaming = any(i.is_stream for i, _ in turns)
    if len(known) < len(turns):
        return ModelCapabilities(
            streaming=streaming,
            tool_search=("regex", "bm25", "hosted", "client"),
            allowed_tools=True,
            tool_additions=True,
        )
    declared = [format_capabilities(name) for name in dict.fromkeys(known)]
    searches = [kind for caps in declared for kind in caps.tool_search]
    return ModelCapabilities(
        streaming=streaming,
        tool_search=tuple(dict.fromkeys(searches)),
        allowed_tools=all(caps.allowed_tools for caps in declared),
        tool_additions=all(caps.tool_additions for caps in declared),
    )


class CassetteModel(Model):
    """A ``Model`` that answers from a recorded cassette (any format a codec reads).

    ``match`` is ``semantic`` (default), ``strict`` (also tool descriptions and
    ``tool_choice``) or ``path-only`` (no request checks). ``unused="error"`` (default)
    makes a run that ends before the recording does raise ``CassetteUnused``;
    ``"ignore"`` allows it. ``system`` and ``prompt`` give the recording's first system
    and user text, to start the same conversation.
    """

    def __init__(
        self,
        source: str | Path | Cassette,
        *,
        match: str = "semantic",
        unused: str = "error",
    ) -> None:
        check_choice(match, MatchMode, name="CassetteModel(match=...)")
        check_choice(unused, Literal["error", "ignore"], name="CassetteModel(unused=...)")
        self.cassette = source if isinstance(source, Cassette) else load_cassette(source)
        self.match = match
        self.unused = unused
        self.turns = llm_turns(self.cassette)
        if not self.turns:
            raise CassetteError(
                f"cassette {self.cassette.name!r} holds no LLM request a codec reads "
                f"({len(self.cassette)} interaction(s)); known formats: OpenAI Chat "
                "Completions, OpenAI Responses, Anthropic Messages (register more with "
                "harness.cassettes.register_codec)",
                path="" if self.cassette.path is None else str(self.cassette.path),
            )
        self.recorded = [recorded_request(self.cassette, i, codec) for i, codec in self.turns]
        self.position = 0
        """How many recorded turns were played."""
        self.name = self.recorded[0].model or "cassette"
        self.capabilities = _recorded_capabilities(self.turns)

    @property
    def system(self) -> str | None:
        """The recording's first system text, if any."""
        for message in self.recorded[0].messages:
            if isinstance(message, SystemMessage):
                return message.content
        return None

    @property
    def prompt(self) -> str | None:
        """The recording's first user text, if any."""
        for message in self.recorded[0].messages:
            if isinstance(message, UserMessage):
                return message.content if isinstance(message.content, str) else str(message.content)
        return None

    def _where(self, number: int) -> str:
        return f"cassette {self.cassette.name!r}: request {number}"

    def request(self, request: ModelRequest) -> ModelResponse:
        number = self.position + 1
        if self.position >= len(self.turns):
            raise CassetteExhausted(
                f"ran past the end of cassette {self.cassette.name!r}: it holds {len(self.turns)} "
                f"recorded model turn(s), all played; the loop made request {number}. The agent "
                "takes more turns than the recording: re-record it if that is intended."
            )
        interaction, codec = self.turns[self.position]
        recorded = self.recorded[self.position]
        self.position += 1
        problems: list[str] = []
        if self.match != "path-only":
            actual = codec.parse_request(
                codec.encode_request(
                    request, model=recorded.model or self.name, stream=recorded.stream
                )
            )
            problems = request_differences(recorded, actual, check_model=False)
            if self.match == "strict":
                problems += self._strict(recorded, actual)
        try:
            response = codec.decode_response(
                interaction.status, interaction.response.headers, interaction.response.body
            )
        except MalformedResponse as exc:  # a damaged recording (usage 'abc', 1e999, 10.9)
            raise CassetteError(
                f"{self._where(number)} (interaction {interaction.index + 1}): the recorded "
                f"response is not one the harness reads: {exc}",
                path="" if self.cassette.path is None else str(self.cassette.path),
                index=interaction.index,
            ) from None
        callable_ = _callable(request, response)
        missing = [c.name for c in response.message.tool_calls if c.name not in callable_]
        if missing:
            problems.insert(
                0,
                f"injection regression: the recording calls {', '.join(missing)}, which "
                f"{'is' if len(missing) == 1 else 'are'} not offered now (offered: "
                f"{', '.join(callable_) or 'no tools'})",
            )
        if problems:
            raise CassetteMismatch(
                f"{self._where(number)} (interaction {interaction.index + 1}) differs from the "
                f"recording: {'; '.join(problems)}"
            )
        return response

    @staticmethod
    def _strict(recorded: ParsedRequest, actual: ParsedRequest) -> list[str]:
        out = []
        old = {t.name: t.description or "" for t in recorded.tools}
        for tool in actual.tools:
            if tool.name in old and " ".join(old[tool.name].split()) != " ".join(
                (tool.description or "").split()
            ):
                out.append(f"description of tool {tool.name!r} differs")
        if recorded.tool_choice != actual.tool_choice:
            out.append(
                f"tool_choice differs: recorded {recorded.tool_choice!r}, "
                f"now {actual.tool_choice!r}"
            )
        return out

    def end_run(self, *, completed: bool) -> None:
        if completed and self.unused == "error" and self.position < len(self.turns):
            left = len(self.turns) - self.position
            raise CassetteUnused(
                f"cassette {self.cassette.name!r}: the run ended after {self.position} of "
                f"{len(self.turns)} recorded model turn(s); {left} turn(s) were never requested. "
                "The agent stopped earlier than the recording (pass unused='ignore' to allow it)."
            )

    def reset(self) -> None:
        """Start again from the first recorded turn."""
        self.position = 0

    def __repr__(self) -> str:
        return f"CassetteModel({self.cassette.name!r}, {self.position}/{len(self.turns)} played)"


def _callable(request: ModelRequest, response: ModelResponse) -> tuple[str, ...]:
    """What the recorded answer may call: the tools callable on ``request`` (deferred ones
    once revealed, tools a result revealed) and those its own hosted searches found."""
    if not any(t.defer_loading or t.search for t in request.tools) and not any(
        isinstance(m, (ToolMessage, SystemMessage)) and m.tools for m in request.messages
    ):
        return request.tool_names
    found = tuple(n for s in response.message.searches for n in s.found)
    return (*tool_states(request).offered, *found)
