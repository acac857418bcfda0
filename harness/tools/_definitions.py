"""The neutral tool model every layer speaks: ``ToolDefinition`` and ``ToolChoice``.

A tool travels through the loop as a ``ToolDefinition`` (what the model is offered) and
the request's ``tool_choice`` as a ``ToolChoice``; each wire format module of
``harness.formats`` turns them into its own shape and back, so nothing here knows a
provider's shape. Fields a format has no place for are handled by that format (see "The
formats layer" in ``docs/architecture.md``): for example ``cache_control`` is a hint the
OpenAI formats do not send.

``to_data`` / ``from_data`` are the plain-data form (reports, scenario files, cassette
conversion, ``--json`` output). ``provider_extra`` is the escape hatch: keys for one
format only, keyed by the format's name (``"openai-chat"``, ``"openai-responses"``,
``"anthropic-messages"``), merged into that format's entry when encoding and filled with
the keys a decoder did not map.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Literal, get_args

from harness._deprecated_choices import provider_choice_data
from harness._deprecation import ToolDictReads
from harness._errors import UsageError

__all__ = ["SearchMode", "ToolChoice", "ToolChoiceMode", "ToolDefinition"]

ToolChoiceMode = Literal["auto", "none", "required", "tool"]
"""What the model may do: ``auto`` (answer or call), ``none`` (answer only), ``required``
(call some tool), ``tool`` (call the tool ``name``)."""

SearchMode = Literal["regex", "bm25", "hosted", "client"]
"""How a tool-search tool searches: ``regex`` and ``bm25`` are run by the provider with
that algorithm, ``hosted`` by the provider its own way, ``client`` by the client: the
model calls it like a function and the answer reveals tools. Each format maps a mode to
its API's search tool (``harness.formats.anthropic_messages._native.SEARCH_TOOLS``,
``harness.formats.openai_responses._native``)."""

_MODES: tuple[str, ...] = get_args(ToolChoiceMode)
_DATA_KEYS = frozenset({"mode", "name", "allowed"})
"""The keys of ``ToolChoice.to_data``."""
_SEARCH_MODES: tuple[str, ...] = get_args(SearchMode)
_NO_EXTRA: Mapping[str, Mapping[str, Any]] = MappingProxyType({})


def _no_parameters() -> dict[str, Any]:
    """The parameters of a tool that takes no arguments (a fresh dict each time)."""
    return {"type": "object", "properties": {}}


def _check_extra(owner: str, extra: Any) -> None:
    if not isinstance(extra, Mapping) or not all(
        isinstance(k, str) and isinstance(v, Mapping) for k, v in extra.items()
    ):
        raise UsageError(
            f"{owner}: provider_extra must map a format name to the keys for that format, "
            f'e.g. {{"anthropic-messages": {{"input_examples": [...]}}}}; got {extra!r}'
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ToolDefinition(ToolDictReads):
    """One tool as the model is offered it, in no provider's shape."""

    name: str
    """The model-visible name."""
    description: str | None = None
    """What the tool does, as the model reads it (``None``: no description is sent)."""
    parameters: Mapping[str, Any] = dataclasses.field(default_factory=_no_parameters)
    """The JSON Schema of the arguments (an object schema)."""
    strict: bool | None = None
    """Ask the provider to enforce the schema exactly (``None``: the provider's default)."""
    defer_loading: bool = False
    """Declared but not loaded: the model finds it through a tool search before calling it
    (OpenAI Responses and Anthropic Messages; Chat Completions has no deferred tools)."""
    namespace: str | None = None
    """The group the tool belongs to (OpenAI Responses ``namespace`` tools)."""
    search: SearchMode | None = None
    """Set on a tool-search tool: how it searches the deferred tools (``None``: an
    ordinary function tool). A provider-run search (``regex``, ``bm25``, ``hosted``) is
    the provider's tool, never called by the loop; a ``client`` search is a function
    whose result reveals tools (``ToolResult.reveals``)."""
    cache_control: Mapping[str, Any] | None = None
    """A prompt-cache breakpoint after this tool (Anthropic's ``cache_control``); formats
    without per-tool cache hints leave it out."""
    provider_extra: Mapping[str, Mapping[str, Any]] = dataclasses.field(
        default_factory=lambda: _NO_EXTRA
    )
    """Keys for one format only, by format name; merged into that format's tool entry."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise UsageError(f"ToolDefinition needs a non-empty name, got {self.name!r}")
        where = f"ToolDefinition {self.name!r}"
        if self.description is not None and not isinstance(self.description, str):
            raise UsageError(f"{where}: description must be a string or None")
        if not isinstance(self.parameters, Mapping):
            raise UsageError(
                f"{where}: parameters must be a JSON Schema object (a mapping), "
                f"got {type(self.parameters).__name__}"
            )
        for field in ("strict",):
            value = getattr(self, field)
            if value is not None and not isinstance(value, bool):
                raise UsageError(f"{where}: {field} must be True, False or None, got {value!r}")
        if not isinstance(self.defer_loading, bool):
            raise UsageError(f"{where}: defer_loading must be a bool, got {self.defer_loading!r}")
        if self.namespace is not None and (
            not isinstance(self.namespace, str) or not self.namespace
        ):
            raise UsageError(f"{where}: namespace must be a non-empty string or None")
        if self.search is not None and self.search not in _SEARCH_MODES:
            raise UsageError(
                f"{where}: search must be one of {', '.join(map(repr, _SEARCH_MODES))} or None, "
                f"got {self.search!r}"
            )
        if self.search is not None and self.defer_loading:
            raise UsageError(
                f"{where}: a tool-search tool cannot be deferred (defer_loading=True); the "
                "model needs it to find the deferred tools"
            )
        if self.cache_control is not None and not isinstance(self.cache_control, Mapping):
            raise UsageError(f"{where}: cache_control must be a mapping or None")
        if self.provider_extra is not _NO_EXTRA:
            _check_extra(where, self.provider_extra)

    def extra_for(self, format_name: str) -> Mapping[str, Any]:
        """The ``provider_extra`` keys for ``format_name`` (empty when there are none)."""
        return self.provider_extra.get(format_name, _NO_EXTRA)

    def to_data(self) -> dict[str, Any]:
        """Plain JSON data: ``name``, ``description``, ``parameters`` and every field that
        differs from its default (for reports, scenario files and ``--json`` output)."""
        data: dict[str, Any] = {"name": self.name}
        if self.description is not None:
            data["description"] = self.description
        data["parameters"] = _plain(self.parameters)
        for field in ("strict", "namespace", "search", "cache_control"):
            value = getattr(self, field)
            if value is not None:
                data[field] = _plain(value)
        if self.defer_loading:
            data["defer_loading"] = True
        if self.provider_extra:
            data["provider_extra"] = _plain(self.provider_extra)
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> ToolDefinition:
        """The definition ``to_data`` wrote (``from_data(d.to_data()) == d``); a key it
        does not write is a ``UsageError`` naming it."""
        if not isinstance(data, Mapping):
            raise UsageError(f"a tool definition must be a mapping, got {data!r}")
        unknown = sorted(str(k) for k in data if k not in _DEFINITION_KEYS)
        if unknown:
            raise UsageError(
                f"tool definition {data.get('name')!r}: unknown key(s) {', '.join(unknown)}; "
                f"the keys are {', '.join(_DEFINITION_KEYS)}"
            )
        return cls(**{key: data[key] for key in _DEFINITION_KEYS if key in data})

    @property
    def is_search(self) -> bool:
        """True for a tool-search tool (``search`` is set)."""
        return self.search is not None

    @property
    def is_hosted(self) -> bool:
        """True for a search the provider runs (``regex``, ``bm25``, ``hosted``): the
        loop never calls it."""
        return self.search is not None and self.search != "client"


_DEFINITION_KEYS = tuple(f.name for f in dataclasses.fields(ToolDefinition))


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ToolChoice:
    """Which tools the model may or must call on a request, in no provider's shape.

    Build it with the class methods: ``ToolChoice.auto()``, ``.none()``,
    ``.required()``, ``.tool("name")``, ``.allowed_tools(["a", "b"], mode="required")``; or
    from the loop's settings with ``ToolChoice.of("required")``.
    """

    mode: ToolChoiceMode = "auto"
    """``auto``, ``none``, ``required`` or ``tool``."""
    name: str | None = None
    """The tool the model must call (``mode="tool"``)."""
    allowed: tuple[str, ...] | None = None
    """Only these tools may be called (``mode`` ``auto`` or ``required``), while every
    declared tool stays in the request (OpenAI's ``allowed_tools``)."""
    provider_extra: Mapping[str, Mapping[str, Any]] = dataclasses.field(
        default_factory=lambda: _NO_EXTRA
    )
    """Keys for one format only, by format name (e.g. a hosted tool forced by type)."""

    def __post_init__(self) -> None:
        if self.mode not in _MODES:
            raise UsageError(
                f"ToolChoice mode must be one of {', '.join(map(repr, _MODES))}, got {self.mode!r}"
            )
        if self.mode == "tool":
            if self.name is None and not self.provider_extra:
                raise UsageError('ToolChoice(mode="tool") needs the name of the tool to call')
        elif self.name is not None:
            raise UsageError(f"ToolChoice name={self.name!r} needs mode='tool', got {self.mode!r}")
        if self.name is not None and (not isinstance(self.name, str) or not self.name):
            raise UsageError(f"ToolChoice name must be a non-empty string, got {self.name!r}")
        if self.allowed is not None:
            if self.mode not in ("auto", "required"):
                raise UsageError(
                    f"ToolChoice allowed=... needs mode 'auto' or 'required', got {self.mode!r}"
                )
            allowed = tuple(self.allowed)
            if not allowed or not all(isinstance(n, str) and n for n in allowed):
                raise UsageError(
                    "ToolChoice allowed must be a non-empty list of tool names, "
                    f"got {self.allowed!r}"
                )
            object.__setattr__(self, "allowed", allowed)
        if self.provider_extra is not _NO_EXTRA:
            _check_extra("ToolChoice", self.provider_extra)

    @classmethod
    def auto(cls) -> ToolChoice:
        """The model decides: answer or call tools."""
        return _AUTO

    @classmethod
    def none(cls) -> ToolChoice:
        """The model must answer with text (tools stay declared)."""
        return _NONE

    @classmethod
    def required(cls) -> ToolChoice:
        """The model must call at least one tool."""
        return _REQUIRED

    @classmethod
    def tool(cls, name: str) -> ToolChoice:
        """The model must call the tool ``name``."""
        return cls(mode="tool", name=name)

    @classmethod
    def allowed_tools(
        cls, names: Iterable[str], *, mode: Literal["auto", "required"] = "auto"
    ) -> ToolChoice:
        """Only ``names`` may be called (``mode="required"``: one of them must be)."""
        if isinstance(names, str):
            raise UsageError(f"ToolChoice.allowed_tools takes a list of names, got {names!r}")
        return cls(mode=mode, allowed=tuple(names))

    @classmethod
    def of(cls, value: ToolChoice | str | Mapping[str, Any] | None) -> ToolChoice | None:
        """``value`` as a ``ToolChoice``: ``auto`` / ``none`` / ``required`` (``any`` too) or a
        tool name as a string, a ``ToolChoice``, its plain data (``from_data``), or ``None``.

        A provider's ``tool_choice`` dict is that provider's shape: its format reads it
        (``tool_choice_from_param`` of ``harness.formats.openai_chat``,
        ``openai_responses`` or ``anthropic_messages``). The dicts read here before 0.2.0
        still are, with a ``DeprecationWarning``, until 0.3.0 (``harness._deprecated_choices``).
        """
        if value is None or isinstance(value, ToolChoice):
            return value
        if isinstance(value, str):
            if not value:
                raise UsageError(
                    "tool_choice must be 'auto', 'none', 'required' or a tool name, got ''"
                )
            known = _BY_WORD.get(value)
            return known if known is not None else cls.tool(value)
        if isinstance(value, Mapping):
            if not set(value) <= _DATA_KEYS:
                data = provider_choice_data(value)
                if data is not None:
                    return cls.from_data(data)
            return cls.from_data(value)
        raise UsageError(
            f"tool_choice must be 'auto', 'none', 'required', a tool name or a "
            f"harness.ToolChoice, got {type(value).__name__}: {value!r}"
        )

    def to_data(self) -> dict[str, Any]:
        """``{"mode": ..., "allowed": [...] | None, "name": ... | None}`` (plain JSON data;
        ``provider_extra`` is a format's business and is left out)."""
        return {
            "mode": self.mode,
            "allowed": list(self.allowed) if self.allowed is not None else None,
            "name": self.name,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> ToolChoice:
        """The choice ``to_data`` wrote; ``mode`` defaults to ``auto`` and a missing
        ``name`` or ``allowed`` to ``None``, so ``{"allowed": ["a", "b"]}`` and
        ``{"mode": "tool", "name": "f"}`` are choices too."""
        if not isinstance(data, Mapping) or not set(data) <= _DATA_KEYS:
            raise UsageError(
                f"tool_choice {data!r} is not a choice the harness reads: give "
                "{mode: auto|none|required|tool, name: ..., allowed: [...]} or use "
                "harness.ToolChoice (.auto(), .none(), .required(), .tool(name), "
                ".allowed_tools(names, mode=...)); a provider's tool_choice dict is read by "
                "its format (harness.formats.openai_chat.tool_choice_from_param and the like)"
            )
        allowed = data.get("allowed")
        if allowed is not None and not isinstance(allowed, (list, tuple)):
            raise UsageError(f"tool_choice allowed takes a list of names, got {allowed!r}")
        return cls(
            mode=data.get("mode", "auto"),
            name=data.get("name"),
            allowed=None if allowed is None else tuple(allowed),
        )


_AUTO = ToolChoice(mode="auto")
_NONE = ToolChoice(mode="none")
_REQUIRED = ToolChoice(mode="required")
_BY_WORD = {"auto": _AUTO, "none": _NONE, "required": _REQUIRED, "any": _REQUIRED}
