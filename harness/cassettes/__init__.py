"""Real traffic as test input: load any cassette, match LLM requests by meaning, play a
recording into the loop (``CassetteModel``), rebuild a ``Trace`` from wire traffic, and
convert recordings to scenarios.
"""

from __future__ import annotations

import typing

from harness._lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:  # the public API: each name once (harness._lazy reads this)
    from harness._errors import (
        CassetteError as CassetteError,
        CassetteExhausted as CassetteExhausted,
        CassetteMismatch as CassetteMismatch,
        CassetteUnused as CassetteUnused,
        CassetteWarning as CassetteWarning,
    )
    from harness.cassettes._conversations import (
        Conversation as Conversation,
        Gap as Gap,
        conversations_of as conversations_of,
    )
    from harness.cassettes._convert import (
        RecordedSession as RecordedSession,
        RecordedTools as RecordedTools,
        recorded_tools as recorded_tools,
    )
    from harness.cassettes._load import (
        Cassette as Cassette,
        Interaction as Interaction,
        load_cassette as load_cassette,
    )
    from harness.cassettes._match import (
        MATCH_MODES as MATCH_MODES,
        body_differences as body_differences,
        llm_semantic as llm_semantic,
        llm_strict as llm_strict,
        request_differences as request_differences,
    )
    from harness.cassettes._model import (
        CassetteModel as CassetteModel,
    )
    from harness.cassettes._to_scenario import (
        RecordedResults as RecordedResults,
        scenario_data as scenario_data,
    )
    from harness.cassettes._trace import (
        trace_from_cassette as trace_from_cassette,
        trace_from_requests as trace_from_requests,
        trace_from_wire as trace_from_wire,
    )
    from harness.formats._codec import (
        Codec as Codec,
        ParsedRequest as ParsedRequest,
        codec_for as codec_for,
        register_codec as register_codec,
    )


__getattr__, __dir__, __all__ = _lazy_exports(__name__, __file__, globals())
"""Lazy re-exports (PEP 562): ``__all__`` is the names imported above for type checkers."""
