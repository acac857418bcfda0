"""The harness's hooks into vcrpy: a serializer for every real variant, the LLM matchers,
and harness errors instead of vcrpy's ``CannotOverwriteExistingCassetteException``.

``harness.testing.open_cassette`` installs these; they are also usable with a plain
``vcr.VCR`` (``install(recorder)``). Everything that speaks vcrpy's interfaces lives in
``harness.testing`` (here and the persister of ``_cassette.py``); ``harness.cassettes``
reads, matches and converts cassette files without it.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Sequence
from typing import Any

from harness._errors import (
    CassetteExhausted,
    CassetteMismatch,
    CassetteUnused,
    CassetteWarning,
    HarnessError,
    UsageError,
)
from harness.cassettes._load import parse_cassette
from harness.cassettes._match import body_differences, llm_semantic, llm_strict

__all__ = [
    "MATCH_PRESETS",
    "UNUSED_POLICIES",
    "HarnessSerializer",
    "check_unused",
    "expand_match_on",
    "install",
    "translate_error",
]

MATCH_PRESETS: dict[str, tuple[str, ...]] = {
    "semantic": ("method", "path", "llm_semantic"),
    "strict": ("method", "scheme", "host", "port", "path", "query", "llm_strict"),
    "path-only": ("method", "path"),
}
"""What each built-in matcher name means as a vcrpy ``match_on`` list."""

UNUSED_POLICIES = ("error", "warn", "ignore")
"""What to do with recorded interactions no request used, at the end of a test."""


class HarnessSerializer:
    """vcrpy serializer (registered as ``yaml``): reads stock vcrpy and the ``parsed_body``
    variant, writes stock vcrpy."""

    @staticmethod
    def deserialize(cassette_string: str) -> dict[str, Any]:
        """The one loader's checked stock dict of a file vcrpy read."""
        return parse_cassette(cassette_string)

    @staticmethod
    def serialize(cassette_dict: dict[str, Any]) -> str:
        """Stock vcrpy YAML."""
        from vcr.serializers import yamlserializer  # type: ignore[import-untyped]

        return str(yamlserializer.serialize(dict(cassette_dict)))


def expand_match_on(match_on: Sequence[str] | None) -> tuple[str, ...]:
    """``match_on`` with preset names (``semantic``, ``strict``, ``path-only``) expanded.

    ``None`` means ``semantic``.
    """
    if match_on is None:
        return MATCH_PRESETS["semantic"]
    out: list[str] = []
    for name in match_on:
        for item in MATCH_PRESETS.get(name, (name,)):
            if item not in out:
                out.append(item)
    return tuple(out)


def install(recorder: Any) -> None:
    """Register the serializer and the LLM matchers on a ``vcr.VCR``."""
    recorder.register_serializer("yaml", HarnessSerializer)
    recorder.register_matcher("llm_semantic", llm_semantic)
    recorder.register_matcher("llm_strict", llm_strict)


def _endpoint(request: Any) -> str:
    return f"{request.method} {request.path}"


def _mode_of(match_on: Sequence[str]) -> str:
    if "llm_strict" in match_on:
        return "strict"
    if "llm_semantic" in match_on:
        return "semantic"
    return "path-only"


_REFUSED: weakref.WeakSet[Any] = weakref.WeakSet()
"""Cassettes that refused a request: their unplayed interactions are that regression's
consequence, reported once by the refusal (``check_unused`` leaves them alone)."""


