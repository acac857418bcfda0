"""Token counts: a pluggable ``Tokenizer``, a documented estimate, and exact ones offline.

The estimate needs nothing: it splits text the way byte-pair encoders mostly do (a word
of lower-case letters with an optional capital and its leading space, a run of
capitals, up to three digits, a run of punctuation, a run of spaces) and counts a long
piece as one token per ``_WORD_CHARS`` characters. On the real recordings in
``cassettes/real`` it lands within -23% to +12% of the providers' counts (prose and
JSON slightly over, random strings under; ``docs/cost.md`` has the table).

An exact tokenizer is used only when it is installed with its data on the machine:
``tiktoken`` with its encoding file in its cache (``TIKTOKEN_CACHE_DIR``), never
downloaded here. The harness reads that file itself and builds the ``tiktoken.Encoding``
from a copy of tiktoken's constructor whose reader is local (tiktoken's own loader would
fetch a missing file; patching it would be visible to every thread).
``default_tokenizer()`` picks the exact one when it can load offline, else the estimate.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import tempfile
import threading
import types
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from harness._errors import UsageError
from harness._validation import is_int

__all__ = [
    "EstimateTokenizer",
    "TiktokenTokenizer",
    "Tokenizer",
    "default_tokenizer",
    "tiktoken_tokenizer",
]

_PIECE = re.compile(r" ?[A-Z]?[a-z]+| ?[A-Z]+(?![a-z])| ?\d{1,3}|\s+(?!\S)|\s+| ?[^\sA-Za-z\d]+")
_WORD_CHARS = 8
"""Characters per token of a long piece (BPE vocabularies hold most words of up to eight
letters whole and split longer ones; calibrated on the recordings, see ``docs/cost.md``)."""


@runtime_checkable
class Tokenizer(Protocol):
    """Counts the tokens of a text; ``name`` says which counter it is (shown in reports)."""

    name: str

    def count(self, text: str) -> int:
        """The number of tokens of ``text``."""
        ...


class EstimateTokenizer:
    """The estimate: no download, no data file, a few microseconds per kilobyte."""

    name = "estimate"

    def count(self, text: str) -> int:
        """The estimated number of tokens of ``text``."""
        total = 0
        for piece in _PIECE.findall(text):
            size = len(piece) - (piece[0] == " " and len(piece) > 1)
            total += 1 if size <= _WORD_CHARS or piece.isspace() else -(-size // _WORD_CHARS)
        return total

    def __repr__(self) -> str:
        return "EstimateTokenizer()"


class TiktokenTokenizer:
    """An exact count with a ``tiktoken`` encoding already loaded (see ``tiktoken_tokenizer``)."""

    def __init__(self, encoding: Any) -> None:
        self._encoding = encoding
        self.name = f"tiktoken:{encoding.name}"

    def count(self, text: str) -> int:
        """The exact number of tokens of ``text`` (special tokens counted as text)."""
        return len(self._encoding.encode(text, disallowed_special=()))

    def __repr__(self) -> str:
        return f"TiktokenTokenizer({self.name!r})"


class _OfflineDataMissing(Exception):
    """An encoding file that is not on this machine (or not intact)."""


_LOADED: dict[str, Any] = {}
_LOADING = threading.Lock()


def _cache_dir() -> str:
    """tiktoken's cache folder, by its own rule (``TIKTOKEN_CACHE_DIR``, then
    ``DATA_GYM_CACHE_DIR``, then ``data-gym-cache`` in the temporary folder)."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            return os.environ[variable]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _local_bytes(blobpath: str, expected_hash: str | None) -> bytes:
    """The file ``blobpath`` names, read from this machine only: a local path as is, a
    URL from tiktoken's cache (where tiktoken keeps it: the SHA-1 of the URL)."""
    if "://" in blobpath:
        folder = _cache_dir()
        if not folder:  # tiktoken's "no cache": it would download every time
            raise _OfflineDataMissing(blobpath)
        path = os.path.join(folder, hashlib.sha1(blobpath.encode()).hexdigest())
    else:
        path = blobpath
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        raise _OfflineDataMissing(blobpath) from None
    if expected_hash is not None and hashlib.sha256(data).hexdigest() != expected_hash:
        raise _OfflineDataMissing(blobpath)  # a partial or stale file: never fetched again
    return data


