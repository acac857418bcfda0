"""Cassettes on vcrpy: per-test paths, record modes, scrubbing, checked loading, safe writes.

``open_cassette`` is the seam later cassette features plug into: custom matchers
(e.g. semantic request matching) arrive through ``matchers``, extra scrubbers
through ``scrubbers``, both usually contributed by the plugin's hooks; declarative
scrubbing arrives as ``filter_headers``/``filter_query_parameters``/
``filter_post_data_parameters`` (pytest-recording's names). What is scrubbed by
default is in ``harness.testing._scrub``.

Files are read once, by the one cassette loader (``harness.cassettes._load``: bounded,
checked; a malformed or hostile one is a ``CassetteError`` naming the file and the
interaction), which hands vcrpy the parsed records; they are written under a file lock
that merges what other pytest-xdist workers wrote to the same cassette meanwhile.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness._errors import CassetteError, UsageError
from harness._secrets import known_secrets
from harness.cassettes._load import cassette_data, parse_cassette, read_cassette_file
from harness.testing._files import atomic_write
from harness.testing._scrub import CassetteScrubber, scrub_structure

__all__ = ["SECRET_HEADERS", "Scrubber", "open_cassette", "scrub_request", "scrub_response"]

SECRET_HEADERS = (
    "authorization",
    "proxy-authorization",
    "api-key",
    "x-api-key",
    "x-goog-api-key",
    "x-auth-token",
    "openai-organization",
    "openai-project",
    "anthropic-organization-id",
    "www-authenticate",
    "cookie",
    "set-cookie",
)
"""Examples of headers never written to a cassette. The rule is wider: every header
whose name looks like a credential (``harness._secrets.is_credential_header``,
case-insensitive: ``*auth*``, ``*token*``, ``*secret*``, ``*api-key*``, ``*-key``,
``*cookie*``, ``*organization*`` ...)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scrubber:
    """Rewrites what is recorded: ``request(vcr_request)`` and/or ``response(dict)``.

    Each callable returns the (possibly modified) object, or ``None`` to drop the
    interaction from the cassette.
    """

    request: Callable[[Any], Any] | None = None
    response: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None


def scrub_request(request: Any) -> Any:
    """Scrub a vcrpy request with the default rules (credential headers, query parameters,
    userinfo, JSON/form fields, known secret values)."""
    return CassetteScrubber.build().request(request)


def scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    """Scrub a recorded vcrpy response dict with the default rules."""
    return CassetteScrubber.build().response(response)


# -- checked loading: the one cassette loader, and what each record mode does with a bad file --


def check_cassette_data(path: Path, data: Any) -> list[Any]:
    """The interactions of a parsed cassette, as vcrpy reads them; ``CassetteError`` for a
    wrong shape (the rules of the one loader, ``harness.cassettes._load``)."""
    return list(cassette_data(data, name=str(path))["interactions"])


def load_checked(path: Path, record_mode: str) -> dict[str, Any] | None:
    """The cassette stored at ``path``, checked and in vcrpy's stock shape; ``None`` when
    there is no file, or in record mode ``all`` (which records everything again) when the
    file is empty or unusable."""
    if not path.is_file():
        return None
    text = read_cassette_file(path)
    if not text.strip():
        if record_mode == "all":
            return None
        raise CassetteError(
            f"cassette {str(path)!r} is empty; record mode {record_mode!r} would "
            + ("re-record it silently" if record_mode != "none" else "replay nothing")
            + ". Delete the file to record it again, or restore it from version control",
            path=str(path),
        )
    try:
        return parse_cassette(text, name=str(path))
    except CassetteError:
        if record_mode == "all":
            return None
        raise


