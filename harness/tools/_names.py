"""Model-visible tool names: validation, sanitising and deterministic shortening."""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import re
import unicodedata
from collections.abc import Iterable

from harness._errors import InvalidToolName

__all__ = [
    "MAX_NAME_LENGTH",
    "is_valid_name",
    "make_name",
    "match_names",
    "readable_part",
    "sanitize_part",
    "snake_case",
    "validate_name",
]

MAX_NAME_LENGTH = 64
_VALID = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # used with fullmatch: "$" would accept "x\n"
_NOT_WORD = re.compile(r"[^A-Za-z0-9_]+")


def is_valid_name(name: str) -> bool:
    """True when providers accept ``name`` as a tool name."""
    return isinstance(name, str) and _VALID.fullmatch(name) is not None


def validate_name(name: str) -> str:
    """Return ``name`` or raise ``InvalidToolName`` explaining the rule."""
    if not is_valid_name(name):
        raise InvalidToolName(str(name))
    return name


@functools.cache
def snake_case(name: str) -> str:
    """``EntityDiscovery`` -> ``entity_discovery``: how class names become the names a
    trace records (strategies) or a facade is called."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def sanitize_part(text: str) -> str:
    """Keep only letters, digits and underscores (``c-123`` -> ``c123``)."""
    return _NOT_WORD.sub("", text)


def readable_part(text: str) -> str:
    """A stable, readable name part for any text (e.g. an object id).

    ASCII letters, digits and underscores are kept; other letters are transliterated
    (``'café'`` -> ``'cafe'``); characters with no ASCII form (``'日本'``) are replaced by
    ``_`` plus 8 hex digits of the SHA-256 of ``text``, as is text with nothing left
    (``'---'`` -> ``'id_…'``). The same text always gives the same part.
    """
    part = sanitize_part(text)
    if text.isascii():
        return part or "id_" + _digest(text)
    folded = unicodedata.normalize("NFKD", text)
    ascii_part = sanitize_part(folded.encode("ascii", "ignore").decode())
    lost = any(
        not ch.isascii() and unicodedata.category(ch) != "Mn" and (ch.isalnum() or ch == "_")
        for ch in folded
    )
    if not lost and ascii_part:
        return ascii_part
    return f"{ascii_part or 'id'}_{_digest(text)}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def make_name(*parts: str) -> str:
    """Join sanitised parts with ``_``; names over 64 characters are shortened with a hash.

    The shortened form keeps a readable prefix and ends with ``_`` plus 8 hex digits of
    the SHA-256 of the full name, so the same inputs always give the same name.
    """
    full = "_".join(p for p in (sanitize_part(x) for x in parts) if p)
    if not full:
        raise InvalidToolName("".join(parts))
    if len(full) <= MAX_NAME_LENGTH:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:8]
    return f"{full[: MAX_NAME_LENGTH - 9]}_{digest}"


def match_names(pattern: str, names: Iterable[str]) -> list[str]:
    """Names matching ``pattern``: an exact name or an ``fnmatch`` glob, case-sensitive on
    every platform (tool names are case-sensitive for providers)."""
    return [name for name in names if fnmatch.fnmatchcase(name, pattern)]
