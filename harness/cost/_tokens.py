"""Token counts: a pluggable ``Tokenizer``, a documented estimate, and exact ones offline.

The estimate needs nothing: it splits text the way byte-pair encoders mostly do (a word
of lower-case letters with an optional capital and its leading space, a run of
capitals, up to three digits, a run of punctuation, a run of spaces) and counts a long
piece as one token per ``_WORD_CHARS`` characters. On the real recordings in
``cassettes/real`` it lands within -23% to +12% of the providers' counts (prose and
JSON slightly over, random strings under; ``docs/cost.md`` has the table).

An exact tokenizer is used only when it is installed with its data on the machine:
``tiktoken`` with its encoding file in its cache (``TIKTOKEN_CACHE_DIR``), never
downloaded here. ``default_tokenizer()`` picks the exact one when it can load offline,
else the estimate.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import Any, Protocol, runtime_checkable

from harness._errors import UsageError

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
    """tiktoken asked for a file that is not on this machine."""


@contextlib.contextmanager
def _no_fetch(load: Any) -> Iterator[None]:
    """Make tiktoken's loader refuse remote files (its cache and local paths still read)."""
    real: Callable[[str], bytes] = load.read_file

    def local_only(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise _OfflineDataMissing(blobpath)
        return real(blobpath)

    load.read_file = local_only
    try:
        yield
    finally:
        load.read_file = real


def tiktoken_tokenizer(encoding: str = "o200k_base") -> TiktokenTokenizer | None:
    """The exact tokenizer for ``encoding`` when ``tiktoken`` is installed and the
    encoding's file is already in its cache; ``None`` otherwise. Nothing is downloaded:
    tiktoken's remote reads are refused while the encoding loads."""
    if not isinstance(encoding, str) or not encoding:
        raise UsageError(f"encoding must be a tiktoken encoding name, got {encoding!r}")
    try:
        import tiktoken
        import tiktoken.load as load
    except ImportError:
        return None
    try:
        with _no_fetch(load):
            loaded = tiktoken.get_encoding(encoding)
    except _OfflineDataMissing:
        return None
    except ValueError as exc:  # an unknown encoding name
        raise UsageError(f"tiktoken has no encoding {encoding!r}: {exc}") from None
    return TiktokenTokenizer(loaded)


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