def translate_error(exc: BaseException, *, match_on: Sequence[str] = ()) -> HarnessError | None:
    """The harness error for a vcrpy "cannot overwrite" anywhere in ``exc``'s chain.

    Finds it also when an SDK wrapped it (the ``openai`` SDK raises
    ``APIConnectionError`` from it). ``None`` when there is none. The error carries the
    run's trace and history when an error of the chain did; raise it with
    ``raise error.with_traceback(exc.__traceback__) from None``: one report, the
    harness's advice, not vcrpy's (whose record modes the harness refuses).
    """
    from vcr.errors import CannotOverwriteExistingCassetteException  # type: ignore[import-untyped]

    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    for item in chain:
        if isinstance(item, CannotOverwriteExistingCassetteException):
            _REFUSED.add(item.cassette)
            error = _explain(item, match_on)
            for carrier in chain:  # nothing lost: the run's trace and history
                trace = getattr(carrier, "trace", None)
                if trace is not None:
                    error.attach_run(trace, getattr(carrier, "messages", None) or ())
                    break
            return error
    return None


def _explain(exc: Any, match_on: Sequence[str]) -> HarnessError:
    cassette, request = exc.cassette, exc.failed_request
    name = str(cassette._path)
    number = cassette.play_count + 1
    total = len(cassette)
    reason = getattr(exc, "reason", "")
    if reason == "cassette_not_found" or total == 0:
        return CassetteExhausted(
            f"cassette {name!r} holds no interactions; request {number} ({_endpoint(request)}) "
            "has nothing to replay. Record it (--harness-record-mode=once) or fix the name."
        )
    unplayed = [i for i in range(total) if cassette.play_counts[i] == 0]
    if not unplayed:
        return CassetteExhausted(
            f"ran past the end of cassette {name!r}: it holds {total} interaction(s), all "
            f"played; request {number} ({_endpoint(request)}) has no recording. The code "
            "under test made more requests than were recorded: re-record the cassette "
            "(--harness-record-mode=all) if that is intended."
        )
    same = [i for i in unplayed if _endpoint(cassette.data[i][0]) == _endpoint(request)]
    closest = same[0] if same else unplayed[0]
    recorded = cassette.data[closest][0]
    if _endpoint(recorded) != _endpoint(request):
        detail = f"endpoint differs: recorded {_endpoint(recorded)}, now {_endpoint(request)}"
    else:
        differences = body_differences(
            request.method, request.path, recorded.body, request.body, mode=_mode_of(match_on)
        )
        for _req, _succeeded, failed in getattr(exc, "similar_requests", None) or ():
            if _req is recorded and failed and not differences:
                differences = [f"matcher {m} failed: {msg}" for m, msg in failed]
        detail = "; ".join(differences) or "differs in a field the matchers compare"
    return CassetteMismatch(
        f"cassette {name!r}: request {number} ({_endpoint(request)}) does not match the "
        f"recording; closest recorded request is interaction {closest + 1} of {total}: "
        f"request {number}: {detail}. If the change is intended, re-record the cassette "
        "(--harness-record-mode=all); to compare less, choose match_on=['path-only']."
    )


def check_unused(cassette: Any, policy: str, *, record_mode: str) -> None:
    """Apply ``policy`` to interactions recorded but never played (replay modes only)."""
    if policy not in UNUSED_POLICIES:
        raise UsageError(
            f"unused={policy!r} is not valid; choose one of {', '.join(UNUSED_POLICIES)}"
        )
    if policy == "ignore" or record_mode not in ("none", "once") or not len(cassette):
        return
    if cassette in _REFUSED:
        return  # the refused request is the report; these are its consequence
    if record_mode == "once" and cassette.dirty:
        return  # freshly recorded
    unused = [i + 1 for i in range(len(cassette)) if cassette.play_counts[i] == 0]
    if not unused:
        return
    listed = ", ".join(f"{i} ({_endpoint(cassette.data[i - 1][0])})" for i in unused[:10])
    message = (
        f"cassette {str(cassette._path)!r}: {len(unused)} of {len(cassette)} recorded "
        f"interaction(s) were never requested: {listed}. The code under test made fewer "
        "requests than were recorded; re-record, or pass unused='ignore'."
    )
    if policy == "error":
        raise CassetteUnused(message)
    warnings.warn(message, CassetteWarning, stacklevel=3)
