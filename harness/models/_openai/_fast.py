"""Send wire-exact params through the SDK without its request transform.

``client.chat.completions.create(**params)`` runs the SDK's ``maybe_transform``
over every argument before posting: a walk of the whole history guided by the
params' ``TypedDict`` types, on every turn. For plain JSON values that walk is
the identity (the SDK's params types rename no keys), and it costs far more
than serialising the body. So the adapters post the body themselves, with what
the SDK's own ``create`` would use: the path, the body keys in the SDK's order,
the request options, ``cast_to`` and the stream class. Responses, streams and
errors are the SDK's own.

The body is posted as the bytes the SDK would write (``content=``): the same
encoder settings as its ``openapi_dumps``, with the history's JSON text joined
from pieces each message was encoded to once (``WireHistory``), so a turn costs
the new messages, not the whole history.

Those are learned from the installed SDK, not copied: ``create`` is called once
per params shape on a stand-in whose ``_post`` records its arguments, with
``None`` in place of each value. Whenever anything is unusual (a key the SDK
renames or drops, a value that is not plain JSON, an SDK whose ``create`` does
more than post) the request goes through ``create`` unchanged.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import typing
from collections.abc import Mapping
from typing import Any

from harness.formats._json import encode_json

__all__ = ["body_bytes", "has_aliases", "is_plain_json", "post_args", "unread"]

_OPTION_KEYS = frozenset({"extra_headers", "extra_query", "extra_body", "timeout"})
"""``create`` arguments that become request options rather than body keys."""
_MAX_PLANS = 256


@dataclasses.dataclass(frozen=True, slots=True)
class _Plan:
    path: str
    order: tuple[str, ...]
    options: Mapping[str, Any]
    cast_to: Any
    stream: Any
    stream_cls: Any


class _Posted(Exception):
    def __init__(self, path: str, arguments: dict[str, Any]) -> None:
        super().__init__(path)
        self.path = path
        self.arguments = arguments


class _Recorder:
    """Stands in for an SDK resource: records what ``create`` would post."""

    __slots__ = ()

    def _post(self, path: str, **arguments: Any) -> Any:
        raise _Posted(path, arguments)


_PLANS: dict[tuple[type, frozenset[str], Any], _Plan | None] = {}
_ALIASES: dict[type, bool] = {}


def is_plain_json(value: Any) -> bool:
    """Whether ``value`` is made only of dict/list/tuple/str/int/float/bool/None.

    For such values the SDK's request transform changes nothing (it converts
    tuples to lists, which serialise alike) and the JSON is the same.
    """
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return True
    if kind is dict:
        return all(type(key) is str and is_plain_json(item) for key, item in value.items())
    if kind is list or kind is tuple:
        return all(is_plain_json(item) for item in value)
    return False


def has_aliases(params_type: Any) -> bool:
    """Whether the SDK renames any key anywhere under ``params_type`` (a ``TypedDict``).

    The fast path relies on the transform keeping key names; a future SDK that
    aliases one turns the fast path off for that API.
    """
    if params_type not in _ALIASES:
        _ALIASES[params_type] = _aliased(params_type, set())
    return _ALIASES[params_type]


def _aliased(tp: Any, seen: set[int]) -> bool:
    if id(tp) in seen:
        return False
    seen.add(id(tp))
    for meta in getattr(tp, "__metadata__", ()):  # Annotated[...]
        if getattr(meta, "alias", None) is not None:
            return True
    if typing.is_typeddict(tp):
        try:
            hints = typing.get_type_hints(tp, include_extras=True)
        except Exception:  # unresolvable annotations: assume the worst
            return True
        return any(_aliased(hint, seen) for hint in hints.values())
    return any(_aliased(arg, seen) for arg in typing.get_args(tp))


def _probe(resource: type, params: Mapping[str, Any]) -> _Plan | None:
    placeholders = {
        key: value if key in _OPTION_KEYS or key == "stream" else None
        for key, value in params.items()
    }
    try:
        result = resource.create(_Recorder(), **placeholders)  # type: ignore[attr-defined]
        if inspect.iscoroutine(result):
            try:
                result.send(None)
            finally:
                result.close()
    except _Posted as posted:
        return _plan(posted, params)
    except Exception:  # e.g. an unknown argument: create() itself will say so
        return None
    return None


def _plan(posted: _Posted, params: Mapping[str, Any]) -> _Plan | None:
    arguments = posted.arguments
    body = arguments.get("body")
    if type(body) is not dict:
        return None
    expected = {key for key in params if key not in _OPTION_KEYS}
    if set(body) != expected:  # the SDK renamed or dropped a key
        return None
    for key, value in body.items():
        if value is not (params[key] if key == "stream" else None):
            return None
    if set(arguments) - {"body", "options", "cast_to", "stream", "stream_cls"}:
        return None
    return _Plan(
        path=posted.path,
        order=tuple(body),
        options=arguments.get("options") or {},
        cast_to=arguments.get("cast_to"),
        stream=arguments.get("stream", False),
        stream_cls=arguments.get("stream_cls"),
    )


def _posts_content(resource: Any) -> bool:
    """Whether the resource's ``_post`` (the client's ``post``) takes bytes as ``content=``."""
    post = getattr(resource, "_post", None)
    return _takes_content(getattr(post, "__func__", post))


@functools.lru_cache(maxsize=64)
def _takes_content(post: Any) -> bool:
    try:
        return "content" in inspect.signature(post).parameters
    except (TypeError, ValueError):  # not a callable with a signature
        return False


def body_bytes(
    order: tuple[str, ...], params: Mapping[str, Any], encoded: Mapping[str, str]
) -> bytes | None:
    """The JSON body the SDK would write for ``params`` (keys in ``order``), or ``None``.

    ``encoded`` holds the JSON text of some values, already encoded; the others
    are encoded here like the SDK's ``openapi_dumps`` does. ``None`` when a value
    cannot be encoded that way (the SDK then encodes it, with its own errors).
    """
    parts = []
    try:
        for key in order:
            text = encoded.get(key)
            if text is None:
                text = encode_json(params[key])
            parts.append(f"{encode_json(key)}:{text}")
    except (TypeError, ValueError, RecursionError):
        return None
    return ("{" + ",".join(parts) + "}").encode()


def post_args(
    resource: Any,
    params: Mapping[str, Any],
    *,
    trusted: frozenset[str] = frozenset(),
    params_type: Any = None,
    encoded: Mapping[str, str] | None = None,
) -> tuple[str, dict[str, Any]] | None:
    """The path and ``_post`` keyword arguments that send ``params`` like ``create`` would.

    ``trusted`` names params the caller built as plain JSON itself (the history),
    which are not walked again; every other value must be plain JSON. ``encoded``
    holds the JSON text of trusted values when known: the body is then posted as
    bytes. ``None`` means: call ``create(**params)`` instead.
    """
    if params_type is not None and has_aliases(params_type):
        return None
    for key, value in params.items():
        if key not in trusted and key not in _OPTION_KEYS and not is_plain_json(value):
            return None
    cls = type(resource)
    if _OPTION_KEYS.isdisjoint(params):
        cache_key = (cls, frozenset(params), params.get("stream"))
        if cache_key in _PLANS:
            plan = _PLANS[cache_key]
        else:
            plan = _probe(cls, params)
            if len(_PLANS) >= _MAX_PLANS:
                _PLANS.clear()
            _PLANS[cache_key] = plan
    else:  # options carry caller values: never cached
        plan = _probe(cls, params)
    if plan is None:
        return None
    content = None
    if (
        encoded is not None
        and "extra_json" not in plan.options  # merged into the body by the SDK
        and _posts_content(resource)
    ):
        content = body_bytes(plan.order, params, encoded)
    body: dict[str, Any] = (
        {"body": {key: params[key] for key in plan.order}}
        if content is None
        else {"content": content}
    )
    arguments = {
        **body,
        "options": dict(plan.options),
        "cast_to": plan.cast_to,
        "stream": plan.stream,
        "stream_cls": plan.stream_cls,
    }
    return plan.path, arguments


@functools.lru_cache(maxsize=1)
def _raw_response_header() -> str | None:
    """The request header by which the SDK's ``with_streaming_response`` asks ``_post`` for
    the answer unread, or ``None`` when the installed SDK has none."""
    try:
        constants = importlib.import_module("openai._constants")
    except ImportError:
        return None
    header = getattr(constants, "RAW_RESPONSE_HEADER", None)
    return header if isinstance(header, str) else None


def unread(arguments: Mapping[str, Any]) -> dict[str, Any] | None:
    """``_post`` arguments (from ``post_args``) that return a non-streamed answer unread, an
    ``APIResponse`` whose body the caller reads, as ``with_streaming_response`` would; or
    ``None`` (then use ``with_streaming_response.create``)."""
    header = _raw_response_header()
    if header is None:
        return None
    options = dict(arguments.get("options") or {})
    options["headers"] = {**(options.get("headers") or {}), header: "stream"}
    return {**arguments, "options": options}
