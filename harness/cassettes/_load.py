"""The one cassette loader: read any real cassette file, safely, with one set of rules.

Real recordings differ in small ways: bodies as plain strings, blocks or gzip
``!!binary``; header values as lists or scalars and names in any case;
``content-length`` that no longer matches a reformatted body; and pydantic-ai's
variant, which stores JSON bodies decoded under ``parsed_body``; and the responses of
vcrpy 4's httpx stubs (``status_code``, ``http_version`` and the decoded ``content``,
beside the original ``Content-Encoding``). Every reader goes
through this module: ``load_cassette`` (the CLI, ``CassetteModel``, the wire trace)
reads a file into ``Interaction`` records; ``read_cassette_file`` and
``parse_cassette`` give the checked stock dict the pytest plugin hands to vcrpy (whose
glue is ``harness.testing``: this package never imports vcrpy).

A cassette may come from anywhere (a pull request, a bug report), so reading one is
bounded: the file size (``MAX_FILE_BYTES``), how far YAML aliases may expand the
document (``MAX_EXPANSION``: an alias bomb is refused before it is built), how deeply
YAML and JSON bodies nest (``MAX_DEPTH``), and how many bytes a compressed body may
inflate to (``MAX_BODY_BYTES``: a gzip bomb is refused while it is decompressed).
Whatever is wrong, the error is a ``CassetteError`` naming the file and, when one is
at fault, the interaction (1-based, as ``harness cassette show`` numbers them).
"""

from __future__ import annotations

import copy
import dataclasses
import http
import json
import re
import zlib
from collections.abc import Iterator, Mapping
from io import BytesIO
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from harness._errors import CassetteError
from harness.formats._json import body_content_type, is_sse

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_DEPTH",
    "MAX_EXPANSION",
    "MAX_FILE_BYTES",
    "Cassette",
    "HTTPExchange",
    "Interaction",
    "cassette_data",
    "load_cassette",
    "parse_cassette",
    "read_cassette_file",
    "to_stock",
]

MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest cassette file read (64 MiB; real recordings are kilobytes to a few MiB)."""

MAX_EXPANSION = 10
"""How many times its own size a YAML document may become once its aliases are expanded
(at least 1 MiB). A document without aliases never expands; vcrpy writes aliases only
for objects it saw twice. A 1 KB alias bomb expands to gigabytes and is refused."""

MAX_DEPTH = 200
"""How deeply YAML nodes, and JSON request and response bodies, may nest."""

MAX_BODY_BYTES = 64 * 1024 * 1024
"""The most bytes one gzip or deflate encoded body may decompress to (64 MiB)."""

_FIX = "Fix the file, or delete it and record it again"


_NO_FILE = "<cassette>"
"""The name of a cassette given as data rather than a file."""


def _problem(name: str, text: str, *, index: int | None = None) -> CassetteError:
    """The error for cassette ``name`` (a file, or ``_NO_FILE``); ``text`` names the
    interaction ``index`` when one is at fault."""
    return CassetteError(
        f"cassette {name!r} is not a usable vcrpy cassette: {text}. {_FIX}",
        path="" if name == _NO_FILE else name,
        index=index,
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class HTTPExchange:
    """One side of an interaction: headers (lower-cased names, one string each) and body."""

    headers: Mapping[str, str]
    body: bytes
    """The body as sent (decompressed when it was gzip or deflate encoded)."""
    where: str = dataclasses.field(default="", compare=False, repr=False)
    """``cassette 'x.yaml': interaction 3 request``, for errors about the body."""

    def json(self) -> Any:
        """The body as JSON, or ``None`` when it is empty or not JSON.

        ``CassetteError`` when it nests deeper than ``MAX_DEPTH``.
        """
        if not self.body:
            return None
        try:
            data = json.loads(self.body)
        except RecursionError:
            data = None
            too_deep = True
        except (ValueError, UnicodeDecodeError):
            return None
        else:
            too_deep = _depth_exceeds(data, MAX_DEPTH)
        if too_deep:
            raise CassetteError(
                f"{self.where or 'cassette'} body: the JSON nests deeper than {MAX_DEPTH} levels; "
                "no provider sends that. Fix the file, or delete it and record it again"
            )
        return data

    @property
    def text(self) -> str:
        """The body as text (undecodable bytes replaced)."""
        return self.body.decode("utf-8", errors="replace")


def _depth_exceeds(data: Any, limit: int) -> bool:
    """True when ``data`` (parsed JSON) nests deeper than ``limit`` (iteratively)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


