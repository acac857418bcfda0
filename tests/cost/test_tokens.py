"""Token counters: the estimate, and an exact tokenizer used only when its data is on the
machine (never fetched: checked under the project's network guard)."""

from __future__ import annotations

import base64
import hashlib
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from harness import UsageError
from harness.cost import (
    EstimateTokenizer,
    TiktokenTokenizer,
    _tokens,
    analyse,
    default_tokenizer,
    tiktoken_tokenizer,
)
from harness.testing import deny_network

try:
    from tiktoken.load import load_tiktoken_bpe
except ImportError:  # the tests that need it skip
    load_tiktoken_bpe = None  # type: ignore[assignment]

ESTIMATE = EstimateTokenizer()


def test_the_estimate_counts_words_with_their_space_and_splits_long_ones() -> None:
    assert ESTIMATE.count("") == 0
    assert ESTIMATE.count("Please explain what Python is and its main use cases.") == 11
    assert ESTIMATE.count("internationalization") == 3  # 20 letters: one token per 8
    assert ESTIMATE.count('{"type":"object"}') == 5  # {" type ":" object "}
    assert ESTIMATE.count("FwRnuGYba6") == 5  # mixed case splits: Fw Rnu G Yba 6


@given(st.text(max_size=200), st.text(max_size=200))
def test_the_estimate_grows_with_the_text_and_stays_near_its_length(a: str, b: str) -> None:
    whole = ESTIMATE.count(a + b)
    assert whole <= ESTIMATE.count(a) + ESTIMATE.count(b) + 1  # a piece may split at the seam
    assert whole <= len(a + b)
    assert (whole == 0) == (a + b == "")


def test_tiktoken_is_used_only_with_its_file_in_the_cache_and_never_fetches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tiktoken")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty cache
    with deny_network("tiktoken", "the cost model's tokenizer must not download"):
        assert tiktoken_tokenizer("o200k_base") is None  # refused before any socket
        assert isinstance(default_tokenizer("openai", "gpt-4o"), EstimateTokenizer)
    assert list(tmp_path.iterdir()) == []  # nothing was written either


URL = "https://encodings.invalid/harness_test_base.tiktoken"


def _tiny_bpe() -> bytes:
    """A tiktoken BPE file: every byte, plus ``ab`` as one token."""
    ranks = [bytes([i]) for i in range(256)] + [b"ab"]
    return b"\n".join(base64.b64encode(t) + b" " + str(r).encode() for r, t in enumerate(ranks))


def _tiny_constructor(url: str, data: bytes) -> Any:
    def harness_test_base() -> dict[str, Any]:
        return {
            "name": "harness_test_base",
            "pat_str": r"\S+|\s+",
            "mergeable_ranks": load_tiktoken_bpe(url, hashlib.sha256(data).hexdigest()),
            "special_tokens": {},
        }

    return harness_test_base


