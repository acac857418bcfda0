"""Cassettes on vcrpy: per-test paths, record modes, credential scrubbing, atomic writes.

``open_cassette`` is the seam later cassette features plug into: custom matchers
(e.g. semantic request matching) arrive through ``matchers``, extra scrubbers
through ``scrubbers``, both usually contributed by the plugin's hooks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness._errors import UsageError
from harness.testing._files import atomic_write

__all__ = ["SECRET_HEADERS", "Scrubber", "open_cassette", "scrub_request", "scrub_response"]

SECRET_HEADERS = (
    "authorization",
    "api-key",
    "x-api-key",
    "openai-organization",
    "openai-project",
    "cookie",
    "set-cookie",
)
"""Headers never written to a cassette (compared case-insensitively)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scrubber:
    """Rewrites what is recorded: ``request(vcr_request)`` and/or ``response(dict)``.

    Each callable returns the (possibly modified) object, or ``None`` to drop the
    interaction from the cassette.
    """

    request: Callable[[Any], Any] | None = None
    response: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None


def scrub_request(request: Any) -> Any:
    """Remove credential headers from a vcrpy request."""
    for name in list(request.headers):
        if name.lower() in SECRET_HEADERS:
            del request.headers[name]
    return request


def scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    """Remove credential headers (``set-cookie`` and friends) from a recorded response."""
    headers = response.get("headers")
    if isinstance(headers, dict):
        for name in list(headers):
            if str(name).lower() in SECRET_HEADERS:
                del headers[name]
    return response


class AtomicPersister:
    """vcrpy's filesystem persister, writing through a temp file and ``os.replace``."""

    @classmethod
    def load_cassette(cls, cassette_path: Any, serializer: Any) -> Any:
        from vcr.persisters.filesystem import FilesystemPersister  # type: ignore[import-untyped]

        return FilesystemPersister.load_cassette(cassette_path, serializer)

    @staticmethod
    def save_cassette(cassette_path: Any, cassette_dict: Any, serializer: Any) -> None:
        from vcr.serialize import serialize  # type: ignore[import-untyped]

        atomic_write(Path(cassette_path), serialize(cassette_dict, serializer))


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
    unused: str = "warn",
) -> Iterator[Any]:
    """Use the cassette at ``path`` (a ``vcr.cassette.Cassette``) for the block.

    ``match_on`` takes vcrpy matcher names and the harness presets ``semantic`` (the
    default: LLM requests compared by meaning), ``strict`` and ``path-only``. Any file
    variant loads (``parsed_body`` included). A request that matches nothing raises
    ``CassetteMismatch`` (with the closest recorded request and a diff) or
    ``CassetteExhausted``; ``unused`` (``error``, ``warn``, ``ignore``) says what to do
    with interactions no request used.
    """
    import vcr  # type: ignore[import-untyped]

    from harness.cassettes import _vcr as hooks

    if record_mode == "none" and not path.is_file():
        raise UsageError(
            f"cassette {str(path)!r} does not exist and record mode is 'none' (replay only); "
            "record it once with --harness-record-mode=once (and --harness-network=allow for "
            "a remote API), or fix the cassette name"
        )
    recorder = vcr.VCR(
        record_mode=record_mode,
        decode_compressed_response=True,
        before_record_request=_chain(
            scrub_request, [s.request for s in scrubbers if s.request is not None]
        ),
        before_record_response=_chain(
            scrub_response, [s.response for s in scrubbers if s.response is not None]
        ),
    )
    recorder.register_persister(AtomicPersister)
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
                raise error from exc
            raise
        hooks.check_unused(cassette, unused, record_mode=record_mode)
