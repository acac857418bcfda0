"""Wire formats: the only place that knows a provider's request and response shapes.

The loop speaks the neutral model (``harness.messages``, ``ToolDefinition``,
``ToolChoice``, ``ModelRequest``, ``ModelResponse``); each format module turns it into
its API's JSON and back, for both sides: the adapter (client) and the wire fake
(server), plus the cassette codec that reads recordings of it.

- ``harness.formats.openai_chat``: OpenAI Chat Completions.
- ``harness.formats.openai_responses``: OpenAI Responses.
- ``harness.formats.anthropic_messages``: Anthropic Messages.
- ``harness.formats.bedrock_converse``: AWS Bedrock Converse and ConverseStream.
- ``harness.formats.gemini_generate``: Gemini ``generateContent`` (Gemini API, Vertex AI).

Every format module has the same names (``request_body``, ``request_from_body``,
``response_body``, ``response_events``, ``response_from_body``,
``response_from_events``, ``response_from_sse``, ``RequestReader``, ``error_for``,
``error_details``, ``response_headers``, ``tool_param``, ``tool_from_param``,
``tool_choice_param``, ``tool_choice_from_param``, ``CODEC``): read
``harness.formats.WireFormat``. Names are imported lazily (PEP 562).
"""

from __future__ import annotations

import typing

from harness._deprecation import Renamed as _Renamed, deprecated_getattr as _deprecated_getattr
from harness._lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:  # the public API: each name once (harness._lazy reads this)
    from harness.formats._codec import (
        Codec as Codec,
        FormatCodec as FormatCodec,
        ParsedRequest as ParsedRequest,
        codec_for as codec_for,
        codecs as codecs,
        register_codec as register_codec,
    )
    from harness.formats._format import (
        WireFormat as WireFormat,
        wire_formats as wire_formats,
    )
    from harness.formats._prompt import (
        PROMPT_SECTIONS as PROMPT_SECTIONS,
        PromptPiece as PromptPiece,
        PromptSection as PromptSection,
    )
    from harness.formats._server import (
        IdSource as IdSource,
        Strictness as Strictness,
        WireError as WireError,
        WireRequest as WireRequest,
    )
    from harness.tools._definitions import (
        ToolChoice as ToolChoice,
        ToolChoiceMode as ToolChoiceMode,
        ToolDefinition as ToolDefinition,
    )

_lazy_getattr, __dir__, __all__ = _lazy_exports(__name__, __file__, globals())
"""Lazy re-exports (PEP 562): ``__all__`` is the names imported above for type checkers
(the format modules are subpackages)."""

__getattr__ = _deprecated_getattr(
    __name__,
    {
        # one letter from harness.fuzz's hypothesis profiles: say what it is, a strictness
        "Profile": _Renamed(
            old="Profile", new="Strictness", module=__name__, since="0.2.0", removal="0.3.0"
        ),
    },
    fallback=_lazy_getattr,
)
"""Renamed names of this package warn and answer the new object; the rest load lazily."""
