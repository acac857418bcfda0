"""Support for the pytest plugin: settings, cassettes, network guard, runner, snapshots.

Most users only touch the fixtures; ``HarnessConfig`` is what a ``conftest.py``
returns from its own ``harness_config`` fixture, and ``Scrubber`` is what the
``pytest_harness_cassette_scrubbers`` hook returns. Names are imported lazily, so
the plugin can build a ``HarnessConfig`` for every test without loading the loop.
"""

from __future__ import annotations

import typing

from harness._lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:  # the public API: each name once (harness._lazy reads this)
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


__getattr__, __dir__, __all__ = _lazy_exports(__name__, __file__, globals())
"""Lazy re-exports (PEP 562): ``__all__`` is the names imported above for type checkers."""
