"""The ``application/vnd.amazon.eventstream`` framing of Bedrock's streamed answers.

ConverseStream (and InvokeModelWithResponseStream) answer with binary frames, not
server-sent events: a prelude (total length, headers length, their CRC32), headers
(``:event-type``, ``:message-type``, ``:content-type``), a JSON payload and the frame's
CRC32. Reading them is botocore's own parser (``botocore.eventstream.EventStreamBuffer``,
which checks both CRCs); botocore has no encoder, so ``frame`` writes the few header
types the fake needs (strings), and the tests read every frame it writes back with
botocore's parser.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
import zlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from harness._errors import MalformedResponse
from harness._extras import require

__all__ = [
    "CONTENT_TYPE",
    "EventFrame",
    "event_frames",
    "exception_frame",
    "frame",
    "is_event_stream",
    "read_frames",
    "stream_bytes",
]

CONTENT_TYPE = "application/vnd.amazon.eventstream"
"""The ``content-type`` of a streamed Bedrock answer."""

EventFrame = tuple[str, str, Any]
"""One decoded frame: ``(message type, event or exception type, JSON payload)``;
the message type is ``event`` or ``exception``."""

_STRING = 7
"""The header value type of a string (the only one the fake writes)."""


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return (
        struct.pack("!B", len(raw_name))
        + raw_name
        + struct.pack("!BH", _STRING, len(raw_value))
        + raw_value
    )


def frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event-stream frame: prelude with its CRC, string headers, payload, frame CRC."""
    head = b"".join(_header(k, v) for k, v in headers.items())
    total = 12 + len(head) + len(payload) + 4
    prelude = struct.pack("!II", total, len(head))
    prelude += struct.pack("!I", zlib.crc32(prelude))
    body = prelude + head + payload
    return body + struct.pack("!I", zlib.crc32(body))


def _payload(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def event_frames(events: Iterable[tuple[str | None, Any]]) -> list[bytes]:
    """Each ``(event type, JSON payload)`` pair as its frame (one chunk per event)."""
    return [
        frame(
            {
                ":event-type": str(event),
                ":content-type": "application/json",
                ":message-type": "event",
            },
            _payload(data),
        )
        for event, data in events
    ]


def exception_frame(exception_type: str, message: str) -> bytes:
    """The frame of an error raised mid-stream (``throttlingException``, ...)."""
    return frame(
        {
            ":exception-type": exception_type,
            ":content-type": "application/json",
            ":message-type": "exception",
        },
        _payload({"message": message}),
    )


def is_event_stream(headers: Mapping[str, str], body: bytes) -> bool:
    """True for an event-stream body: by its ``content-type``, or, when a recording kept
    no headers, by a first frame whose prelude CRC checks out."""
    if headers.get("content-type", "").startswith(CONTENT_TYPE):
        return True
    if len(body) < 16 or body[:1] in (b"{", b"["):
        return False
    expected: int = struct.unpack("!I", body[8:12])[0]
    return zlib.crc32(body[:8]) == expected


def _frames(chunks: Iterable[bytes]) -> Iterator[Any]:
    eventstream = require("botocore.eventstream", "reading a Bedrock event stream")
    buffer = eventstream.EventStreamBuffer()
    for chunk in chunks:
        buffer.add_data(chunk)
        yield from buffer


def read_frames(body: bytes | Iterable[bytes]) -> list[EventFrame]:
    """The frames of a whole event-stream body (or its chunks), read by botocore's parser.

    A frame whose CRC does not match, that is cut short, or whose payload is not JSON is a
    ``MalformedResponse`` naming the frame.
    """
    parser_error = require("botocore.eventstream", "reading a Bedrock event stream").ParserError

    chunks = [body] if isinstance(body, (bytes, bytearray)) else body
    out: list[EventFrame] = []
    size = 0
    try:
        for number, message in enumerate(_frames(chunks)):
            size += message.prelude.total_length
            headers = message.headers
            kind = str(headers.get(":message-type", "event"))
            name = headers.get(":exception-type") if kind == "exception" else None
            name = name or headers.get(":event-type") or headers.get(":error-code") or ""
            try:
                payload = json.loads(message.payload) if message.payload else {}
            except ValueError as exc:
                raise MalformedResponse(
                    f"malformed Bedrock event stream: frame {number} ({name}) holds no JSON ({exc})"
                ) from None
            out.append((kind, str(name), payload))
    except parser_error as exc:
        raise MalformedResponse(
            f"malformed Bedrock event stream: frame {len(out)} could not be read "
            f"({type(exc).__name__}: {exc})"
        ) from None
    total = len(body) if isinstance(body, (bytes, bytearray)) else None
    if total is not None and size != total:
        raise MalformedResponse(
            f"malformed Bedrock event stream: {total - size} byte(s) after the last whole "
            f"frame (a body cut short?)"
        )
    return out


def stream_bytes(body: bytes | str) -> bytes:
    """The event-stream bytes of a recorded body: the bytes themselves, or their base64
    text (some recorders store binary bodies so)."""
    if isinstance(body, str):
        body = body.encode("latin-1", errors="replace")
    if is_event_stream({}, body):
        return body
    try:
        decoded = base64.b64decode(b"".join(body.split()), validate=True)
    except (binascii.Error, ValueError):
        return body
    return decoded if is_event_stream({}, decoded) else body
