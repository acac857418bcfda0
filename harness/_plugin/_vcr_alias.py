"""pytest-recording's ``vcr_config`` fixture, as an alias of ``harness_config``.

Registered by the harness plugin in ``pytest_configure`` only when pytest-recording
is not active, so the two plugins never define the same fixture.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["vcr_config"]


@pytest.fixture
def vcr_config() -> dict[str, Any]:
    """Cassette settings, pytest-recording style: override it in a ``conftest.py`` and
    return e.g. ``{"record_mode": "once", "filter_headers": ["x-token"]}``. Same layer
    as ``harness_config``, whose fields (when not ``None``) win over these keys."""
    return {}
