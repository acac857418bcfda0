"""What the commands write: files that never replace an input, JSON that stays JSON.

- ``output_file`` checks a file a command will write before anything runs: it must not
  be one of the command's inputs (``harness compare X.yaml --html X.yaml`` replaced the
  comparison with HTML), a folder, or in a folder that does not exist (or is a file). A
  bad path is a ``UsageError`` (exit 2), never a traceback.
- ``json_text`` is the one way a ``--json`` report is printed: ``NaN`` and ``Infinity``
  are refused (they are not JSON), and C1 controls, bidi overrides, line separators and
  lone surrogates are written as ``\\uXXXX`` escapes, so the text is valid UTF-8 and a
  terminal shows it as it is.
- ``user_output_to_stderr`` sends what the user's code prints (a tool, a factory, a
  property) to stderr while a JSON report is being produced on stdout.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from harness._errors import UsageError

__all__ = ["json_text", "output_file", "user_output_to_stderr", "write_output"]

_UNSAFE_IN_JSON = re.compile(
    "[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
"""What ``json.dumps(..., ensure_ascii=False)`` leaves raw but a terminal obeys (C1
controls such as CSI ``\\x9b``, bidi overrides) or UTF-8 cannot encode (lone surrogates)."""


def json_text(data: Any, *, indent: int | None = None) -> str:
    """``data`` as JSON text safe to print (see the module docstring)."""
    text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _same(path: Path, other: Path) -> bool:
    try:
        return os.path.samefile(path, other)
    except OSError:  # one of them does not exist (yet)
        return path.resolve() == other.resolve()


def output_file(
    path: Path, *, option: str, inputs: Sequence[Path | None] = (), make_folder: bool = False
) -> Path:
    """``path`` as a file ``option`` may write, or ``UsageError`` naming the problem
    (``make_folder``: a missing folder is created when the file is written)."""
    for source in inputs:
        if source is not None and _same(path, source):
            raise UsageError(
                f"{option} {str(path)!r} is one of the command's inputs ({str(source)!r}): "
                "writing it would destroy it; give another file name"
            )
    if path.is_dir():
        raise UsageError(f"{option} {str(path)!r} is a folder; give the file to write in it")
    folder = path.parent
    if make_folder and not folder.exists():
        return path
    if not folder.is_dir():
        what = "is a file" if folder.exists() else "does not exist"
        raise UsageError(
            f"{option} {str(path)!r}: the folder {str(folder)!r} {what}; give a file in an "
            "existing folder"
        )
    return path


def write_output(path: Path, text: str, *, option: str) -> None:
    """Write ``text`` to ``path`` (checked by ``output_file``); an OS error is a
    ``UsageError`` naming the file."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{option}: cannot write {str(path)!r}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def user_output_to_stderr(active: bool = True) -> Iterator[None]:
    """Inside the block, ``print()`` (from any thread) goes to stderr: stdout is kept for
    the JSON report printed after it."""
    if not active:
        yield
        return
    with contextlib.redirect_stdout(sys.stderr):
        yield
