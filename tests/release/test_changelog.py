"""Every change to ``harness/`` since the last release has a changelog fragment, and the
fragments are named so towncrier reads them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from fragment_check import (
    ROOT,
    Commit,
    bad_names,
    changes,
    explain,
    history,
    missing_fragments,
    release_point,
)


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


def _checkout_state() -> str | None:
    """Why this checkout cannot answer (no git, a shallow clone), or ``None``."""
    if not (ROOT / ".git").exists():
        return "not a git checkout (an sdist or a copied tree): no history to read"
    if _git(ROOT, "rev-parse", "--is-shallow-repository") == "true":
        return "a shallow clone does not reach the release point (git fetch --unshallow)"
    return None


def test_every_change_to_the_package_since_the_last_release_adds_a_fragment() -> None:
    reason = _checkout_state()
    if reason is not None:
        pytest.skip(reason)
    base = release_point()
    assert _git(ROOT, "cat-file", "-t", base) == "commit", f"release point {base} not found"
    missing = missing_fragments(history(base))
    assert missing == [], explain(missing)


def test_the_fragments_are_named_so_towncrier_builds_them() -> None:
    names = [p.name for p in (ROOT / "changes").iterdir() if p.name != ".gitkeep"]
    assert bad_names(names) == []
    assert (
        bad_names(["35.fixed.1.md", "35.fixed.2.md", "+groundwork.added.md", "35.added.md"]) == []
    )
    assert bad_names(["35.fix.1.md", "release.fixed.md", "35.fixed.1.txt", "35.fixed.docs.md"]) == [
        "35.fix.1.md",
        "35.fixed.1.txt",
        "35.fixed.docs.md",  # towncrier refuses a second 35.fixed told apart by a word
        "release.fixed.md",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "towncrier", "build", "--draft", "--version", "0.0.0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for fragment in (ROOT / "changes").glob("*.md"):
        first_words = " ".join(fragment.read_text(encoding="utf-8").split()[:6])
        assert first_words in " ".join(done.stdout.split()), fragment.name


def _commit(sha: str, *, merge: bool = False, touches: bool = False, adds: bool = False) -> Commit:
    return Commit(sha=sha, subject=sha, merge=merge, touches_package=touches, adds_fragment=adds)


def test_a_merge_is_one_change_and_a_run_of_direct_commits_is_another() -> None:
    commits = [
        _commit("a", touches=True),
        _commit("b", adds=True),
        _commit("m1", merge=True, touches=True, adds=True),
        _commit("c", touches=True),
        _commit("m2", merge=True, touches=True),
        _commit("d"),
    ]
    assert [[c.sha for c in change] for change in changes(commits)] == [
        ["a", "b"],
        ["m1"],
        ["c"],
        ["m2"],
        ["d"],
    ]
    assert [[c.sha for c in change] for change in missing_fragments(commits)] == [["c"], ["m2"]]
    assert "c 'c'" in explain(missing_fragments(commits))


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "harness").mkdir(parents=True)
    (root / "changes").mkdir()
    (root / "api").mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "dev@harness.invalid")
    _git(root, "config", "user.name", "dev")
    return root


def _commit_files(root: Path, message: str, files: dict[str, str] | None = None) -> None:
    for name, text in (files or {}).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", message)


def test_history_reads_merges_fragments_and_the_no_changelog_trailer(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _commit_files(root, "before the release", {"harness/a.py": "0"})
    _commit_files(root, "release 0.1.0", {"api/0.1.0.json": "{}", "harness/a.py": "1"})
    assert release_point(root) == _git(root, "rev-parse", "HEAD")
    base = release_point(root)

    _commit_files(root, "fix a comment\n\nChangelog: none", {"harness/a.py": "2"})
    _git(root, "checkout", "-q", "-b", "topic")
    _commit_files(root, "feature", {"harness/b.py": "1"})
    _commit_files(root, "its fragment", {"changes/35.added.1.md": "B."})
    _git(root, "checkout", "-q", "main")
    _git(root, "merge", "-q", "--no-ff", "-m", "Merge topic", "topic")
    _commit_files(root, "forgot one", {"harness/c.py": "1"})

    commits = history(base, root)
    assert [(c.subject, c.merge, c.touches_package, c.adds_fragment) for c in commits] == [
        ("fix a comment", False, False, False),
        ("Merge topic", True, True, True),
        ("forgot one", False, True, False),
    ]
    assert [[c.subject for c in change] for change in missing_fragments(commits)] == [
        ["forgot one"]
    ]


def test_a_recorded_release_commit_wins_over_the_commit_that_added_the_file(
    tmp_path: Path,
) -> None:
    root = _repo(tmp_path)
    _commit_files(root, "first", {"harness/a.py": "1"})
    first = _git(root, "rev-parse", "HEAD")
    (root / "api" / "0.1.0.json").write_text(f'{{"commit": "{first}"}}', encoding="utf-8")
    _commit_files(root, "the API file of 0.1.0, written later")
    assert release_point(root) == first
