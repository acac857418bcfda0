"""Credentials left in a cassette: what ``harness cassette check`` reports.

It asks the rule the recording scrubber applies (``harness._credentials``), so a
cassette the plugin recorded always passes, and one recorded by other means is held to
the same standard: credential-named headers, query and form parameters and JSON fields
(at any depth) holding a value that is no placeholder, URL userinfo, and text shaped
like a provider key (OpenAI, Anthropic, Google, GitHub, AWS, Slack) anywhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from harness._credentials import (
    credential_shapes,
    is_credential_field,
    is_credential_header,
    is_credential_param,
    is_placeholder,
)
from harness._errors import CassetteError
from harness.cassettes._load import Cassette, HTTPExchange

__all__ = ["credential_leaks"]


def credential_leaks(cassette: Cassette) -> list[str]:
    """One problem per credential left in ``cassette`` (empty when it is clean)."""
    problems: list[str] = []
    for interaction in cassette.interactions:
        where = f"interaction {interaction.index + 1}"
        problems += [f"{where}: the URI {p}; scrub it" for p in _url_leaks(interaction.uri)]
        for side, exchange in (
            ("request", interaction.request),
            ("response", interaction.response),
        ):
            problems += [f"{where}: {side} {p}; scrub it" for p in _exchange_leaks(side, exchange)]
    return problems


def _url_leaks(url: str) -> Iterator[str]:
    try:
        parts = urlsplit(url)
    except ValueError:
        return
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    if userinfo and not all(is_placeholder(piece) for piece in userinfo.split(":")):
        yield "holds userinfo (user:password@)"
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if is_credential_param(key) and not is_placeholder(value):
            yield f"query parameter {key!r} holds a credential"


def _exchange_leaks(side: str, exchange: HTTPExchange) -> Iterator[str]:
    for name, value in exchange.headers.items():
        if is_credential_header(name) and not is_placeholder(value):
            yield f"header {name!r} holds a credential"
        elif value.startswith(("http://", "https://")):
            yield from (f"header {name!r}: the URL {p}" for p in _url_leaks(value))
    try:
        data = exchange.json()
    except CassetteError:  # a body too deep to read: the loader's own finding, not a leak
        data = None
    if data is not None:
        yield from (
            f"body field {path!r} holds a credential"
            for path in _fields(data, "", response=side == "response")
        )
    elif "x-www-form-urlencoded" in exchange.headers.get("content-type", ""):
        for key, value in parse_qsl(exchange.text, keep_blank_values=True):
            if is_credential_param(key) and not is_placeholder(value):
                yield f"form field {key!r} holds a credential"
    shapes = credential_shapes(exchange.text)
    if shapes:
        shown = shapes[0][:6]
        yield f"body holds {len(shapes)} value(s) shaped like an API key or token ({shown}...)"


def _fields(data: Any, path: str, *, response: bool) -> Iterator[str]:
    """Paths of credential-named fields holding a real value, at any depth (iterative)."""
    stack: list[tuple[Any, str]] = [(data, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                here = f"{where}.{key}" if where else str(key)
                if response and key == "token":  # logprobs entries: {"token": "Hello", ...}
                    continue
                if is_credential_field(str(key)) and _holds_value(value):
                    yield here
                else:
                    stack.append((value, here))
        elif isinstance(node, list):
            stack.extend((item, f"{where}[{i}]") for i, item in enumerate(node))


def _holds_value(value: Any) -> bool:
    """True when ``value`` (or a string inside it) is more than a placeholder."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if not is_placeholder(node):
                return True
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False
