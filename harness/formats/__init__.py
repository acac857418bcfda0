"""Wire formats: the only place that knows a provider's request and response shapes.

The loop speaks the neutral model (``harness.messages``, ``ToolDefinition``,
``ToolChoice``, ``ModelRequest``, ``ModelResponse``); each format module turns it into
its API's JSON and back, for both sides: the adapter (client) and the wire fake
(server), plus the cassette codec that reads recordings of it.

- ``harness.formats.openai_chat``: OpenAI Chat Completions.
- ``harness.formats.openai_responses``: OpenAI Responses.
- ``harness.formats.anthropic_messages``: Anthropic Messages.

Every format module has the same names (``request_body``, ``request_from_body``,
``response_body``, ``response_events``, ``response_from_body``,
``response_from_events``, ``response_from_sse``, ``RequestReader``, ``error_for``,
``error_details``, ``response_headers``, ``tool_param``, ``tool_from_param``,
``tool_choice_param``, ``tool_choice_from_param``, ``CODEC``): read
``harness.formats.WireFormat``. Names are imported lazily (PEP 562).
"""

from __future__ import annotations

import typing

from harness._lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:  # the same names as _LAZY, for type checkers (tests/test_public_api.py)
    from harness.formats._codec import (
        Codec as Codec,
        FormatCodec as FormatCodec,
        ParsedRequest as ParsedRequest,
        codec_for as codec_for,
        codecs as codecs,
        register_codec as register_codec,
    )
    from harness.formats._definitions import (
        ToolChoice as ToolChoice,
        ToolChoiceMode as ToolChoiceMode,
        ToolDefinition as ToolDefinition,
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
        Profile as Profile,
        WireError as WireError,
        WireRequest as WireRequest,
    )

_LAZY: dict[str, str] = {
    "Codec": "harness.formats._codec",
    "FormatCodec": "harness.formats._codec",
    "ParsedRequest": "harness.formats._codec",
    "codec_for": "harness.formats._codec",
    "codecs": "harness.formats._codec",
    "register_codec": "harness.formats._codec",
    "ToolChoice": "harness.formats._definitions",
    "ToolChoiceMode": "harness.formats._definitions",
    "ToolDefinition": "harness.formats._definitions",
    "WireFormat": "harness.formats._format",
    "wire_formats": "harness.formats._format",
    "PROMPT_SECTIONS": "harness.formats._prompt",
    "PromptPiece": "harness.formats._prompt",
    "PromptSection": "harness.formats._prompt",
    "IdSource": "harness.formats._server",
    "Profile": "harness.formats._server",
    "WireError": "harness.formats._server",
    "WireRequest": "harness.formats._server",
}

__all__ = [*sorted(_LAZY)]
"""The public API: every name of ``_LAZY`` (the format modules are subpackages)."""


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, globals())
