"""Per-test plugin settings: the ``harness_config`` override and the precedence rule.

Precedence, strongest first: command line > ini file > ``harness_config`` fixture >
marker (``harness_cassette(record_mode=...)``) > built-in default.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness._errors import UsageError
from harness._plugin import _options as opts
from harness._secrets import register_secret, scrub_message

__all__ = ["HarnessConfig", "Settings", "cassette_path", "resolve_settings"]


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
    openai_base_url: str = "https://api.openai.com/v1"
    """Base URL of the ``harness_openai`` client when it replays or records a cassette."""
    openai_api_key: str = dataclasses.field(default="sk-harness-test", repr=False)
    """API key the ``harness_openai`` client sends (scrubbed from cassettes, messages and
    reports; never in the repr)."""
    filter_headers: Sequence[Any] = ()
    """More request/response headers to scrub from cassettes: names (removed) or
    ``(name, replacement)`` pairs, as in pytest-recording. Credential-like names are
    scrubbed anyway."""
    filter_query_parameters: Sequence[Any] = ()
    """More query parameters to scrub (names or ``(name, replacement)`` pairs)."""
    filter_post_data_parameters: Sequence[Any] = ()
    """More JSON/form body fields to scrub (names or ``(name, replacement)`` pairs)."""
    secrets: Sequence[str] = dataclasses.field(default=(), repr=False)
    """More secret values to scrub wherever they appear (8 characters or more)."""

    def __post_init__(self) -> None:
        register_secret(self.openai_api_key, source="HarnessConfig(openai_api_key=...)")
        for secret in self.secrets if not isinstance(self.secrets, str) else [self.secrets]:
            register_secret(secret, source="a HarnessConfig(secrets=...) value")
        checks = (
            ("record_mode", self.record_mode, opts.RECORD_MODES),
            ("network", self.network, opts.NETWORK_MODES),
        )
        for name, value, choices in checks:
            if value is not None and value not in choices:
                raise UsageError(
                    scrub_message(
                        f"HarnessConfig({name}={value!r}) is not valid; choose one of "
                        f"{', '.join(choices)} or None"
                    )
                )
        if isinstance(self.match_on, str):
            raise UsageError(
                scrub_message(
                    f"HarnessConfig(match_on={self.match_on!r}) must be a list of matcher names"
                )
            )
        from harness.testing._scrub import normalize_filters

        for name in ("filter_headers", "filter_query_parameters", "filter_post_data_parameters"):
            normalize_filters(getattr(self, name), f"HarnessConfig({name}=...)")


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


_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-\[\]]")
_MAX_NAME_BYTES = 150
"""Longer escaped names are shortened with a hash (most file systems allow 255 bytes)."""


def _escape(char: str) -> str:
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))


def cassette_file_name(name: str) -> str:
    """The file name (``.yaml``) of cassette ``name``: one name, one file.

    Characters outside ``[A-Za-z0-9_.-[]]`` are %-escaped (``a/b`` -> ``a%2Fb``,
    ``a b`` -> ``a%20b``, while ``a_b`` stays), so distinct names never share a file;
    names longer than 150 bytes once escaped keep their first 100 bytes plus a SHA-256
    of the whole name. A trailing ``.yaml`` is the suffix, not part of the name.
    """
    import hashlib

    if name.endswith(".yaml"):
        name = name[: -len(".yaml")]
    safe = _UNSAFE.sub(lambda m: _escape(m.group(0)), name)
    if not safe or set(safe) == {"."}:
        safe = "".join(_escape(c) for c in name) or "%EMPTY"  # never an escape's output
    if len(safe) > _MAX_NAME_BYTES:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:20]
        safe = f"{safe[:100]}-{digest}"
    return f"{safe}.yaml"


def cassette_path(cassette_dir: Path, module_path: Path, name: str) -> Path:
    """``<cassette_dir>/<test module>/<name>.yaml``, the name escaped injectively
    (``cassette_file_name``)."""
    return cassette_dir / module_path.stem / cassette_file_name(name)
