"""Support for the pytest plugin: settings, cassettes, network guard, runner, snapshots.

Most users only touch the fixtures; ``HarnessConfig`` is what a ``conftest.py``
returns from its own ``harness_config`` fixture, and ``Scrubber`` is what the
``pytest_harness_cassette_scrubbers`` hook returns. Names are imported lazily, so
the plugin can build a ``HarnessConfig`` for every test without loading the loop.
"""

from __future__ import annotations

import typing

from harness._lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:  # the same names as _LAZY, for type checkers (tests/test_public_api.py)
    from harness._errors import (
        CassetteError as CassetteError,
        NetworkRefused as NetworkRefused,
    )
    from harness.testing._cassette import (
        SECRET_HEADERS as SECRET_HEADERS,
        Scrubber as Scrubber,
        open_cassette as open_cassette,
        scrub_request as scrub_request,
        scrub_response as scrub_response,
    )
    from harness.testing._config import (
        HarnessConfig as HarnessConfig,
        Settings as Settings,
        cassette_path as cassette_path,
        resolve_settings as resolve_settings,
    )
    from harness.testing._mcp import (
        McpFakes as McpFakes,
    )
    from harness.testing._network import (
        deny_network as deny_network,
        is_loopback as is_loopback,
    )
    from harness.testing._runner import (
        HarnessRunner as HarnessRunner,
    )
    from harness.testing._snapshot import (
        TimelineSnapshot as TimelineSnapshot,
        snapshot_text as snapshot_text,
    )
    from harness.testing._syrupy import (
        TimelineSnapshotExtension as TimelineSnapshotExtension,
    )

_LAZY: dict[str, str] = {
    "CassetteError": "harness._errors",
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
    "deny_network": "harness.testing._network",
    "is_loopback": "harness.testing._network",
    "HarnessRunner": "harness.testing._runner",
    "McpFakes": "harness.testing._mcp",
    "TimelineSnapshot": "harness.testing._snapshot",
    "snapshot_text": "harness.testing._snapshot",
    "TimelineSnapshotExtension": "harness.testing._syrupy",
}

__all__ = [*sorted(_LAZY)]
"""The public API: every name of ``_LAZY``."""


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, globals())
