"""The Responses API cassette codec: recordings read with the fake's own decoder."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.formats._codec import Codec, ParsedRequest
from harness.formats._server import WireError
from harness.formats.openai_responses._request import NAME, request_body, request_from_body
from harness.formats.openai_responses._response import response_from_body, response_from_events
from harness.loop import ModelRequest, ModelResponse

__all__ = ["CODEC", "ROUTE", "ResponsesCodec"]

ROUTE = "/responses"
"""The endpoint's path after the ``/v1`` prefix."""


class ResponsesCodec(Codec):
    """``POST /responses``: requests are read (and checked) like the fake reads them."""

    name = NAME

    def handles(self, method: str, path: str) -> bool:
        return method.upper() == "POST" and path.rstrip("/").endswith(ROUTE)

    def parse_request(self, body: Mapping[str, Any]) -> ParsedRequest:
        try:
            return ParsedRequest.of(request_from_body(body))
        except WireError as exc:
            raise ValueError(exc.message) from None

    def encode_request(self, request: ModelRequest, *, model: str, stream: bool) -> dict[str, Any]:
        return request_body(request, model=model, stream=stream, include_reasoning=False)

    def decode_json(self, data: Any) -> ModelResponse:
        return response_from_body(data)

    def decode_events(self, events: list[Any]) -> ModelResponse:
        return response_from_events(events)


CODEC = ResponsesCodec()
"""The codec instance ``harness.formats.codec_for`` finds for Responses API requests."""
