"""The pytest plugin's options, ini keys and markers, as named constants (stdlib only).

Every option has an ini twin. Precedence, strongest first: command line, the test's
marker, the ``harness_config`` (or ``vcr_config``) fixture, the ini file, then the
built-in default (``harness.testing._config`` applies it).

When pytest-recording is not installed, ``--record-mode`` and ``--disable-recording``
are aliases of the harness's own options (``RECORDING_ALIASES``); when it is, those
names stay pytest-recording's.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from typing import Any, Literal, get_args

__all__ = [
    "CASSETTE_MARKER_ARGS",
    "COVERAGE",
    "FILTER_INIS",
    "FILTER_KEYS",
    "MARKERS",
    "NETWORK_MODES",
    "OPTIONS",
    "OTEL",
    "RECORDING_ALIASES",
    "RECORD_MODES",
    "SCENARIO_PATHS_INI",
    "SNAPSHOT_PROPERTY",
    "TIMELINE_MODES",
    "TIMELINE_SECTION",
    "VCR_MARKER",
    "NetworkMode",
    "Option",
    "RecordMode",
    "TimelineMode",
    "add_options",
    "cli_or_ini",
    "cli_value",
    "ini_value",
    "pytest_recording_active",
]

RecordMode = Literal["none", "once", "new_episodes", "all", "rewrite"]
"""Cassette record modes: vcrpy's four, and pytest-recording's ``rewrite``."""
NetworkMode = Literal["deny", "deny-all", "allow"]
TimelineMode = Literal["on-failure", "always", "never"]
RECORD_MODES: tuple[str, ...] = get_args(RecordMode)
NETWORK_MODES: tuple[str, ...] = get_args(NetworkMode)
TIMELINE_MODES: tuple[str, ...] = get_args(TimelineMode)
SCENARIO_PATHS_INI = "harness_scenario_paths"
TIMELINE_SECTION = "harness timeline"
"""The report section holding a test's run timelines."""
SNAPSHOT_PROPERTY = "harness_snapshot_written"
"""The user property naming a timeline snapshot file a test wrote."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Option:
    """One plugin option: its ``--flag``, its ini key, choices and default."""

    dest: str
    """Attribute on ``config.option`` and the ini key (``harness_...``)."""
    flag: str
    help: str
    choices: tuple[str, ...] | None = None
    default: str | None = None
    """Built-in default, used when no layer sets a value."""
    is_flag: bool = False
    aliases: tuple[str, ...] = ()
    """pytest-recording's spellings of the flag, registered unless that plugin is active."""


RECORD_MODE = Option(
    dest="harness_record_mode",
    flag="--harness-record-mode",
    choices=RECORD_MODES,
    default="none",
    aliases=("--record-mode",),
    help="cassette record mode: none (replay only, default), once, new_episodes, all, "
    "rewrite (record the cassette from scratch)",
)
CASSETTE_DIR = Option(
    dest="harness_cassette_dir",
    flag="--harness-cassette-dir",
    help="folder for cassettes (default: <rootdir>/cassettes)",
)
NETWORK = Option(
    dest="harness_network",
    flag="--harness-network",
    choices=NETWORK_MODES,
    default="deny",
    help="real outbound network: deny (in tests using harness fixtures/markers, default), "
    "deny-all (in every test) or allow; loopback is always allowed",
)
ALLOW_HOSTS = Option(
    dest="harness_allow_hosts",
    flag="--harness-allow-hosts",
    help="comma-separated hosts, addresses or CIDR networks that stay reachable while the "
    "network is denied (loopback always is), e.g. db.internal,10.0.0.0/8",
)
TIMELINE = Option(
    dest="harness_timeline",
    flag="--harness-timeline",
    choices=TIMELINE_MODES,
    default="on-failure",
    help="show run timelines in the terminal summary: on-failure (default), always, never",
)
UPDATE_SNAPSHOTS = Option(
    dest="harness_update_snapshots",
    flag="--harness-update-snapshots",
    is_flag=True,
    help="rewrite timeline snapshots that differ (or are missing) instead of failing",
)

DISABLE_RECORDING = Option(
    dest="harness_disable_recording",
    flag="--harness-disable-recording",
    is_flag=True,
    aliases=("--disable-recording",),
    help="open no cassettes: marked tests talk to the real endpoint (the network guard "
    "still applies)",
)
HTML = Option(
    dest="harness_html",
    flag="--harness-html",
    help="write the session's run timelines and cost reports (harness.cost) to one "
    "self-contained HTML page at this path",
)

COVERAGE = Option(
    dest="harness_coverage",
    flag="--harness-coverage",
    is_flag=True,
    help="after the session, report injection coverage over every run the tests made: "
    "declared tools never offered, offered but never called, called only with errors, "
    "strategy states never reached (session-wide: command line or ini only)",
)

