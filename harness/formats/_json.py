"""JSON and server-sent events as every wire format writes and reads them.

- ``encode_json``: JSON text exactly as the ``openai`` SDK writes request bodies.
- ``sse`` / ``sse_frames``: one event, or a list of ``(event, data)`` pairs, as SSE bytes.
- ``sse_events`` / ``sse_data``: the events of a whole SSE body, as recorded.
- ``unencodable_path``: where a value holds a lone surrogate (text no provider accepts).
- ``arguments_object``: a call's JSON arguments as the object formats with structured
  arguments send (Anthropic ``input``, Gemini ``args``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = [
    "SSEEvent",
    "arguments_object",
    "body_content_type",
    "encode_json",
    "is_sse",
    "sse",
    "sse_data",
    "sse_events",
    "sse_frames",
    "unencodable_path",
]

encode_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
"""JSON text exactly as the ``openai`` SDK writes request bodies (``openapi_dumps``) for
plain JSON values: no ASCII escaping, no spaces, no NaN."""

SSEEvent = tuple[str | None, "Mapping[str, Any] | str"]
"""One server-sent event a format emits: the ``event:`` name (or ``None``) and its data
(a JSON object, or a literal such as ``[DONE]``)."""


def sse(data: Mapping[str, Any] | str, event: str | None = None) -> bytes:
    """One server-sent event: optional ``event:`` line, ``data:`` line, blank line."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def sse_frames(events: Iterable[SSEEvent]) -> list[bytes]:
    """Each ``(event, data)`` pair as its SSE bytes (one chunk per event)."""
    return [sse(data, event) for event, data in events]


def sse_events(body: str | bytes) -> Iterator[tuple[str | None, str]]:
    """``(event, data)`` for each server-sent event of a whole body (``[DONE]`` included;
    comment lines and events without data skipped; CRLF and LF line ends alike)."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    event: str | None = None
    data: list[str] = []
    for line in [*text.replace("\r\n", "\n").split("\n"), ""]:
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = None, []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))


def sse_data(body: str | bytes) -> list[Any]:
    """The JSON ``data`` of every event of a whole SSE body (``[DONE]`` and blanks skipped).

    Raises ``ValueError`` (``json.JSONDecodeError``) for data that is not JSON.
    """
    return [
        json.loads(data)
        for _event, data in sse_events(body)
        if data.strip() and data.strip() != "[DONE]"
    ]


_SSE_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":")


def body_content_type(body: str | bytes) -> str | None:
    """The ``content-type`` a body's content shows: ``application/json`` for a body that
    starts with ``{`` or ``[``, ``text/event-stream`` for one that starts with an SSE field
    name such as ``data:``, else ``None`` (for recordings that kept no headers)."""
    head = (body.encode("utf-8", "replace") if isinstance(body, str) else body)[:64].lstrip()
    if head.startswith((b"{", b"[")):
        return "application/json"
    return "text/event-stream" if head.startswith(_SSE_FIELDS) else None


def is_sse(headers: Mapping[str, str], body: bytes) -> bool:
    """True when a response body is server-sent events: by its ``content-type``, or by its
    content (``body_content_type``) when a recording kept no headers."""
    if headers.get("content-type", "").startswith("text/event-stream"):
        return True
    return body_content_type(body) == "text/event-stream"


def unencodable_path(value: Any, path: str = "") -> str | None:
    """The path (``messages[0].content``) of the first string in ``value`` that is not
    valid Unicode (a lone surrogate), or ``None`` when every string encodes as UTF-8.

    Only called after an encoding failed: it walks the whole value.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path or "the value"
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = unencodable_path(key, f"{path}.<key>") or unencodable_path(
                item, f"{path}.{key}" if path else str(key)
            )
            if found is not None:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = unencodable_path(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def arguments_object(arguments: str) -> dict[str, Any]:
    """A call's arguments (neutral JSON text) as an object; text that is not a JSON
    object is kept as ``{"_raw_arguments": text}`` rather than lost."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {"_raw_arguments": arguments}
    return value if isinstance(value, dict) else {"_raw_arguments": arguments}
