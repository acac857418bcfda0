"""Timeline snapshots: a run's compact timeline kept as text and compared on later runs.

``harness_snapshot(result)`` keeps the text in ``__timelines__/<module>/<test>.timeline``
next to the test file (written when missing); ``harness_snapshot(result, '''...''')``
compares with an inline string. ``--harness-update-snapshots`` rewrites snapshots that
differ, inline ones by editing the test's source at the end of the session.

The folder is not syrupy's ``__snapshots__``: syrupy scans that folder next to every
test file and reports any file it does not own as unused (pytest exits 1) and deletes
it on ``--snapshot-update``. A file an earlier version wrote there is still read, and
moved to ``__timelines__`` when its test runs.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import difflib
import re
import textwrap
from pathlib import Path
from typing import Any

from harness import _check_sink as _sink
from harness._errors import UsageError
from harness._secrets import scrub_message
from harness.assertions import as_trace
from harness.scenarios import format_timeline, timeline_rows
from harness.testing._files import atomic_write

__all__ = ["TimelineSnapshot", "apply_inline_updates", "normalize", "snapshot_text"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-\[\]]+")
FOLDER = "__timelines__"
"""Where ``harness_snapshot`` keeps its files, next to the test file."""
LEGACY_FOLDER = "__snapshots__"
"""Where earlier versions kept them (syrupy's folder): read, then moved to ``FOLDER``."""


def snapshot_text(subject: Any) -> str:
    """The snapshot text of a run: one ``#N offered=...`` line per iteration."""
    trace = as_trace(subject)
    text = format_timeline(timeline_rows(trace))
    if trace.restarts:
        text += f"\nrestarts={trace.restarts}"
    return scrub_message(text)


def normalize(text: str) -> str:
    """Dedented, right-stripped lines without leading/trailing blank lines."""
    lines = [line.rstrip() for line in textwrap.dedent(text).splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


@dataclasses.dataclass(frozen=True, kw_only=True)
class _InlineUpdate:
    path: Path
    lineno: int
    text: str


_PENDING: list[_InlineUpdate] = []


class TimelineSnapshot:
    """The ``harness_snapshot`` fixture: call it with a trace (or run result)."""

    __test__ = False

    def __init__(self, *, test_path: Path, test_name: str, update: bool, worker: bool) -> None:
        self.test_path = test_path
        self.test_name = _UNSAFE.sub("_", test_name).strip("_") or "test"
        self.update = update
        self.worker = worker
        self.written: list[Path] = []
        """Snapshot files written (created or updated) by this test."""
        self._count = 0

    def path_for(self, name: str | None = None) -> Path:
        """The snapshot file for ``name`` (default: the test's name, numbered after the first)."""
        if name is None:
            self._count += 1
            name = self.test_name if self._count == 1 else f"{self.test_name}.{self._count}"
        else:
            name = f"{self.test_name}-{_UNSAFE.sub('_', name)}"
        return self.test_path.parent / FOLDER / self.test_path.stem / f"{name}.timeline"

    def _migrate(self, path: Path) -> None:
        """Move the file an earlier version wrote in syrupy's folder to ``path``."""
        legacy = path.parents[2] / LEGACY_FOLDER / path.parent.name / path.name
        if path.is_file() or not legacy.is_file():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        legacy.replace(path)
        self.written.append(path)
        with contextlib.suppress(OSError):  # the old folders, when nothing else is left
            legacy.parent.rmdir()
            legacy.parent.parent.rmdir()

    def __call__(
        self, subject: Any, expected: str | None = None, *, name: str | None = None
    ) -> None:
        """Compare ``subject``'s timeline with the snapshot; raise ``AssertionError`` on a
        difference (unless updating)."""
        __tracebackhide__ = True  # pytest shows the test's line, not this frame
        actual = snapshot_text(subject)
        _sink.record_trace(as_trace(subject))
        if expected is not None:
            self._inline(actual, expected)
            return
        path = self.path_for(name)
        self._migrate(path)
        if not path.is_file():
            atomic_write(path, actual + "\n")
            self.written.append(path)
            return
        stored = normalize(path.read_text(encoding="utf-8"))
        if stored == normalize(actual):
            return
        if self.update:
            atomic_write(path, actual + "\n")
            self.written.append(path)
            return
        raise AssertionError(_diff(stored, normalize(actual), str(path)))

    def _inline(self, actual: str, expected: str) -> None:
        __tracebackhide__ = True  # pytest shows the test's line, not this frame
        if normalize(expected) == normalize(actual):
            return
        if not self.update:
            raise AssertionError(_diff(normalize(expected), normalize(actual), "inline snapshot"))
        if self.worker:
            raise UsageError(
                "inline timeline snapshots cannot be updated under pytest-xdist (workers would "
                "edit one source file at once); rerun --harness-update-snapshots without -n"
            )
        import sys

        frame = sys._getframe(2)
        _PENDING.append(
            _InlineUpdate(path=Path(frame.f_code.co_filename), lineno=frame.f_lineno, text=actual)
        )


def _diff(expected: str, actual: str, where: str) -> str:
    lines = difflib.unified_diff(
        expected.splitlines(), actual.splitlines(), "snapshot", "this run", lineterm=""
    )
    return (
        f"the run's timeline differs from the {where} "
        "(rerun with --harness-update-snapshots to accept it):\n" + "\n".join(lines)
    )


def _literal(text: str, indent: str) -> str:
    if '"""' in text or "\\" in text or text.endswith('"'):
        return repr(text)
    body = textwrap.indent(text, indent + "    ")
    return f'"""\n{body}\n{indent}    """'


def _find_literal(tree: ast.AST, lineno: int) -> ast.Constant | None:
    best: tuple[int, ast.Constant] | None = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or node.end_lineno is None:
            continue
        if not node.lineno <= lineno <= node.end_lineno:
            continue
        candidates = [*node.args[1:2], *(k.value for k in node.keywords if k.arg == "expected")]
        for arg in candidates:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                span = node.end_lineno - node.lineno
                if best is None or span < best[0]:
                    best = (span, arg)
    return best[1] if best else None


def apply_inline_updates() -> list[Path]:
    """Rewrite the inline snapshots queued during the session; the files changed."""
    changed: list[Path] = []
    by_file: dict[Path, list[_InlineUpdate]] = {}
    for update in _PENDING:
        by_file.setdefault(update.path, []).append(update)
    _PENDING.clear()
    for path, updates in by_file.items():
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines(keepends=True)
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line.encode("utf-8")))
        data = source.encode("utf-8")
        tree = ast.parse(source)
        edits: dict[int, tuple[int, bytes]] = {}
        for update in updates:
            node = _find_literal(tree, update.lineno)
            if node is None or node.end_lineno is None or node.end_col_offset is None:
                continue
            start = offsets[node.lineno - 1] + node.col_offset
            end = offsets[node.end_lineno - 1] + node.end_col_offset
            line = lines[node.lineno - 1]
            indent = line[: len(line) - len(line.lstrip())]
            edits[start] = (end, _literal(update.text, indent).encode("utf-8"))
        for start in sorted(edits, reverse=True):
            end, new = edits[start]
            data = data[:start] + new + data[end:]
        if edits:
            atomic_write(path, data.decode("utf-8"))
            changed.append(path)
    return changed
