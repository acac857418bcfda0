"""Per-test plugin settings: the layers and the precedence rule (the most specific wins).

For each setting, the first layer that sets it wins:

1. the command line (``--harness-record-mode``, alias ``--record-mode``, ...),
2. the test's marker (``harness_cassette(record_mode=...)``, alias ``vcr(...)``),
3. the ``harness_config`` fixture (and its alias, the ``vcr_config`` fixture),
4. the ini file (``harness_record_mode = ...``),
5. the built-in default.

Within a layer the harness's own name beats its pytest-recording alias: a
``harness_cassette`` marker argument beats the same ``vcr`` marker argument, and a
``HarnessConfig`` field that is not ``None`` beats the same ``vcr_config`` key.
When the command line overrides a value the marker set, ``Settings.overridden``
says so (the plugin turns it into a warning).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness._errors import UsageError
from harness._names import did_you_mean, format_names
from harness._secrets import register_secret
from harness._validation import check_choice
from harness.testing import _options as opts

__all__ = [
    "DEFAULT_OPENAI_API_KEY",
    "DEFAULT_OPENAI_BASE_URL",
    "HarnessConfig",
    "Settings",
    "cassette_path",
    "check_marker_kwargs",
    "openai_client_settings",
    "resolve_settings",
]

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_OPENAI_API_KEY = "sk-harness-test"

VCR_CONFIG_KEYS = ("record_mode", "match_on", "cassette_library_dir", *opts.FILTER_KEYS)
"""The ``vcr_config`` keys the harness understands (``cassette_library_dir`` is its
``cassette_dir``)."""


def _names(owner: str, key: str, value: Any) -> tuple[Any, ...] | None:
    """A checked list of names: ``match_on`` takes names only, never a bare string; the
    filters also take ``(name, replacement)`` pairs, as in pytest-recording."""
    if value is None:
        return None
    if isinstance(value, str):
        raise UsageError(
            f"{owner}({key}={value!r}) must be a list of names, e.g. {key}=[{value!r}]"
        )
    if key in opts.FILTER_KEYS:
        from harness.testing._scrub import normalize_filters

        normalize_filters(value, f"{owner}({key}=...)")
        return tuple(value)
    if not all(isinstance(v, str) for v in value):
        raise UsageError(f"{owner}({key}={value!r}) must be a list of names (strings)")
    return tuple(value)


@dataclasses.dataclass(frozen=True, kw_only=True)
class HarnessConfig:
    """Defaults for the tests that see this fixture; override ``harness_config`` in a
    ``conftest.py`` to change them for a folder. ``None`` leaves a setting to the
    layers below (the ini file, then built-in defaults). The command line and the
    test's marker win."""

    record_mode: str | None = None
    """Cassette record mode: ``none``, ``once``, ``new_episodes``, ``all`` or ``rewrite``."""
    cassette_dir: str | Path | None = None
    """Cassette folder (relative paths are relative to the rootdir)."""
    network: str | None = None
    """``deny``, ``deny-all`` or ``allow``."""
    match_on: Sequence[str] | None = None
    """vcrpy matchers for requests (default: vcrpy's method, scheme, host, port, path, query)."""
    filter_headers: Sequence[Any] | None = None
    """More request/response headers to scrub from cassettes: names (removed) or
    ``(name, replacement)`` pairs, as in pytest-recording. Credential-like names are
    scrubbed anyway."""
    filter_query_parameters: Sequence[Any] | None = None
    """More query parameters to scrub (names or ``(name, replacement)`` pairs)."""
    filter_post_data_parameters: Sequence[Any] | None = None
    """More JSON/form body fields to scrub (names or ``(name, replacement)`` pairs)."""
    openai_base_url: str | None = None
    """Base URL of the ``harness_openai`` client when it replays or records a cassette
    (``None``: ``$OPENAI_BASE_URL``, else ``https://api.openai.com/v1``)."""
    openai_api_key: str | None = dataclasses.field(default=None, repr=False)
    """API key the ``harness_openai`` client sends (``None``: ``$OPENAI_API_KEY``, else a
    placeholder that is fine for replaying); scrubbed from cassettes, messages and
    reports, never in the repr."""
    secrets: Sequence[str] = dataclasses.field(default=(), repr=False)
    """More secret values to scrub wherever they appear (8 characters or more)."""

    def __post_init__(self) -> None:
        if self.openai_api_key is not None:
            register_secret(self.openai_api_key, source="HarnessConfig(openai_api_key=...)")
        for secret in self.secrets if not isinstance(self.secrets, str) else [self.secrets]:
            register_secret(secret, source="a HarnessConfig(secrets=...) value")
        if self.record_mode is not None:
            check_choice(self.record_mode, opts.RecordMode, name="HarnessConfig(record_mode=...)")
        if self.network is not None:
            check_choice(self.network, opts.NetworkMode, name="HarnessConfig(network=...)")
        for key in ("match_on", *opts.FILTER_KEYS):
            _names("HarnessConfig", key, getattr(self, key))


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings:
    """The resolved settings of one test, and where each came from."""

    record_mode: str
    cassette_dir: Path
    network: str
    timeline: str
    update_snapshots: bool
    match_on: tuple[str, ...] | None
    filter_headers: tuple[Any, ...] = ()
    """Header names (or ``(name, replacement)`` pairs) the cassette scrubber removes
    (passed to ``open_cassette``)."""
    filter_query_parameters: tuple[Any, ...] = ()
    """Query parameter names (or pairs) the cassette scrubber removes."""
    filter_post_data_parameters: tuple[Any, ...] = ()
    """Body field names (or pairs) the cassette scrubber removes."""
    disable_recording: bool = False
    """``--disable-recording``: marked tests open no cassette."""
    sources: dict[str, str] = dataclasses.field(default_factory=dict)
    """For each setting: ``cli``, ``marker``, ``fixture``, ``ini`` or ``default``."""
    overridden: tuple[str, ...] = ()
    """One sentence per marker value the command line overrode for this run."""

    @property
    def cassette_filters(self) -> dict[str, tuple[Any, ...]]:
        """The declarative filters, as ``open_cassette`` keyword arguments."""
        return {key: getattr(self, key) for key in opts.FILTER_KEYS}


