"""The Chat Completions cassette codec: recordings read with the fake's own reader."""

from __future__ import annotations

from harness.formats._codec import FormatCodec
from harness.formats.openai_chat._request import NAME, request_body, request_from_body
from harness.formats.openai_chat._response import response_from_body, response_from_events

__all__ = ["CODEC", "ROUTE"]

ROUTE = "/chat/completions"
"""The endpoint's path after the ``/v1`` prefix."""

CODEC = FormatCodec(
    name=NAME,
    path_suffix=ROUTE,
    read=request_from_body,
    encode=request_body,
    decode_json=response_from_body,
    decode_events=response_from_events,
)
"""The codec ``harness.formats.codec_for`` finds for ``POST .../chat/completions``."""
