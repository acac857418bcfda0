"""Read any real cassette file: stock vcrpy YAML and its ``parsed_body`` and
``httpx_content`` variants.

Real recordings differ in small ways: bodies as plain strings, blocks or gzip
``!!binary``; header values as lists or scalars and names in any case;
``content-length`` that no longer matches a reformatted body; and pydantic-ai's
variant, which stores JSON bodies decoded under ``parsed_body``; and the responses of
vcrpy 4's httpx stubs (``status_code``, ``http_version`` and the decoded ``content``,
beside the original ``Content-Encoding``). ``load_cassette``
reads all of them into ``Interaction`` records; ``to_stock`` turns a loaded file
into the dict vcrpy itself reads, so the same files replay through vcrpy.
"""

from __future__ import annotations

import copy
import dataclasses
import gzip
import http
import json
import re
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.cassettes._errors import CassetteError

__all__ = [
    "Cassette",
    "HTTPExchange",
    "Interaction",
    "deserialize",
    "load_cassette",
    "serialize",
    "to_stock",
]


@dataclasses.dataclass(frozen=True, kw_only=True)
class HTTPExchange:
    """One side of an interaction: headers (lower-cased names, one string each) and body."""

    headers: Mapping[str, str]
    body: bytes
    """The body as sent (decompressed when it was gzip or deflate encoded)."""

    def json(self) -> Any:
        """The body as JSON, or ``None`` when it is empty or not JSON."""
        if not self.body:
            return None
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            return None

    @property
    def text(self) -> str:
        """The body as text (undecodable bytes replaced)."""
        return self.body.decode("utf-8", errors="replace")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Interaction:
    """One recorded request and its response."""

    index: int
    """0-based position in the file."""
    method: str
    uri: str
    request: HTTPExchange
    status: int
    response: HTTPExchange

    @property
    def path(self) -> str:
        """The URI's path (``/v1/chat/completions``)."""
        return urlsplit(self.uri).path

    @property
    def is_stream(self) -> bool:
        """True when the response is server-sent events."""
        return self.response.headers.get("content-type", "").startswith("text/event-stream")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Cassette:
    """A loaded cassette file."""

    path: Path | None
    interactions: tuple[Interaction, ...]
    variant: str
    """``vcrpy`` (stock), ``parsed_body`` or ``httpx_content`` (see the module docstring)."""

    @property
    def name(self) -> str:
        """The file name, for messages."""
        return str(self.path) if self.path is not None else "<cassette>"

    def __len__(self) -> int:
        return len(self.interactions)


def deserialize(text: str) -> dict[str, Any]:
    """Parse cassette YAML with vcrpy's safe loader and convert ``parsed_body`` entries."""
    from vcr.serializers import yamlserializer  # type: ignore[import-untyped]

    data = yamlserializer.deserialize(text)
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise CassetteError(
            "not a vcrpy cassette: expected a mapping with an 'interactions' list, got "
            f"{type(data).__name__}"
        )
    return to_stock(data)