@dataclasses.dataclass(frozen=True, kw_only=True)
class Interaction:
    """One recorded request and its response."""

    index: int
    """0-based position in the file (messages number interactions from 1)."""
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
        """True when the response is streamed: server-sent events, or Bedrock's event-stream
        frames (by its ``content-type``, or by its content when the recording kept no
        headers), or a call whose path says it streams (Gemini's ``:streamGenerateContent``
        answers one JSON array without ``alt=sse``)."""
        # imported here: the Bedrock and Gemini format packages are not needed to load one
        from harness.formats.bedrock_converse._eventstream import is_event_stream
        from harness.formats.gemini_generate import route_of

        if is_sse(self.response.headers, self.response.body) or is_event_stream(
            self.response.headers, self.response.body
        ):
            return True
        route = route_of(self.uri) if ":stream" in self.uri else None
        return bool(route and route.stream)


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
        return str(self.path) if self.path is not None else _NO_FILE

    def __len__(self) -> int:
        return len(self.interactions)


# -- reading and parsing, bounded ----------------------------------------------------------


def read_cassette_file(path: Path) -> str:
    """The text of the cassette at ``path``: at most ``MAX_FILE_BYTES``, UTF-8.

    ``CassetteError`` naming the file when it cannot be read, is too large or is not
    UTF-8 text.
    """
    name = str(path)
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise CassetteError(
            f"cannot read cassette {name!r}: {exc.strerror or exc}", path=name
        ) from None
    if len(raw) > MAX_FILE_BYTES:
        raise _problem(name, f"it is larger than {MAX_FILE_BYTES} bytes (MAX_FILE_BYTES)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _problem(
            name,
            f"it cannot be read as UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
        ) from None


class _Loader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
    """YAML's safe loader plus the few Python tags vcrpy writes (strings, tuples and the
    ``BytesIO`` bodies of old cassettes), as vcrpy's own safe cassette loader reads them.
    Nothing else is constructed."""


def _python_str(loader: Any, node: yaml.Node) -> Any:
    return loader.construct_scalar(node)


def _python_tuple(loader: Any, node: yaml.Node) -> Any:
    return tuple(loader.construct_sequence(node))


def _bytes_io(loader: Any, node: yaml.Node) -> Any:
    state = loader.construct_mapping(node, deep=True).get("state") or (b"",)
    data = state[0] if state else b""
    return BytesIO(data.encode("utf-8") if isinstance(data, str) else bytes(data or b""))


_Loader.add_constructor("tag:yaml.org,2002:python/str", _python_str)
_Loader.add_constructor("tag:yaml.org,2002:python/unicode", _python_str)
_Loader.add_constructor("tag:yaml.org,2002:python/tuple", _python_tuple)
_Loader.add_constructor("tag:yaml.org,2002:python/object/new:_io.BytesIO", _bytes_io)


def _children(node: yaml.Node) -> Iterator[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        yield from node.value
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield key
            yield value


def _check_expansion(root: yaml.Node, *, max_weight: int, name: str) -> None:
    """Refuse a node graph that nests deeper than ``MAX_DEPTH``, refers to itself, or
    whose aliases expand it past ``max_weight`` (nodes plus scalar characters), before
    any of it is built. Iterative, and linear in the nodes as written."""
    done: dict[int, tuple[int, int]] = {}  # id -> (expanded weight, height)
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, Iterator[yaml.Node]]] = [(root, _children(root))]
    open_nodes.add(id(root))
    while stack:
        node, children = stack[-1]
        for child in children:
            key = id(child)
            if key in open_nodes:
                raise _problem(name, "a YAML alias refers to a node that contains it")
            if key in done:
                if len(stack) + done[key][1] > MAX_DEPTH:
                    raise _problem(name, f"the YAML nests deeper than {MAX_DEPTH} levels")
                continue
            if len(stack) >= MAX_DEPTH:
                raise _problem(name, f"the YAML nests deeper than {MAX_DEPTH} levels")
            open_nodes.add(key)
            stack.append((child, _children(child)))
            break
        else:
            stack.pop()
            open_nodes.discard(id(node))
            if isinstance(node, yaml.ScalarNode):
                weight, height = 1 + len(node.value), 1
            else:
                measured = [done[id(c)] for c in _children(node)]
                weight = 1 + sum(w for w, _ in measured)
                height = 1 + max((h for _, h in measured), default=0)
            if weight > max_weight:
                raise _problem(
                    name,
                    f"its YAML aliases expand it to more than {max_weight} characters "
                    f"({MAX_EXPANSION} times the file: an alias bomb?)",
                )
            done[id(node)] = (weight, height)


