"""Locating the external corpus needs no corpus: these run whether or not it is present.

The real-recording tests read ``cassettes/real`` and this folder (see
``tests/cassettes/corpus.py``); the lookup of the folder is tested here, unskipped.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cassettes"))
from corpus import corpus_dir


def test_corpus_location_can_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HARNESS_CORPUS", str(tmp_path))
    assert corpus_dir() == tmp_path.resolve()
    monkeypatch.setenv("HARNESS_CORPUS", str(tmp_path / "missing"))
    assert corpus_dir() is None


def test_an_empty_environment_variable_falls_back_to_the_shared_folder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HARNESS_CORPUS", "")
    default = (Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus").resolve()
    assert corpus_dir() == (default if default.is_dir() else None)