class _Parsed:
    """A vcrpy serializer that hands over a cassette already read by the one loader."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def deserialize(self, _text: str) -> dict[str, Any]:
        return copy.deepcopy(self.data)  # vcrpy's records never share state with ours


# -- saving: scrub once more, merge concurrent writers under a lock -----------------------------


def _persister(
    path: Path,
    scrubber: CassetteScrubber,
    loaded: list[Any] | None,
    *,
    merge: bool = True,
    metadata: Any = None,
) -> type[Any]:
    """vcrpy's persister for ``path``, whose ``loaded`` interactions (and ``metadata``) the
    one loader read. ``merge=False`` (record mode ``rewrite``): the saved file holds only
    this recording."""
    baseline = list(loaded or [])
    stored: dict[str, Any] = {"interactions": baseline}
    if metadata:
        stored["metadata"] = metadata

    class CheckedPersister:
        """vcrpy persister: checked loading; locked, merged, scrubbed, atomic saving."""

        @classmethod
        def load_cassette(cls, cassette_path: Any, serializer: Any) -> Any:
            from vcr.persisters.filesystem import (  # type: ignore[import-untyped]
                CassetteNotFoundError,
            )
            from vcr.serialize import deserialize  # type: ignore[import-untyped]

            if loaded is None:  # no file, or mode 'all' over an empty/junk one: record anew
                raise CassetteNotFoundError()
            try:  # the file was read once, by the one loader; vcrpy builds its records
                return deserialize("", _Parsed(stored))
            except (TypeError, KeyError, AttributeError) as exc:
                raise CassetteError(
                    f"cassette {str(cassette_path)!r} is not a usable vcrpy cassette: vcrpy "
                    f"cannot read it ({type(exc).__name__}: {exc}). Fix the file, or delete it "
                    "and record it again (--harness-record-mode=once)",
                    path=str(cassette_path),
                ) from None

        @staticmethod
        def save_cassette(cassette_path: Any, cassette_dict: Any, serializer: Any) -> None:
            from filelock import FileLock
            from vcr.serializers import compat  # type: ignore[import-untyped]

            target = Path(cassette_path)
            target.parent.mkdir(parents=True, exist_ok=True)
            ours = [
                {
                    "request": compat.convert_to_unicode(request._to_dict()),
                    "response": compat.convert_to_unicode(response),
                }
                for request, response in zip(
                    cassette_dict["requests"], cassette_dict["responses"], strict=False
                )
            ]
            with FileLock(str(lock_path(target)), timeout=120):
                interactions = _merge(target, ours, baseline) if merge else ours
                data: dict[str, Any] = {"version": 1, "interactions": interactions}
                if cassette_dict.get("metadata"):
                    data["metadata"] = cassette_dict["metadata"]
                secrets = (*known_secrets(), *scrubber.secrets)
                atomic_write(target, serializer.serialize(scrub_structure(data, secrets)))

    return CheckedPersister


def lock_path(target: Path) -> Path:
    """The lock file guarding ``target`` (in the temp folder, so cassette folders stay
    clean; one per absolute cassette path)."""
    import hashlib
    import tempfile

    digest = hashlib.sha256(str(target.resolve()).encode("utf-8", "surrogatepass")).hexdigest()
    folder = Path(tempfile.gettempdir()) / "harness-cassette-locks"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{digest[:32]}.lock"


def _key(interaction: Any) -> str:
    import json

    return json.dumps(interaction, sort_keys=True, default=str)


def _merge(target: Path, ours: list[Any], baseline: list[Any]) -> list[Any]:
    """``ours`` plus the interactions another writer (an xdist worker) added to ``target``
    since this cassette loaded it; nothing is lost when two tests share a cassette."""
    try:
        current = (load_checked(target, "new_episodes") or {}).get("interactions", [])
    except CassetteError:
        return ours
    seen = {_key(i) for i in baseline} | {_key(i) for i in ours}
    return [*ours, *(i for i in current if _key(i) not in seen)]


def _chain(
    first: Callable[[Any], Any], extra: Sequence[Callable[[Any], Any]]
) -> Callable[[Any], Any]:
    def run(item: Any) -> Any:
        item = first(item)
        for fn in extra:
            if item is None:
                return None
            item = fn(item)
        return item

    return run


@contextmanager
def open_cassette(
    path: Path,
    *,
    record_mode: str,
    match_on: Sequence[str] | None = None,
    matchers: Mapping[str, Callable[..., Any]] | None = None,
    scrubbers: Sequence[Scrubber] = (),
    filter_headers: Sequence[Any] | None = None,
    filter_query_parameters: Sequence[Any] | None = None,
    filter_post_data_parameters: Sequence[Any] | None = None,
    secrets: Iterable[Any] = (),
    unused: str = "warn",
) -> Iterator[Any]:
    """Use the cassette at ``path`` (a ``vcr.cassette.Cassette``) for the block.

    ``match_on`` takes vcrpy matcher names and the harness presets ``semantic`` (the
    default: LLM requests compared by meaning), ``strict`` and ``path-only``. Any file
    variant loads (``parsed_body`` included). A request that matches nothing raises
    ``CassetteMismatch`` (with the closest recorded request and a diff) or
    ``CassetteExhausted``; ``unused`` (``error``, ``warn``, ``ignore``) says what to do
    with interactions no request used.

    Everything recorded is scrubbed (``harness.testing._scrub``): credential headers,
    query parameters, userinfo and body fields by name, and every known secret value
    (the registry, ``secrets``, ``OPENAI_API_KEY``/``ANTHROPIC_API_KEY``) wherever it
    appears. ``filter_headers``, ``filter_query_parameters`` and
    ``filter_post_data_parameters`` add names (removed) or ``(name, replacement)``
    pairs, as in pytest-recording. An existing file is checked first: malformed,
    truncated or (outside mode ``all``) empty files raise ``CassetteError``.
    ``record_mode="rewrite"`` (pytest-recording's mode) records the cassette from
    scratch and replaces the old file (atomically) when the new recording is saved.
    """
    import vcr  # type: ignore[import-untyped]

    from harness.testing import _vcr as hooks

    if record_mode == "none" and not path.is_file():
        raise CassetteError(
            f"cassette {str(path)!r} does not exist and record mode is 'none' (replay only); "
            "record it once with --harness-record-mode=once (and --harness-network=allow for "
            "a remote API), or fix the cassette name",
            path=str(path),
        )
    rewrite = record_mode == "rewrite"
    loaded = None if rewrite else load_checked(path, record_mode)
    engine = CassetteScrubber.build(
        filter_headers=filter_headers,
        filter_query_parameters=filter_query_parameters,
        filter_post_data_parameters=filter_post_data_parameters,
        secrets=secrets,
    )
    recorder = vcr.VCR(
        record_mode="new_episodes" if rewrite else record_mode,
        decode_compressed_response=True,
        before_record_request=_chain(
            engine.request, [s.request for s in scrubbers if s.request is not None]
        ),
        before_record_response=_chain(
            engine.response, [s.response for s in scrubbers if s.response is not None]
        ),
    )
    recorder.register_persister(
        _persister(
            path,
            engine,
            None if loaded is None else loaded["interactions"],
            merge=not rewrite,
            metadata=None if loaded is None else loaded.get("metadata"),
        )
    )
    hooks.install(recorder)
    for name, matcher in (matchers or {}).items():
        recorder.register_matcher(name, matcher)
    if unused not in hooks.UNUSED_POLICIES:
        raise UsageError(
            f"unused={unused!r} is not valid; choose one of {', '.join(hooks.UNUSED_POLICIES)}"
        )
    expanded = hooks.expand_match_on(match_on)
    unknown = [m for m in expanded if m not in recorder.matchers]
    if unknown:
        raise UsageError(
            f"unknown cassette matcher(s) {unknown}; known: "
            f"{sorted([*recorder.matchers, *hooks.MATCH_PRESETS])} "
            "(register more with the pytest_harness_cassette_matchers hook)"
        )
    with recorder.use_cassette(str(path), match_on=expanded) as cassette:
        try:
            yield cassette
        except BaseException as exc:
            error = hooks.translate_error(exc, match_on=expanded)
            if error is not None:
                raise error.with_traceback(exc.__traceback__) from None  # not vcrpy's advice
            raise
        hooks.check_unused(cassette, unused, record_mode=record_mode)
