"""Token counters: the estimate, and an exact tokenizer used only when its data is on the
machine (never fetched: checked under the project's network guard)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from harness import UsageError
from harness.cost import EstimateTokenizer, TiktokenTokenizer, default_tokenizer, tiktoken_tokenizer
from harness.testing import deny_network

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


def test_an_exact_encoding_counts_with_its_encode(monkeypatch: pytest.MonkeyPatch) -> None:
    tiktoken = pytest.importorskip("tiktoken")

    class Encoding:
        name = "fake_base"

        def encode(self, text: str, **kwargs: Any) -> list[int]:
            assert kwargs == {"disallowed_special": ()}  # special tokens are text here
            return list(range(len(text.split())))

    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: Encoding())
    exact = tiktoken_tokenizer("fake_base")
    assert isinstance(exact, TiktokenTokenizer) and exact.name == "tiktoken:fake_base"
    assert exact.count("three words here") == 3
    assert default_tokenizer("openai").name == "tiktoken:fake_base"
    assert default_tokenizer("anthropic").name == "estimate"  # no offline tokenizer


def test_a_bad_encoding_name_is_a_usage_error() -> None:
    pytest.importorskip("tiktoken")
    with pytest.raises(UsageError, match="encoding"):
        tiktoken_tokenizer("")
    with deny_network("tiktoken", "no download"), pytest.raises(UsageError, match="no_such"):
        tiktoken_tokenizer("no_such_encoding")