@pytest.fixture
def tiny_encoding(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> bytes:
    """A tiktoken plugin encoding whose file is in a fresh cache folder."""
    tiktoken = pytest.importorskip("tiktoken")
    tiktoken.registry.list_encoding_names()
    constructors = tiktoken.registry.ENCODING_CONSTRUCTORS
    data = _tiny_bpe()
    monkeypatch.setitem(constructors, "harness_test_base", _tiny_constructor(URL, data))
    monkeypatch.setattr(_tokens, "_LOADED", {})
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    return data


def test_an_encoding_in_the_cache_counts_exactly_offline(
    tiny_encoding: bytes, tmp_path: Path
) -> None:
    with deny_network("tiktoken", "the cost model's tokenizer must not download"):
        assert tiktoken_tokenizer("harness_test_base") is None  # not in the cache yet
        (tmp_path / hashlib.sha1(URL.encode()).hexdigest()).write_bytes(tiny_encoding)
        exact = tiktoken_tokenizer("harness_test_base")
    assert isinstance(exact, TiktokenTokenizer) and exact.name == "tiktoken:harness_test_base"
    assert exact.count("ab ab") == 3  # "ab", " ", "ab"
    assert exact.count("<|endoftext|>") > 1  # special tokens are text here
    again = tiktoken_tokenizer("harness_test_base")
    assert again is not None and again._encoding is exact._encoding  # loaded once
    assert default_tokenizer("anthropic").name == "estimate"  # no offline tokenizer


def test_a_stale_file_in_the_cache_is_not_used_nor_fetched_again(
    tiny_encoding: bytes, tmp_path: Path
) -> None:
    cached = tmp_path / hashlib.sha1(URL.encode()).hexdigest()
    cached.write_bytes(tiny_encoding[:-1])  # a partial download: its hash differs
    with deny_network("tiktoken", "no download"):
        assert tiktoken_tokenizer("harness_test_base") is None
    assert cached.read_bytes() == tiny_encoding[:-1]  # left as it was


@pytest.mark.parametrize("cache", ["empty", "disabled"])
def test_no_thread_ever_tries_the_network_for_any_encoding(
    cache: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six threads at once (``_no_fetch`` patched tiktoken's reader for the whole process,
    so a thread could fetch while another restored it), with tiktoken's cache empty or
    switched off: not one connection is attempted, every thread gets the estimate."""
    tiktoken = pytest.importorskip("tiktoken")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path) if cache == "empty" else "")
    monkeypatch.setattr(_tokens, "_LOADED", {})
    attempts: list[Any] = []
    real_connect = socket.socket.connect

    def record(self: socket.socket, address: Any) -> Any:
        attempts.append(address)
        return real_connect(self, address)

    def resolve(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args[:2])
        return real_resolve(*args, **kwargs)

    real_resolve = socket.getaddrinfo
    monkeypatch.setattr(socket.socket, "connect", record)
    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    names = tiktoken.registry.list_encoding_names()
    barrier = threading.Barrier(6)
    got: list[Any] = []

    def work() -> None:
        barrier.wait()
        got.append(default_tokenizer("openai", "gpt-4o"))
        for name in names:
            got.append(tiktoken_tokenizer(name))

    with ThreadPoolExecutor(6) as pool:
        for future in [pool.submit(work) for _ in range(6)]:
            future.result()  # a ConnectionError would surface here
    assert attempts == []
    assert got[:1] and all(g is None or isinstance(g, EstimateTokenizer) for g in got)
    assert list(tmp_path.iterdir()) == []  # nothing was written either


def test_a_bad_encoding_name_is_a_usage_error() -> None:
    pytest.importorskip("tiktoken")
    with pytest.raises(UsageError, match="encoding"):
        tiktoken_tokenizer("")
    with deny_network("tiktoken", "no download"), pytest.raises(UsageError, match="no_such"):
        tiktoken_tokenizer("no_such_encoding")


class _Counting:
    """A user's tokenizer whose counts are whatever it is given."""

    name = "mine"

    def __init__(self, value: Any) -> None:
        self.value = value

    def count(self, text: str) -> Any:
        return self.value


@pytest.mark.parametrize("value", [-5, float("nan"), "12", None, 2.5, True])
def test_a_tokenizer_count_that_is_no_int_of_zero_or_more_is_a_usage_error(value: Any) -> None:
    from harness import run
    from harness.models import ScriptedModel, reply

    requests = ScriptedModel([reply("hi")])
    run(requests, "hello there")
    with pytest.raises(UsageError) as caught:
        analyse(requests, tokenizer=_Counting(value))
    message = str(caught.value)
    assert "tokenizer 'mine' (_Counting): count() returned" in message
    assert repr(value) in message and "a token count is an int >= 0" in message
    report = analyse(requests, tokenizer=_Counting(3))
    assert report.tokenizer == "mine" and report.requests[0].input_tokens > 0


def test_something_that_is_no_tokenizer_is_refused_up_front() -> None:
    with pytest.raises(UsageError, match="count\\(text\\) -> int"):
        analyse([], tokenizer=object())  # type: ignore[arg-type]
