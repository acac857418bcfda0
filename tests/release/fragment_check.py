"""Every change to ``harness/`` since the last release comes with a changelog fragment.

The release point is the commit the newest API file names (``api/<version>.json``,
``"commit"``), or else the commit that added that file (a release commit writes it).
From there the check walks main's first-parent history and cuts it into *changes*:

- a merge commit (a helper's branch, merged with ``--no-ff``) is one change;
- a run of direct commits between two merges (or up to ``HEAD``: a branch not merged
  yet) is one change, so a fragment may come in any commit of the run.

A change whose commits touch ``harness/`` must add a file to ``changes/``. A commit
whose message carries the trailer ``Changelog: none`` (a comment, a test-only helper
moved into the package, the release commit itself) does not count as touching it.

Why history and not just the fragments present: ``towncrier check`` asks whether a
branch adds *a* fragment against one base, which on main since a release is always
true after the first fragment; walking the changes catches the one merge that forgot.
A shallow clone cannot see the release point: the check then skips, saying so.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from api_check import latest_release

ROOT = Path(__file__).resolve().parents[2]
TYPES = ("breaking", "deprecated", "added", "changed", "fixed", "security")
FRAGMENT = re.compile(rf"(\d+|\+[\w-]+)\.({'|'.join(TYPES)})(\.\d+)?\.md")
"""``<issue>.<type>.md``, ``<issue>.<type>.<n>.md`` when an issue has several of a type
(towncrier refuses two fragments of one issue and type told apart by anything but a
number), or towncrier's ``+<slug>.<type>.md`` for a change with no issue."""
NO_CHANGELOG = "none"
"""The value of the ``Changelog:`` trailer that exempts a commit."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Commit:
    """One first-parent commit of main, as far as the check is concerned."""

    sha: str
    subject: str
    merge: bool
    """A merge commit: one change of its own."""
    touches_package: bool
    """It changes a file under ``harness/`` (and has no ``Changelog: none`` trailer)."""
    adds_fragment: bool
    """It adds a file under ``changes/``."""


def changes(commits: Sequence[Commit]) -> list[list[Commit]]:
    """``commits`` (oldest first) cut into changes: each merge alone, each run of direct
    commits together."""
    out: list[list[Commit]] = []
    for commit in commits:
        if commit.merge or not out or out[-1][-1].merge:
            out.append([commit])
        else:
            out[-1].append(commit)
    return out


def missing_fragments(commits: Sequence[Commit]) -> list[list[Commit]]:
    """The changes that touch ``harness/`` and add no fragment."""
    return [
        change
        for change in changes(commits)
        if any(c.touches_package for c in change) and not any(c.adds_fragment for c in change)
    ]


def bad_names(names: Iterable[str]) -> list[str]:
    """Fragment file names towncrier would not read (see ``FRAGMENT``)."""
    return [n for n in sorted(names) if not FRAGMENT.fullmatch(n)]


def _git(*args: str, root: Path = ROOT) -> str:
    done = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout


def release_point(root: Path = ROOT) -> str:
    """The commit of the last release (see the module docstring)."""
    api_file = latest_release(root / "api")
    recorded = json.loads(api_file.read_text(encoding="utf-8")).get("commit")
    if recorded:
        return str(recorded)
    added = _git(
        "log",
        "--diff-filter=A",
        "--format=%H",
        "-1",
        "--",
        str(api_file.relative_to(root)),
        root=root,
    ).strip()
    if not added:
        raise LookupError(f"{api_file.name} is not committed yet: commit it, then check")
    return added


def history(base: str, root: Path = ROOT) -> list[Commit]:
    """Main's first-parent commits after ``base``, oldest first."""
    out = []
    shas = _git("rev-list", "--first-parent", "--reverse", f"{base}..HEAD", root=root).split()
    for sha in shas:
        parents = _git("rev-list", "--parents", "-n", "1", sha, root=root).split()[1:]
        diff = _git("diff", "--name-status", "--no-renames", f"{sha}^1", sha, root=root)
        rows = [line.split("\t") for line in diff.splitlines() if line]
        trailer = _git(
            "log", "-1", "--format=%(trailers:key=Changelog,valueonly)", sha, root=root
        ).strip()
        subject = _git("log", "-1", "--format=%s", sha, root=root).strip()
        out.append(
            Commit(
                sha=sha,
                subject=subject,
                merge=len(parents) > 1,
                touches_package=trailer.lower() != NO_CHANGELOG
                and any(row[-1].startswith("harness/") for row in rows),
                adds_fragment=any(row[0] == "A" and row[-1].startswith("changes/") for row in rows),
            )
        )
    return out


def explain(missing: Sequence[Sequence[Commit]]) -> str:
    """Which changes lack a fragment, and how to add one."""
    lines = [
        f"{len(missing)} change(s) to harness/ since the last release add no fragment to "
        "changes/ (one per change: changes/<issue>.<type>.<n>.md, types "
        f"{', '.join(TYPES)}; docs/contributing.md#changelog):"
    ]
    for change in missing:
        shown = ", ".join(f"{c.sha[:9]} {c.subject[:70]!r}" for c in change[:3])
        more = f" (+{len(change) - 3} more commits)" if len(change) > 3 else ""
        lines.append(f"  {shown}{more}")
    lines.append(
        "A commit that changes nothing a user can see may say so with the trailer "
        "'Changelog: none' in its message."
    )
    return "\n".join(lines)