def _offline_bpe(tiktoken_bpe_file: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """``tiktoken.load.load_tiktoken_bpe`` on this machine's copy: one ``token rank`` pair
    per line, the token in base64 (tiktoken's format)."""
    ranks: dict[bytes, int] = {}
    for line in _local_bytes(tiktoken_bpe_file, expected_hash).splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _no_data_gym(*args: Any, **kwargs: Any) -> dict[bytes, int]:
    """GPT-2's two-file format is read by tiktoken's cached reader only: not offered."""
    raise _OfflineDataMissing("gpt2 data-gym files")


def _offline_constructor(constructor: Any) -> Callable[[], dict[str, Any]] | None:
    """A copy of an encoding ``constructor`` (and of the functions of its module it calls:
    ``o200k_harmony`` builds on ``o200k_base``) whose file readers never leave the
    machine; tiktoken's modules stay as they are (no patch another thread could see).
    ``None`` for a constructor that is not a plain function."""
    if not isinstance(constructor, types.FunctionType):
        return None
    module = constructor.__globals__
    names: dict[str, Any] = dict(module)

    def offline(function: types.FunctionType) -> types.FunctionType:
        return types.FunctionType(
            function.__code__,
            names,
            function.__name__,
            function.__defaults__,
            function.__closure__,
        )

    for name, value in module.items():
        if isinstance(value, types.FunctionType) and value.__globals__ is module:
            names[name] = offline(value)
    names.update(
        load_tiktoken_bpe=_offline_bpe,
        data_gym_to_mergeable_bpe_ranks=_no_data_gym,
        read_file=lambda blobpath: _local_bytes(blobpath, None),
        read_file_cached=_local_bytes,
    )
    return offline(constructor)


def _load_offline(tiktoken: Any, encoding: str) -> Any | None:
    """The ``tiktoken.Encoding`` named ``encoding`` built from files on this machine, or
    ``None``; ``UsageError`` for a name no tiktoken plugin defines."""
    registry = tiktoken.registry
    known = registry.list_encoding_names()
    if encoding not in known:
        raise UsageError(
            f"tiktoken has no encoding {encoding!r}; known: {', '.join(sorted(known))}"
        )
    loaded = registry.ENCODINGS.get(encoding) or _LOADED.get(encoding)
    if loaded is not None:
        return loaded
    with _LOADING:  # one thread reads a 4 MB file; the others wait for it
        loaded = _LOADED.get(encoding)
        if loaded is None:
            build = _offline_constructor(registry.ENCODING_CONSTRUCTORS[encoding])
            if build is None:
                return None
            try:
                loaded = tiktoken.Encoding(**build())
            except _OfflineDataMissing:
                return None
            _LOADED[encoding] = loaded
    return loaded


def tiktoken_tokenizer(encoding: str = "o200k_base") -> TiktokenTokenizer | None:
    """The exact tokenizer for ``encoding`` when ``tiktoken`` is installed and the
    encoding's file is already in its cache (``TIKTOKEN_CACHE_DIR``); ``None`` otherwise.
    Nothing is downloaded, from any thread: the file is read from the cache by the
    harness (tiktoken's loader, which would fetch a missing file, is never called)."""
    if not isinstance(encoding, str) or not encoding:
        raise UsageError(f"encoding must be a tiktoken encoding name, got {encoding!r}")
    try:
        import tiktoken
        import tiktoken.registry
    except ImportError:
        return None
    loaded = _load_offline(tiktoken, encoding)
    return TiktokenTokenizer(loaded) if loaded is not None else None


class CheckedTokenizer:
    """A tokenizer given by the user, whose every count is checked: an ``int >= 0`` (a
    negative, NaN, text or ``None`` count is a ``UsageError`` naming the tokenizer, the
    value and the text's length, not a wrong report or a ``TypeError`` later)."""

    def __init__(self, inner: Tokenizer) -> None:
        self.inner = inner
        self.name = inner.name

    def count(self, text: str) -> int:
        """``inner.count(text)``, checked."""
        value = self.inner.count(text)
        if not is_int(value, minimum=0):
            raise UsageError(
                f"tokenizer {self.name!r} ({type(self.inner).__name__}): count() returned "
                f"{value!r} for a text of {len(text)} characters; a token count is an int >= 0"
            )
        return value

    def __repr__(self) -> str:
        return f"CheckedTokenizer({self.inner!r})"


def checked_tokenizer(tokenizer: Any) -> Tokenizer:
    """``tokenizer`` (the user's) with each count checked, or ``UsageError`` when it is no
    ``Tokenizer`` (a ``name`` text and a ``count(text)`` method)."""
    name = getattr(tokenizer, "name", None)
    if not isinstance(name, str) or not callable(getattr(tokenizer, "count", None)):
        raise UsageError(
            f"tokenizer must have a 'name' (a text) and a count(text) -> int method "
            f"(harness.cost.Tokenizer), got {tokenizer!r}"
        )
    return CheckedTokenizer(tokenizer)


def _encoding_for(model: str | None) -> str:
    if model:
        try:
            import tiktoken
        except ImportError:
            return "o200k_base"
        try:
            return str(tiktoken.encoding_name_for_model(model))
        except KeyError:
            pass
    return "o200k_base"


def default_tokenizer(vendor: str = "openai", model: str | None = None) -> Tokenizer:
    """The tokenizer for a provider's model: for OpenAI, ``tiktoken``'s encoding of
    ``model`` (``o200k_base`` when unknown) when it loads offline; otherwise, and for
    Anthropic (whose tokenizer is not published for offline use), the estimate."""
    if vendor == "openai":
        exact = tiktoken_tokenizer(_encoding_for(model))
        if exact is not None:
            return exact
    return EstimateTokenizer()