def _yaml(text: str, name: str) -> Any:
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node, max_weight=max(MAX_EXPANSION * len(text), 1 << 20), name=name)
        return loader.construct_document(node)
    except CassetteError:
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        detail = " ".join(str(exc).split())
        raise _problem(name, f"it is not valid YAML{at} (truncated?): {detail}") from None
    except RecursionError:
        raise _problem(name, f"the YAML nests deeper than {MAX_DEPTH} levels") from None
    except (TypeError, ValueError, AttributeError) as exc:  # a tag's value of the wrong kind
        raise _problem(name, f"it is not valid YAML: {type(exc).__name__}: {exc}") from None
    finally:
        loader.dispose()


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def to_stock(data: Any) -> Any:
    """``data`` with every variant's response turned into vcrpy's own fields (in place):
    ``parsed_body`` entries, ``{type: json, content}`` bodies and bare-integer ``status``
    (pydantic-ai's newer cassettes), and the ``status_code``/``content`` responses vcrpy 4's
    httpx stubs wrote (the content stored decoded, under the original encoding headers);
    a response recorded without headers gets the ``content-type`` its body shows.
    Anything but a mapping with an ``interactions`` list is returned as it is."""
    items = data.get("interactions") if isinstance(data, dict) else None
    for item in items if isinstance(items, list) else ():
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
        if isinstance(response, dict) and type(response.get("status")) is int:  # newer pydantic-ai
            response["status"] = {
                "code": response["status"],
                "message": _reason(response["status"]),
            }
        if isinstance(response, dict) and "status" not in response and "status_code" in response:
            code = response.pop("status_code")
            response.pop("http_version", None)
            response["status"] = {"code": code, "message": _reason(code)}
            response["body"] = {"string": response.pop("content", "")}
            _drop_encoding(response)
        if isinstance(response, dict):
            _infer_content_type(response)
    return data


def _infer_content_type(response: dict[str, Any]) -> None:
    """A response recorded without headers (``headers: {}``) gets the ``content-type`` its
    body shows (JSON, or server-sent events), so the SDKs read the replay as they read the
    real answer; recorded headers are never changed."""
    headers = response.get("headers", {})
    body = response.get("body")
    if not isinstance(headers, dict) or headers:  # only a response recorded without headers
        return
    text = body.get("string") if isinstance(body, dict) else None
    kind = body_content_type(text) if isinstance(text, (str, bytes)) else None
    if kind is not None:  # a new mapping: the file may share this one (a YAML alias)
        response["headers"] = {**headers, "Content-Type": [kind]}


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


def _check_shape(data: Any, name: str) -> dict[str, Any]:
    """``data`` if it has the shape vcrpy reads (after ``to_stock``), else the first problem."""
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        got = type(data).__name__ if not isinstance(data, dict) else "no 'interactions' list"
        raise _problem(name, f"expected a mapping with an 'interactions' list, got {got}")
    for index, item in enumerate(data["interactions"]):
        at = f"interaction {index + 1}"

        def bad(text: str, index: int = index) -> CassetteError:
            return _problem(name, text, index=index)

        if not isinstance(item, Mapping):
            raise bad(f"{at} is {type(item).__name__}, expected a mapping")
        request, response = item.get("request"), item.get("response")
        if not isinstance(request, Mapping) or not isinstance(response, Mapping):
            raise bad(f"{at} needs both 'request' and 'response' mappings")
        if not isinstance(request.get("method"), str) or not isinstance(request.get("uri"), str):
            raise bad(f"{at}: the request needs a 'method' and a 'uri'")
        status = response.get("status")
        if not (isinstance(status, Mapping) and type(status.get("code")) is int):
            raise bad(f"{at}: the response needs 'status: {{code: <int>}}'")
        if "body" not in request:
            raise bad(f"{at}: the request has no 'body'")
        body = response.get("body")
        if not (isinstance(body, Mapping) and "string" in body):
            raise bad(f"{at}: the response 'body' is not a mapping with a 'string'")
        for side, exchange in (("request", request), ("response", response)):
            if not isinstance(exchange.get("headers", {}), Mapping):
                raise bad(f"{at}: the {side} 'headers' is not a mapping")
    return data


