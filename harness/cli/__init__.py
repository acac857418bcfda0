"""The ``harness`` command line."""

from __future__ import annotations


def main() -> None:
    """Entry point of the ``harness`` console script."""
    from harness.cli._app import app

    app()
