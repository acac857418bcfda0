"""Support for the pytest plugin: settings, cassettes, network guard, runner, snapshots.

Most users only touch the fixtures; ``HarnessConfig`` is what a ``conftest.py``
returns from its own ``harness_config`` fixture, and ``Scrubber`` is what the
``pytest_harness_cassette_scrubbers`` hook returns. Names are imported lazily, so
the plugin can build a ``HarnessConfig`` for every test without loading the loop.
"""

from __future__ import annotations

import typing

from harness._lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from harness._errors import NetworkRefused
    from harness.testing._cassette import (
        SECRET_HEADERS,
        Scrubber,
        open_cassette,
        scrub_request,
        scrub_response,
    )
    from harness.testing._config import HarnessConfig, Settings, cassette_path, resolve_settings
    from harness.testing._mcp import McpFakes
    from harness.testing._network import deny_network, is_loopback
    from harness.testing._runner import HarnessRunner
    from harness.testing._snapshot import TimelineSnapshot, snapshot_text

_LAZY: dict[str, str] = {
    "NetworkRefused": "harness._errors",
    "SECRET_HEADERS": "harness.testing._cassette",
    "Scrubber": "harness.testing._cassette",
    "open_cassette": "harness.testing._cassette",
    "scrub_request": "harness.testing._cassette",
    "scrub_response": "harness.testing._cassette",
    "HarnessConfig": "harness.testing._config",
    "Settings": "harness.testing._config",
    "cassette_path": "harness.testing._config",
    "resolve_settings": "harness.testing._config",
    "McpFakes": "harness.testing._mcp",
    "deny_network": "harness.testing._network",
    "is_loopback": "harness.testing._network",
    "HarnessRunner": "harness.testing._runner",
    "TimelineSnapshot": "harness.testing._snapshot",
    "snapshot_text": "harness.testing._snapshot",
}

__all__ = [
    "SECRET_HEADERS",
    "HarnessConfig",
    "HarnessRunner",
    "McpFakes",
    "NetworkRefused",
    "Scrubber",
    "Settings",
    "TimelineSnapshot",
    "cassette_path",
    "deny_network",
    "is_loopback",
    "open_cassette",
    "resolve_settings",
    "scrub_request",
    "scrub_response",
    "snapshot_text",
]


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, globals())
