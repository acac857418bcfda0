"""What every part of the Gemini format reads the same way: field names in either case,
enums as names or integers, thought signatures in either base64 alphabet, and the paths.

The API accepts a body's fields in lowerCamelCase (``functionCall``, what the SDKs send)
and in the proto's snake_case (``function_call``, what some clients write); a client
that asks for ``$alt=json;enum-encoding=int`` (the older Vertex SDK) sends and receives
enums as integers (``"type": 6``, ``"finishReason": 1``). A thought signature is bytes
sent as base64; the ``google-genai`` SDK decodes it and sends it back in the URL-safe
alphabet, so two spellings of one signature compare equal here.

Paths: ``/v1beta/models/{model}:generateContent`` (Gemini API) and
``/v1/projects/{p}/locations/{l}/publishers/google/models/{model}:generateContent``
(Vertex AI; also ``/v1beta1``, and the express form without project and location),
``:streamGenerateContent`` with ``?alt=sse`` (server-sent events) or without (one JSON
array, streamed).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = [
    "FINISH_REASONS",
    "MODES",
    "TYPES",
    "GeminiRoute",
    "enum_name",
    "get",
    "route_of",
    "same_signature",
    "signature_bytes",
    "snake",
]

_SNAKE = re.compile(r"(?<!^)(?=[A-Z])")


def snake(name: str) -> str:
    """The proto (snake_case) spelling of a camelCase field name."""
    return _SNAKE.sub("_", name).lower()


def get(obj: Any, name: str) -> Any:
    """``obj[name]`` in camelCase, else in snake_case (``None`` when neither is there)."""
    if not isinstance(obj, Mapping):
        return None
    value = obj.get(name)
    if value is None:
        value = obj.get(snake(name))
    return value


TYPES = ("TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL")
"""``Schema.type`` by number (``enum-encoding=int``)."""
MODES = ("MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED")
"""``FunctionCallingConfig.mode`` by number."""
FINISH_REASONS = (
    "FINISH_REASON_UNSPECIFIED",
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "OTHER",
)
"""``Candidate.finishReason`` by number: the values both APIs number alike (later ones
differ between the Gemini API and Vertex AI, and are read as ``OTHER``)."""


def enum_name(value: Any, names: tuple[str, ...]) -> str | None:
    """An enum value as its name: a name (any case) or its number under
    ``enum-encoding=int``; ``None`` when absent, ``OTHER``-like values as given."""
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return names[value] if 0 <= value < len(names) else f"ENUM_{value}"
    return str(value).upper()


def signature_bytes(value: Any) -> bytes | None:
    """A thought signature's bytes, from either base64 alphabet (padding optional);
    ``None`` when it is not base64."""
    if isinstance(value, bytes):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip().replace("-", "+").replace("_", "/")
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def same_signature(a: Any, b: Any) -> bool:
    """True when two thought signatures are the same bytes (base64 or base64url)."""
    left, right = signature_bytes(a), signature_bytes(b)
    return left is not None and left == right


@dataclasses.dataclass(frozen=True, slots=True)
class GeminiRoute:
    """What a ``generateContent`` path says."""

    model: str
    """The model of the path (``gemini-2.5-flash``; a tuned model keeps its prefix)."""
    stream: bool
    """``:streamGenerateContent``."""
    sse: bool = True
    """Streamed as server-sent events (``alt=sse``), else as one JSON array."""
    vertex: bool = False
    """A Vertex AI path (``.../publishers/google/models/...``)."""

    def operation_input(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The operation's input of an HTTP body: the body and the path's ``model``."""
        return {**body, "model": self.model}


_PATH = re.compile(
    r"/(?P<prefix>(?:v1|v1beta|v1beta1|v1alpha)(?:/projects/[^/]+/locations/[^/]+)?"
    r"(?:/publishers/[^/]+)?)/(?P<kind>models|tunedModels)/(?P<model>[^/:]+)"
    r":(?P<method>generateContent|streamGenerateContent)$"
)


def route_of(path: str) -> GeminiRoute | None:
    """The Gemini route of a request path (query included), ``None`` for any other."""
    parts = urlsplit(path)
    match = _PATH.search(unquote(parts.path).rstrip("/"))
    if match is None:
        return None
    query = parse_qs(parts.query)
    alts = [
        a.split(";", 1)[0].strip().lower() for a in (*query.get("alt", ()), *query.get("$alt", ()))
    ]
    model = match["model"] if match["kind"] == "models" else f"tunedModels/{match['model']}"
    return GeminiRoute(
        model=model,
        stream=match["method"] == "streamGenerateContent",
        sse="sse" in alts,
        vertex="/publishers/" in match["prefix"],
    )
