"""Connecting to Ray for fuzz campaigns: a loopback-only local instance, or a cluster.

``--ray local`` starts a one-machine Ray bound to 127.0.0.1 (no usage reports, no
dashboard); any other value is a cluster address (``auto``, ``ray://head:10001``).
Ray missing, or no cluster at the address, is a ``UsageError`` saying what to do.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from harness._errors import UsageError
from harness._extras import require

__all__ = ["connect_ray", "import_ray"]


def import_ray() -> Any:
    """The ``ray`` module, or a ``UsageError`` naming the extra to install."""
    try:
        return require("ray", "--ray (campaigns on a Ray cluster)")
    except ImportError as exc:
        raise UsageError(str(exc)) from None


def connect_ray(address: str, workers: int) -> tuple[Any, bool]:
    """``(ray, started_here)``: Ray initialised for ``address`` (``local`` or a cluster)."""
    local = address == "local"
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage reports over the network
    if local:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    ray = import_ray()
    if ray.is_initialized():
        return ray, False
    try:
        if local:
            ray.init(
                num_cpus=workers,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
                _node_ip_address="127.0.0.1",
                # tasks import the code under test as this process does
                runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}},
            )
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        raise UsageError(
            f"--ray {address}: no Ray cluster to connect to ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else exc!r}). Start one with "
            "'ray start --head' (then --ray auto), give the head's address "
            "(--ray ray://HOST:10001), or use --ray local for a one-machine instance"
        ) from None
    return ray, True
