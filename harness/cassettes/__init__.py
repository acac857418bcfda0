"""Real traffic as test input: load any cassette, match LLM requests by meaning, play a
recording into the loop (``CassetteModel``), rebuild a ``Trace`` from wire traffic, and
convert recordings to scenarios.
"""

from __future__ import annotations

import typing

from harness._lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:  # the same names as _LAZY, for type checkers (tests/test_public_api.py)
    from harness.cassettes._conversations import (
        Conversation as Conversation,
        conversations as conversations,
    )
    from harness.cassettes._convert import (
        RecordedSession as RecordedSession,
        RecordedTools as RecordedTools,
        recorded_tools as recorded_tools,
        scenario_data as scenario_data,
    )
    from harness.cassettes._errors import (
        CassetteError as CassetteError,
        CassetteExhausted as CassetteExhausted,
        CassetteMismatch as CassetteMismatch,
        CassetteUnused as CassetteUnused,
    )
    from harness.cassettes._load import (
        Cassette as Cassette,
        Interaction as Interaction,
        load_cassette as load_cassette,
    )
    from harness.cassettes._match import (
        MATCH_MODES as MATCH_MODES,
        body_differences as body_differences,
        request_differences as request_differences,
    )
    from harness.cassettes._model import (
        CassetteModel as CassetteModel,
    )
    from harness.cassettes._trace import (
        trace_from_cassette as trace_from_cassette,
        trace_from_requests as trace_from_requests,
        trace_from_wire as trace_from_wire,
    )
    from harness.cassettes._vcr import (
        CassetteWarning as CassetteWarning,
        llm_semantic as llm_semantic,
        llm_strict as llm_strict,
    )
    from harness.formats._codec import (
        Codec as Codec,
        ParsedRequest as ParsedRequest,
        codec_for as codec_for,
        register_codec as register_codec,
    )

_LAZY: dict[str, str] = {
    "Conversation": "harness.cassettes._conversations",
    "RecordedSession": "harness.cassettes._convert",
    "RecordedTools": "harness.cassettes._convert",
    "conversations": "harness.cassettes._conversations",
    "recorded_tools": "harness.cassettes._convert",
    "scenario_data": "harness.cassettes._convert",
    "CassetteError": "harness.cassettes._errors",
    "CassetteExhausted": "harness.cassettes._errors",
    "CassetteMismatch": "harness.cassettes._errors",
    "CassetteUnused": "harness.cassettes._errors",
    "Cassette": "harness.cassettes._load",
    "Interaction": "harness.cassettes._load",
    "load_cassette": "harness.cassettes._load",
    "CassetteModel": "harness.cassettes._model",
    "trace_from_cassette": "harness.cassettes._trace",
    "trace_from_requests": "harness.cassettes._trace",
    "trace_from_wire": "harness.cassettes._trace",
    "MATCH_MODES": "harness.cassettes._match",
    "body_differences": "harness.cassettes._match",
    "request_differences": "harness.cassettes._match",
    "CassetteWarning": "harness.cassettes._vcr",
    "llm_semantic": "harness.cassettes._vcr",
    "llm_strict": "harness.cassettes._vcr",
    "Codec": "harness.formats._codec",
    "ParsedRequest": "harness.formats._codec",
    "codec_for": "harness.formats._codec",
    "register_codec": "harness.formats._codec",
}

__all__ = [*sorted(_LAZY)]
"""The public API: every name of ``_LAZY``."""


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, globals())
