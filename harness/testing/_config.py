"""Per-test plugin settings: the ``harness_config`` override and the precedence rule.

Precedence, strongest first: command line > ini file > ``harness_config`` fixture >
marker (``harness_cassette(record_mode=...)``) > built-in default.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness._errors import UsageError
from harness._plugin import _options as opts

__all__ = [
    "DEFAULT_OPENAI_API_KEY",
    "DEFAULT_OPENAI_BASE_URL",
    "HarnessConfig",
    "Settings",
    "cassette_path",
    "openai_client_settings",
    "resolve_settings",
]

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_OPENAI_API_KEY = "sk-harness-test"


@dataclasses.dataclass(frozen=True, kw_only=True)
class HarnessConfig:
    """Defaults for the tests that see this fixture; override ``harness_config`` in a
    ``conftest.py`` to change them for a folder. ``None`` leaves a setting to the
    layers below (markers, then built-in defaults). Command line and ini win."""

    record_mode: str | None = None
    """Cassette record mode: ``none``, ``once``, ``new_episodes`` or ``all``."""
    cassette_dir: str | Path | None = None
    """Cassette folder (relative paths are relative to the rootdir)."""
    network: str | None = None
    """``deny``, ``deny-all`` or ``allow``."""
    match_on: Sequence[str] | None = None
    """vcrpy matchers for requests (default: vcrpy's method, scheme, host, port, path, query)."""
    openai_base_url: str | None = None
    """Base URL of the ``harness_openai`` client when it replays or records a cassette
    (``None``: ``$OPENAI_BASE_URL``, else ``https://api.openai.com/v1``)."""
    openai_api_key: str | None = None
    """API key the ``harness_openai`` client sends, scrubbed from cassettes (``None``:
    ``$OPENAI_API_KEY``, else a placeholder that is fine for replaying)."""

    def __post_init__(self) -> None:
        checks = (
            ("record_mode", self.record_mode, opts.RECORD_MODES),
            ("network", self.network, opts.NETWORK_MODES),
        )
        for name, value, choices in checks:
            if value is not None and value not in choices:
                raise UsageError(
                    f"HarnessConfig({name}={value!r}) is not valid; choose one of "
                    f"{', '.join(choices)} or None"
                )
        if isinstance(self.match_on, str):
            raise UsageError(
                f"HarnessConfig(match_on={self.match_on!r}) must be a list of matcher names"
            )


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings:
    """The resolved settings of one test, and where each came from."""

    record_mode: str
    cassette_dir: Path
    network: str
    timeline: str
    update_snapshots: bool
    match_on: tuple[str, ...] | None
    sources: dict[str, str] = dataclasses.field(default_factory=dict)
    """For each setting: ``cli``, ``ini``, ``fixture``, ``marker`` or ``default``."""


def _pick(config: Any, opt: opts.Option, fixture_value: Any, marker_value: Any) -> tuple[Any, str]:
    value = getattr(config.option, opt.dest, None)
    if value is not None:
        return value, "cli"
    value = opts.cli_or_ini(config, opt)
    if value is not None:
        return value, "ini"
    if fixture_value is not None:
        return fixture_value, "fixture"
    if marker_value is not None:
        return marker_value, "marker"
    return opt.default, "default"


def resolve_settings(
    config: Any, fixture: HarnessConfig | None, marker_kwargs: dict[str, Any] | None
) -> Settings:
    """Apply the precedence rule to one test."""
    fixture = fixture or HarnessConfig()
    marker = marker_kwargs or {}
    record_mode = marker.get("record_mode")
    if record_mode is not None and record_mode not in opts.RECORD_MODES:
        raise UsageError(
            f"harness_cassette(record_mode={record_mode!r}) is not valid; choose one of "
            f"{', '.join(opts.RECORD_MODES)}"
        )
    sources: dict[str, str] = {}
    values: dict[str, Any] = {}
    for key, opt, fix, mark in (
        ("record_mode", opts.RECORD_MODE, fixture.record_mode, record_mode),
        ("cassette_dir", opts.CASSETTE_DIR, fixture.cassette_dir, None),
        ("network", opts.NETWORK, fixture.network, None),
        ("timeline", opts.TIMELINE, None, None),
        ("update_snapshots", opts.UPDATE_SNAPSHOTS, None, None),
    ):
        values[key], sources[key] = _pick(config, opt, fix, mark)
    root = Path(str(config.rootpath))
    cassette_dir = Path(values["cassette_dir"] or root / "cassettes")
    if not cassette_dir.is_absolute():
        cassette_dir = root / cassette_dir
    match_on = marker.get("match_on") or fixture.match_on
    if isinstance(match_on, str):
        match_on = [match_on]
    return Settings(
        record_mode=values["record_mode"],
        cassette_dir=cassette_dir,
        network=values["network"],
        timeline=values["timeline"],
        update_snapshots=values["update_snapshots"] in (True, "true", "1", "yes"),
        match_on=tuple(match_on) if match_on else None,
        sources=sources,
    )


def openai_client_settings(config: HarnessConfig | None) -> tuple[str, str]:
    """``(base_url, api_key)`` for the plugin's real clients: the ``harness_config`` value
    wins, then ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, then the built-in defaults."""
    config = config or HarnessConfig()
    base_url = (
        config.openai_base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_BASE_URL
    )
    api_key = config.openai_api_key or os.environ.get("OPENAI_API_KEY") or DEFAULT_OPENAI_API_KEY
    return base_url, api_key


_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-\[\]]+")


def cassette_path(cassette_dir: Path, module_path: Path, name: str) -> Path:
    """``<cassette_dir>/<test module>/<name>.yaml`` with file-system-safe parts."""
    safe = _UNSAFE.sub("_", name).strip("_") or "cassette"
    if safe.endswith(".yaml"):
        safe = safe[: -len(".yaml")]
    return cassette_dir / module_path.stem / f"{safe}.yaml"
