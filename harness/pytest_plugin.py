"""The harness pytest plugin (registered through the ``pytest11`` entry point).

It imports almost nothing at load time, so installing the package does not slow
down unrelated test suites.
"""

from __future__ import annotations

from typing import Any


def pytest_configure(config: Any) -> None:
    """Register the plugin's markers."""
    config.addinivalue_line(
        "markers", "harness_scenario(path): run the test against a harness scenario file"
    )