def serialize(data: Mapping[str, Any]) -> str:
    """Write stock vcrpy YAML."""
    from vcr.serializers import yamlserializer

    return str(yamlserializer.serialize(dict(data)))


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def to_stock(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with every variant's response turned into vcrpy's own fields (in place):
    ``parsed_body`` entries, and the ``status_code``/``content`` responses vcrpy 4's
    httpx stubs wrote (the content stored decoded, under the original encoding headers)."""
    for item in data.get("interactions") or ():
        if not isinstance(item, dict):
            continue
        request, response = item.get("request"), item.get("response")
        if isinstance(request, dict) and "parsed_body" in request:
            request["body"] = _json_text(request.pop("parsed_body"))
        if isinstance(response, dict) and "parsed_body" in response:
            response["body"] = {"string": _json_text(response.pop("parsed_body"))}
            _drop_encoding(response)  # the stored body is decoded JSON now
        if isinstance(request, dict) and _typed_json(request.get("body")):
            request["body"] = _json_text(request["body"]["content"])
        if isinstance(response, dict) and _typed_json(response.get("body")):
            response["body"] = {"string": _json_text(response["body"]["content"])}
            _drop_encoding(response)
        if isinstance(response, dict) and "status" not in response and "status_code" in response:
            code = response.pop("status_code")
            response.pop("http_version", None)
            response["status"] = {"code": code, "message": _reason(code)}
            response["body"] = {"string": response.pop("content", "")}
            _drop_encoding(response)
    return data


def _typed_json(body: Any) -> bool:
    """A body stored as ``{type: json, content: ...}`` (pydantic-ai's newer cassettes)."""
    return (
        isinstance(body, dict) and body.get("type") == "json" and set(body) == {"type", "content"}
    )


def _drop_encoding(response: dict[str, Any]) -> None:
    """Remove the encoding headers of a response whose stored body is decoded."""
    headers = response.get("headers")
    if isinstance(headers, dict):
        for name in list(headers):
            if str(name).lower() in ("content-encoding", "content-length"):
                del headers[name]


def _reason(code: Any) -> str:
    try:
        return http.HTTPStatus(code).phrase
    except (ValueError, TypeError):
        return ""


def _variant(text: str) -> str:
    """Which variant a cassette file is written in (its responses' fields)."""
    if "parsed_body:" in text:
        return "parsed_body"
    if re.search(r"^ +body:\n +type: json\n +content:", text, re.MULTILINE):
        return "typed_json"
    if re.search(r"^ +status_code: ", text, re.MULTILINE):
        return "httpx_content"
    return "vcrpy"


def _headers(raw: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    if not isinstance(raw, Mapping):
        return out
    for key, value in raw.items():
        if isinstance(value, (list, tuple)):
            out[str(key).lower()] = ", ".join(str(v) for v in value)
        else:
            out[str(key).lower()] = "" if value is None else str(value)
    return out


def _bytes(value: Any) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, Mapping):  # response bodies: {string: ...}
        return _bytes(value.get("string"))
    if hasattr(value, "read"):  # BytesIO from old cassettes
        return _bytes(value.read())
    return str(value).encode("utf-8")


def _decoded(body: bytes, headers: Mapping[str, str]) -> bytes:
    encoding = headers.get("content-encoding", "").strip().lower()
    try:
        if encoding == "gzip" or body[:2] == b"\x1f\x8b":
            return gzip.decompress(body)
        if encoding == "deflate":
            return zlib.decompress(body)
    except (OSError, zlib.error, EOFError):
        return body
    return body


def _interaction(item: Any, index: int, name: str) -> Interaction:
    where = f"{name}: interaction {index}"
    if not isinstance(item, Mapping):
        raise CassetteError(f"{where} is {type(item).__name__}, expected a mapping")
    request, response = item.get("request"), item.get("response")
    if not isinstance(request, Mapping) or not isinstance(response, Mapping):
        raise CassetteError(f"{where} needs both 'request' and 'response' mappings")
    method, uri = request.get("method"), request.get("uri")
    if not isinstance(method, str) or not isinstance(uri, str):
        raise CassetteError(f"{where}: the request needs a 'method' and a 'uri'")
    status = response.get("status")
    code = status.get("code") if isinstance(status, Mapping) else status
    if not isinstance(code, int):
        raise CassetteError(f"{where}: the response needs 'status: {{code: <int>}}'")
    response_headers = _headers(response.get("headers"))
    return Interaction(
        index=index,
        method=method.upper(),
        uri=uri,
        request=HTTPExchange(
            headers=_headers(request.get("headers")), body=_bytes(request.get("body"))
        ),
        status=code,
        response=HTTPExchange(
            headers=response_headers,
            body=_decoded(_bytes(response.get("body")), response_headers),
        ),
    )


def load_cassette(source: str | Path | Mapping[str, Any]) -> Cassette:
    """Read a cassette file (any variant) or an already parsed cassette dict.

    Raises ``CassetteError`` naming the file and the problem when it cannot be read.
    """
    path: Path | None = None
    if isinstance(source, Mapping):
        raw: Any = to_stock(copy.deepcopy(dict(source)))
        variant = "vcrpy"
    else:
        path = Path(source)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CassetteError(
                f"cannot read cassette {str(path)!r}: {exc.strerror or exc}"
            ) from None
        variant = _variant(text)
        try:
            raw = deserialize(text)
        except CassetteError as exc:
            raise CassetteError(f"cassette {str(path)!r}: {exc}") from None
        except Exception as exc:  # yaml errors and friends
            raise CassetteError(
                f"cassette {str(path)!r} is not valid YAML: {' '.join(str(exc).split())}"
            ) from None
    name = str(path) if path is not None else "<cassette>"
    items: Sequence[Any] = raw.get("interactions") or []
    return Cassette(
        path=path,
        interactions=tuple(_interaction(item, i, name) for i, item in enumerate(items)),
        variant=variant,
    )