OTEL = Option(
    dest="harness_otel",
    flag="--harness-otel",
    help="write every run the tests made to this file as OpenTelemetry spans (OTLP JSON: the "
    "GenAI conventions plus harness.* attributes), one trace per run, tagged with its test "
    "(session-wide: command line or ini only)",
)

OPTIONS = (
    RECORD_MODE,
    CASSETTE_DIR,
    NETWORK,
    ALLOW_HOSTS,
    TIMELINE,
    UPDATE_SNAPSHOTS,
    DISABLE_RECORDING,
    HTML,
    COVERAGE,
    OTEL,
)
"""Every option, in help order."""

RECORDING_ALIASES = tuple(alias for opt in OPTIONS for alias in opt.aliases)
"""pytest-recording's command-line names the harness accepts when that plugin is absent."""

FILTER_KEYS = ("filter_headers", "filter_query_parameters", "filter_post_data_parameters")
"""Declarative cassette filters (names of headers, query and form parameters)."""
FILTER_INIS = {key: f"harness_{key}" for key in FILTER_KEYS}
"""The ini keys of the filters (one name per line)."""

CASSETTE_MARKER_ARGS = ("name", "record_mode", "match_on", "match", "unused", *FILTER_KEYS)
"""The keyword arguments ``harness_cassette`` (and its alias ``vcr``) accept."""

MARKERS = (
    "harness_cassette(name=None, record_mode=None, match_on=None, match=None, unused=None, "
    "filter_headers=None, filter_query_parameters=None, filter_post_data_parameters=None): "
    "replay (or record) the test's HTTP traffic from cassettes/<test module>/<name or test "
    "name>.yaml; match='semantic'|'strict'|'path-only', unused='error'|'warn'|'ignore'",
    "harness_scenario(path, check=True): run the test against a harness scenario file "
    "(a glob runs it once per matching file); the harness_scenario fixture holds the outcome",
)


VCR_MARKER = (
    "vcr(**kwargs): alias of harness_cassette (pytest-recording's marker; the harness "
    "handles it because pytest-recording is not installed)"
)


def pytest_recording_active(pluginmanager: Any) -> bool:
    """True when pytest-recording is installed and not disabled with ``-p no:recording``.

    Then ``--record-mode``, ``--disable-recording``, the ``vcr`` marker and the
    ``vcr_config`` fixture stay pytest-recording's, and the harness reads only its own names.
    """
    if pluginmanager.is_blocked("recording") or pluginmanager.is_blocked("pytest_recording"):
        return False
    return importlib.util.find_spec("pytest_recording") is not None


def add_options(parser: Any, *, aliases: bool = True) -> None:
    """Register the options (one group) and their ini twins on a pytest parser.

    ``aliases=False`` leaves pytest-recording's flag names to that plugin.
    """
    group = parser.getgroup("harness", "tool-loop harness")
    for opt in OPTIONS:
        flags = (opt.flag, *opt.aliases) if aliases else (opt.flag,)
        if opt.is_flag:
            group.addoption(*flags, action="store_true", dest=opt.dest, default=None, help=opt.help)
            parser.addini(opt.dest, help=opt.help, type="bool", default=None)
        else:
            group.addoption(*flags, dest=opt.dest, choices=opt.choices, default=None, help=opt.help)
            parser.addini(opt.dest, help=opt.help, default=None)
    for key, ini in FILTER_INIS.items():
        parser.addini(
            ini,
            help=f"cassettes: more {key.removeprefix('filter_').replace('_', ' ')} to scrub "
            "(one name per line; credential-like names are scrubbed anyway)",
            type="linelist",
            default=[],
        )
    parser.addini(
        SCENARIO_PATHS_INI,
        help="glob patterns (relative to rootdir) of scenario files to collect as tests",
        type="linelist",
        default=[],
    )


def cli_value(config: Any, opt: Option) -> Any:
    """The value set on the command line, or ``None``."""
    return getattr(config.option, opt.dest, None)


def cli_or_ini(config: Any, opt: Option) -> Any:
    """The value set on the command line, else in the ini file, else ``None``."""
    value = cli_value(config, opt)
    if value is not None:
        return value
    return ini_value(config, opt)


def ini_value(config: Any, opt: Option) -> Any:
    """The value set in the ini file, or ``None``.

    A value outside the option's choices raises ``pytest.UsageError``.
    """
    value = config.getini(opt.dest)
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, str):
        value = value.strip()
    if opt.choices is not None and value not in opt.choices:
        import pytest

        from harness._names import did_you_mean, format_names
        from harness._secrets import scrub_message

        raise pytest.UsageError(
            scrub_message(
                f"ini option {opt.dest} = {value!r} is not valid"
                f"{did_you_mean(value, opt.choices)}; choose one of "
                f"{format_names(opt.choices)} (or pass {opt.flag}=...)"
            )
        )
    return value