def check_marker_kwargs(marker: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """Refuse a cassette marker's unknown or misspelled arguments, with a "did you mean"."""
    known = opts.CASSETTE_MARKER_ARGS
    for key in kwargs:
        if key not in known:
            raise UsageError(
                f"{marker}() got an unknown argument {key!r}{did_you_mean(key, known)}; "
                f"it accepts {format_names(known)}"
            )
    if marker == "vcr" and args:
        raise UsageError(
            f"vcr({format_names(str(a) for a in args)}): pytest-recording's extra cassettes are "
            "not supported; the harness uses one cassette per test: name it with "
            "@pytest.mark.harness_cassette(name=...)"
        )
    if len(args) > 1:
        raise UsageError(f"{marker}() takes at most one positional argument (the name)")
    if "record_mode" in kwargs and kwargs["record_mode"] is not None:
        check_choice(kwargs["record_mode"], opts.RecordMode, name=f"{marker}(record_mode=...)")
    for key in ("match_on", *opts.FILTER_KEYS):
        _names(marker, key, kwargs.get(key))


def _from_vcr_config(vcr_config: Mapping[str, Any] | None) -> dict[str, Any]:
    if not vcr_config:
        return {}
    if not isinstance(vcr_config, Mapping):
        raise UsageError(f"the vcr_config fixture must return a dict, got {vcr_config!r}")
    values: dict[str, Any] = {}
    for key, value in vcr_config.items():
        if key not in VCR_CONFIG_KEYS:
            raise UsageError(
                f"vcr_config key {key!r} is not supported by the harness"
                f"{did_you_mean(key, VCR_CONFIG_KEYS)}; it understands "
                f"{format_names(VCR_CONFIG_KEYS)} (see docs/migrating-from-pytest-recording.md)"
            )
        if key == "record_mode":
            check_choice(value, opts.RecordMode, name="vcr_config['record_mode']")
        elif key != "cassette_library_dir":
            _names("vcr_config", key, value)
        values["cassette_dir" if key == "cassette_library_dir" else key] = value
    return values


def _fixture_layer(
    fixture: HarnessConfig | None, vcr_config: Mapping[str, Any] | None
) -> dict[str, Any]:
    values = _from_vcr_config(vcr_config)
    fixture = fixture or HarnessConfig()
    for key in ("record_mode", "cassette_dir", "network", "match_on", *opts.FILTER_KEYS):
        value = getattr(fixture, key)
        if value is not None:
            values[key] = value
    return values


_OPTIONS: dict[str, opts.Option] = {
    "record_mode": opts.RECORD_MODE,
    "cassette_dir": opts.CASSETTE_DIR,
    "network": opts.NETWORK,
    "timeline": opts.TIMELINE,
    "update_snapshots": opts.UPDATE_SNAPSHOTS,
    "disable_recording": opts.DISABLE_RECORDING,
}
_KEYS = (*_OPTIONS, "match_on", *opts.FILTER_KEYS)


def _ini(config: Any, key: str) -> Any:
    if key in _OPTIONS:
        return opts.ini_value(config, _OPTIONS[key])
    if key in opts.FILTER_INIS:
        return config.getini(opts.FILTER_INIS[key]) or None
    return None


def resolve_settings(
    config: Any,
    fixture: HarnessConfig | None,
    marker_kwargs: Mapping[str, Any] | None,
    *,
    vcr_config: Mapping[str, Any] | None = None,
    marker: str = "harness_cassette",
) -> Settings:
    """Apply the precedence rule (CLI > marker > fixture > ini > default) to one test.

    ``marker_kwargs`` are the (merged) cassette marker arguments, ``marker`` names the
    marker in messages; ``vcr_config`` is the pytest-recording-style config fixture.
    """
    marker_values = dict(marker_kwargs or {})
    check_marker_kwargs(marker, (), marker_values)
    fixture_values = _fixture_layer(fixture, vcr_config)
    sources: dict[str, str] = {}
    values: dict[str, Any] = {}
    overridden: list[str] = []
    for key in _KEYS:
        option = _OPTIONS.get(key)
        cli = opts.cli_value(config, option) if option is not None else None
        marked = marker_values.get(key)
        layers = (
            ("cli", cli),
            ("marker", marked),
            ("fixture", fixture_values.get(key)),
            ("ini", _ini(config, key)),
        )
        values[key], sources[key] = next(
            ((v, src) for src, v in layers if v is not None),
            (option.default if option is not None else None, "default"),
        )
        if cli is not None and marked is not None and marked != cli and option is not None:
            overridden.append(
                f"{option.flag}={cli} overrides {marker}({key}={marked!r}) for this run"
            )
    root = Path(str(config.rootpath))
    cassette_dir = Path(values["cassette_dir"] or root / "cassettes")
    if not cassette_dir.is_absolute():
        cassette_dir = root / cassette_dir
    match_on = values["match_on"]
    return Settings(
        record_mode=values["record_mode"],
        cassette_dir=cassette_dir,
        network=values["network"],
        timeline=values["timeline"],
        update_snapshots=values["update_snapshots"] in (True, "true", "1", "yes"),
        match_on=tuple(match_on) if match_on else None,
        filter_headers=tuple(values["filter_headers"] or ()),
        filter_query_parameters=tuple(values["filter_query_parameters"] or ()),
        filter_post_data_parameters=tuple(values["filter_post_data_parameters"] or ()),
        disable_recording=values["disable_recording"] in (True, "true", "1", "yes"),
        sources=sources,
        overridden=tuple(overridden),
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


def openai_client_settings(config: HarnessConfig | None) -> tuple[str, str]:
    """``(base_url, api_key)`` for the plugin's real clients: the ``harness_config`` value
    wins, then ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, then the built-in defaults."""
    config = config or HarnessConfig()
    base_url = (
        config.openai_base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_BASE_URL
    )
    api_key = config.openai_api_key or os.environ.get("OPENAI_API_KEY") or DEFAULT_OPENAI_API_KEY
    return base_url, api_key


def cassette_path(cassette_dir: Path, module_path: Path, name: str) -> Path:
    """``<cassette_dir>/<test module>/<name>.yaml``, the name escaped injectively
    (``cassette_file_name``)."""
    return cassette_dir / module_path.stem / cassette_file_name(name)