def parse_cassette(text: str, *, name: str = _NO_FILE) -> dict[str, Any]:
    """Parse cassette YAML (any variant) into the stock dict vcrpy reads, checked.

    Bounded as the module says; ``CassetteError`` naming ``name`` (and the interaction)
    for invalid or hostile YAML and for a shape vcrpy cannot replay.
    """
    return _check_shape(to_stock(_yaml(text, name)), name)


def cassette_data(data: Any, *, name: str = _NO_FILE) -> dict[str, Any]:
    """An already parsed cassette (any variant) as a checked stock dict (a copy)."""
    return _check_shape(to_stock(copy.deepcopy(data)), name)


# -- interactions ------------------------------------------------------------------------------


def _header_text(value: Any) -> str:
    """A header value as text: botocore's recordings keep some as bytes (``!!binary``)."""
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return "" if value is None else str(value)


def _headers(raw: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    if not isinstance(raw, Mapping):
        return out
    for key, value in raw.items():
        if isinstance(value, (list, tuple)):
            out[_header_text(key).lower()] = ", ".join(_header_text(v) for v in value)
        else:
            out[_header_text(key).lower()] = _header_text(value)
    return out


def _bytes(value: Any) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, Mapping):  # response bodies: {string: ...}
        return _bytes(value.get("string"))
    if isinstance(value, BytesIO):  # request bodies of old cassettes
        return value.getvalue()
    return str(value).encode("utf-8")


class _TooLarge(Exception):
    """A compressed body inflates past ``MAX_BODY_BYTES``."""


def _inflate(body: bytes, wbits: int) -> bytes:
    """``body`` decompressed (every member), never more than ``MAX_BODY_BYTES``."""
    out = bytearray()
    data = body
    while data:
        inflater = zlib.decompressobj(wbits)
        out += inflater.decompress(data, MAX_BODY_BYTES + 1 - len(out))
        if len(out) > MAX_BODY_BYTES or inflater.unconsumed_tail:
            raise _TooLarge
        if not inflater.eof:
            raise zlib.error("truncated")
        data = inflater.unused_data
    return bytes(out)


def _decoded(body: bytes, headers: Mapping[str, str]) -> bytes:
    encoding = headers.get("content-encoding", "").strip().lower()
    try:
        if encoding == "gzip" or body[:2] == b"\x1f\x8b":
            return _inflate(body, 16 + zlib.MAX_WBITS)
        if encoding == "deflate":
            return _inflate(body, zlib.MAX_WBITS)
    except zlib.error:  # not really compressed, or truncated: keep the bytes as recorded
        return body
    return body


def _interaction(item: Mapping[str, Any], index: int, name: str) -> Interaction:
    where = f"cassette {name!r}: interaction {index + 1}"
    request, response = item["request"], item["response"]
    response_headers = _headers(response.get("headers"))
    try:
        response_body = _decoded(_bytes(response.get("body")), response_headers)
    except _TooLarge:
        raise _problem(
            name,
            f"interaction {index + 1}: the response body decompresses to more than "
            f"{MAX_BODY_BYTES} bytes (MAX_BODY_BYTES: a gzip bomb?)",
            index=index,
        ) from None
    return Interaction(
        index=index,
        method=request["method"].upper(),
        uri=request["uri"],
        request=HTTPExchange(
            headers=_headers(request.get("headers")),
            body=_bytes(request.get("body")),
            where=f"{where} request",
        ),
        status=response["status"]["code"],
        response=HTTPExchange(
            headers=response_headers, body=response_body, where=f"{where} response"
        ),
    )


def load_cassette(source: str | Path | Mapping[str, Any]) -> Cassette:
    """Read a cassette file (any variant) or an already parsed cassette dict.

    Raises ``CassetteError`` naming the file, the interaction and the problem when it
    cannot be read, is malformed, or exceeds the bounds of this module.
    """
    path: Path | None = None
    if isinstance(source, Mapping):
        name = _NO_FILE
        data = cassette_data(dict(source))
        variant = "vcrpy"
    else:
        path = Path(source)
        name = str(path)
        text = read_cassette_file(path)
        variant = _variant(text)
        data = parse_cassette(text, name=name)
    return Cassette(
        path=path,
        interactions=tuple(
            _interaction(item, i, name) for i, item in enumerate(data["interactions"])
        ),
        variant=variant,
    )
