"""Where the real recordings are, for the tests that replay them.

Two sources, iterated (no test names a file): the project's own copy of genuine
recordings from other projects' test suites, ``cassettes/real/<provider>/`` (source,
commit and licence of each file in ``cassettes/real/PROVENANCE.md``), so they run on a
fresh clone; and any folder of more recordings, ``$HARNESS_CORPUS`` or
``../shared/corpus`` next to the repository. A file in both is tested once (same
bytes, by SHA-256; the project's copy is the one used).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "cassettes" / "real"
"""The project's genuine recordings, one folder per provider format."""


def corpus_dir() -> Path | None:
    env = os.environ.get("HARNESS_CORPUS")
    path = Path(env) if env else ROOT / ".." / "shared" / "corpus"
    return path.resolve() if path.is_dir() else None


CORPUS = corpus_dir()
SKIP_REASON = "no real recordings: cassettes/real is empty and $HARNESS_CORPUS is not set"


COST = "cost"
"""The sub-folder of a provider's real recordings kept for their prompt-cache usage
figures (``tests/cost``); the replay tests take them like every other recording."""


def recordings(*folders: str) -> list[Path]:
    """Every real recording (``cassettes/real`` first, then the external corpus), each
    content once, only in the provider ``folders`` given (``"openai"``, ``"anthropic"``,
    ``"pydantic_ai_variant"``), sorted by folder and name. None is left out: every one
    shows, converts and replays."""
    by_digest: dict[str, Path] = {}
    for root in (REAL, CORPUS):
        if root is None or not root.is_dir():
            continue
        for path in sorted(root.rglob("*.yaml")):
            folder = path.relative_to(root).parts[0]
            if folders and folder not in folders:
                continue
            by_digest.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), path)
    return sorted(by_digest.values(), key=lambda p: (p.parent.name, p.name))


def cost_recordings() -> list[Path]:
    """The real recordings kept for their prompt-cache figures (``<provider>/cost/``)."""
    return sorted(REAL.glob(f"*/{COST}/*.yaml"), key=lambda p: (p.parent.parent.name, p.name))


def corpus_files() -> list[Path]:
    """Every real recording (see ``recordings``)."""
    return recordings()


def project_cassettes() -> list[Path]:
    """The project's own recordings of its agents (``cassettes/recorded``)."""
    return sorted((ROOT / "cassettes" / "recorded").glob("*.yaml"))


def raw_interactions(path: Path) -> list[dict]:  # type: ignore[type-arg]
    """The file's interactions as plain YAML, independent of the harness's loader."""
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.Loader)
    return list(data["interactions"])


def ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.name}" for p in paths]
