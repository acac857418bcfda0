"""A syrupy extension that stores a run's timeline as a ``.timeline`` text file.

``assert result == snapshot(extension_class=TimelineSnapshotExtension)`` (or
``snapshot.use_extension(TimelineSnapshotExtension)``) keeps the same text as the
built-in ``harness_snapshot`` fixture, so either tool can own the files' updates.
"""

from __future__ import annotations

from typing import Any

from harness._extras import require

require("syrupy", "TimelineSnapshotExtension")

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode  # noqa: E402

from harness.testing._snapshot import snapshot_text  # noqa: E402

__all__ = ["TimelineSnapshotExtension"]


class TimelineSnapshotExtension(SingleFileSnapshotExtension):
    """Serialises a ``RunResult``, ``Trace``, scenario outcome or error raised out of a run
    to its compact timeline (one ``#N offered=...`` line per iteration)."""

    _write_mode = WriteMode.TEXT
    file_extension = "timeline"

    def serialize(self, data: Any, **kwargs: Any) -> str:
        return snapshot_text(data) + "\n"
