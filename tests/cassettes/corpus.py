"""Where the real recorded cassettes are: ``$HARNESS_CORPUS`` (any folder of cassettes) or
``../shared/corpus`` next to the repository. Tests iterate the folder; nothing names a file."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def corpus_dir() -> Path | None:
    env = os.environ.get("HARNESS_CORPUS")
    path = Path(env) if env else ROOT / ".." / "shared" / "corpus"
    return path.resolve() if path.is_dir() else None


CORPUS = corpus_dir()
SKIP_REASON = "the recorded corpus (../shared/corpus or $HARNESS_CORPUS) is not available"


def corpus_files() -> list[Path]:
    """Every cassette under the corpus folder (all sub-folders), sorted."""
    if CORPUS is None:
        return []
    return sorted(p for p in CORPUS.rglob("*.yaml") if p.is_file())


def project_cassettes() -> list[Path]:
    """The project's own real recordings (``cassettes/recorded``)."""
    return sorted((ROOT / "cassettes" / "recorded").glob("*.yaml"))


def raw_interactions(path: Path) -> list[dict]:  # type: ignore[type-arg]
    """The file's interactions as plain YAML, independent of the harness's loader."""
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.Loader)
    return list(data["interactions"])


def ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.name}" for p in paths]
