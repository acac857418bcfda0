"""The exception hierarchy.

```
HarnessError
├── UsageError                  the developer's mistake (bad definition, bad option)
│   ├── ToolDefinitionError     a function/class cannot become a tool
│   ├── InvalidToolName         a name outside ^[a-zA-Z0-9_-]{1,64}$
│   ├── DuplicateToolName       two tools with one name in a toolset
│   ├── InvalidToolProvider     a @tool_provider class or instance is unusable
│   ├── FacadeError             an unfolding facade is unusable (cycle, bad selector result)
│   ├── NetworkRefused          a test reached for the real network (pytest plugin)
│   ├── CassetteError           a cassette cannot be used (root of every cassette error)
│   │   ├── CassetteMismatch    a request differs from the recorded one
│   │   ├── CassetteExhausted   a request came after every recording was played
│   │   └── CassetteUnused      recorded interactions no request used
│   ├── TraceFileError          an OpenTelemetry trace file cannot be read (names the span)
│   ├── UnencodableText         a request holds text no provider accepts (a lone surrogate)
│   ├── ScenarioError           a scenario file cannot be loaded
│   ├── ScriptError             a scripted model's script does not fit the run
│   └── CompletionError         an async tool's completion callback was misused
│       └── LateCompletion      ...called after its call was settled (the run ended: lost)
├── StrategyError               a strategy raised while the loop consulted it
├── LoopSignal                  control flow raised inside a tool: ends the run, never a result
│   └── RestartRequired         the run must be restarted (the model cannot take new tools)
│       └── VisibilityExpansionRequired   prompt sections must be re-rendered in full
├── ModelBehaviorError          the model misbehaved in a way the policy refuses
│   ├── ToolNotFound            the model called a tool that is not offered
│   └── OutputValidationError   structured output still invalid after retries
├── RunLimitError               a limit ended the run
│   ├── MaxIterationsExceeded
│   └── InjectionLimitExceeded
└── ProviderError               the model provider failed (status, retry-after, code)
    ├── RateLimited             429: too many requests (retry after ``retry_after``)
    ├── ProviderTimeout         the request timed out before an answer
    ├── ContextLengthExceeded   the request was too long for the model's context window
    ├── MalformedResponse       the answer cannot be read (not JSON, wrong shape, too big)
    └── StaticToolsChanged      a static-tools provider got another tool list mid-session
```

Warnings (``HarnessWarning``, a ``UserWarning``) flag definitions that work but are
probably wrong, e.g. ``UnreachableStateWarning`` for a state machine state no
transition leads to. ``CassetteWarning`` (a ``UserWarning``) reports a cassette whose
recordings a test did not all use.

Every class here reports the package users import it from as its ``__module__``
(``harness.ScriptError``, ``harness.cassettes.CassetteMismatch``), so tracebacks
and reprs never show this private module.

Errors raised out of a run carry the ``trace`` and ``messages`` recorded so far,
so nothing is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness._names import did_you_mean, format_names

__all__ = [
    "CassetteError",
    "CassetteExhausted",
    "CassetteMismatch",
    "CassetteUnused",
    "CassetteWarning",
    "CompletionError",
    "ContextLengthExceeded",
    "DuplicateToolName",
    "FacadeError",
    "HarnessError",
    "HarnessWarning",
    "InjectionLimitExceeded",
    "InvalidToolName",
    "InvalidToolProvider",
    "LateCompletion",
    "LoopSignal",
    "MalformedResponse",
    "MaxIterationsExceeded",
    "ModelBehaviorError",
    "NetworkRefused",
    "OutputValidationError",
    "ProviderError",
    "ProviderTimeout",
    "RateLimited",
    "RestartRequired",
    "RunLimitError",
    "ScenarioError",
    "ScriptError",
    "SettingOverridden",
    "StaticToolsChanged",
    "StrategyError",
    "ToolDefinitionError",
    "ToolNotFound",
    "TraceFileError",
    "UnencodableText",
    "UnreachableStateWarning",
    "UsageError",
    "VisibilityExpansionRequired",
]


class HarnessError(Exception):
    """Root of every error the harness raises on purpose."""

    trace: Any = None
    """The run's trace up to the error (a ``harness.loop.Trace``), when raised from a run."""
    messages: Sequence[Any] | None = None
    """The message history up to the error, when raised from a run."""
    state: dict[str, Any] | None = None
    """The run's shared state (blackboard) when the error ended it, as ``RunResult.state``
    is for a finished run (the agent's world, when the run was given one)."""

    def attach_run(
        self, trace: Any, messages: Sequence[Any], state: dict[str, Any] | None = None
    ) -> None:
        """Record the run so callers can inspect what happened before the error."""
        if self.trace is None:
            self.trace = trace
        if self.messages is None:
            self.messages = list(messages)
        if self.state is None:
            self.state = state


class UsageError(HarnessError):
    """The developer used the harness wrongly; the message says how to fix it."""


class ToolDefinitionError(UsageError):
    """A function, method or schema cannot be turned into a tool.

    All problems found in one definition are reported together.
    """

    def __init__(self, target: str, problems: Sequence[str]) -> None:
        self.target = target
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"cannot make a tool from {target}:\n{lines}")


class InvalidToolName(UsageError):
    """A tool name that providers would reject."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"invalid tool name {name!r}: names must match ^[a-zA-Z0-9_-]{{1,64}}$ "
            "(letters, digits, '_' or '-', 1 to 64 characters); rename the tool"
        )


class DuplicateToolName(UsageError):
    """Two different tools share one name in a toolset."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"a tool named {name!r} is already in the toolset; give one of them another "
            "name (llm_tool(name=...)) or remove the first before adding the second"
        )


class InvalidToolProvider(UsageError):
    """A ``@tool_provider`` class or one of its instances cannot expose tools.

    ``provider_class`` is the class at fault (``None`` when the decorated target is not
    a class); ``reason`` is a stable code: ``not_a_class``, ``no_tool_methods``,
    ``bad_prefix``, ``bad_id_attr``, ``missing_id``, ``none_id``, ``bad_id_type``,
    ``empty_id`` or ``name_collision``.
    """

    def __init__(
        self, message: str, *, provider_class: type | None = None, reason: str = ""
    ) -> None:
        self.provider_class = provider_class
        self.reason = reason
        super().__init__(message)


class FacadeError(UsageError):
    """An unfolding facade cannot be built or expanded: a cycle in nested facades, a
    selector that raised or returned duplicate names."""


class ScenarioError(UsageError):
    """A scenario file is malformed or refers to something that does not exist."""


class ScriptError(UsageError):
    """A scripted model's steps do not fit what happened in the run."""


class CompletionError(UsageError):
    """An async tool's completion callback (``CallContext.completion``) was misused: called
    twice, called with a value that cannot be a result, or called outside a run.

    ``call_id`` and ``tool_name`` name the call the callback belongs to ("" outside a run).
    """

    def __init__(self, message: str, *, call_id: str = "", tool_name: str = "") -> None:
        super().__init__(message)
        self.call_id = call_id
        self.tool_name = tool_name


class LateCompletion(CompletionError):
    """The completion came after its call was settled: the run ended and recorded the call
    as lost (``reason`` says why, e.g. ``deadline`` or ``run_ended``). Nothing is delivered;
    check ``Completion.is_open`` first to skip the work instead."""

    def __init__(self, message: str, *, call_id: str, tool_name: str, reason: str) -> None:
        super().__init__(message, call_id=call_id, tool_name=tool_name)
        self.reason = reason


class NetworkRefused(UsageError, ConnectionRefusedError):
    """A test tried to open a real outbound connection while the pytest plugin denies it.

    Also a ``ConnectionRefusedError``, so socket code cleans up as for any refusal.
    """

    def __init__(self, host: str, test: str | None, how: str) -> None:
        self.host = host
        self.test = test
        where = f" in test {test}" if test else ""
        super().__init__(
            f"real network access to {host!r} refused{where}: harness tests must not reach the "
            f"network (loopback is allowed). {how}"
        )


class CassetteError(UsageError):
    """A cassette cannot be used, the root of every cassette error: a file that is
    unreadable, malformed, truncated or hostile (too large, an alias or gzip bomb), empty
    or junk in a record mode that would silently re-record it, or shared unsafely; and,
    below it, a recording that does not fit the run. The message names the file
    (``path``) and, when one is at fault, the interaction (``index``, 0-based)."""

    def __init__(self, message: str, *, path: str = "", index: int | None = None) -> None:
        self.path = path
        self.index = index
        super().__init__(message)


class CassetteMismatch(CassetteError):
    """A request differs from the recorded one: names the cassette, the request number and
    the closest recorded request, with a readable diff."""


class CassetteExhausted(CassetteError):
    """A request was made after every recorded interaction was played."""


class CassetteUnused(CassetteError):
    """A test ended with recorded interactions that no request used."""


class TraceFileError(UsageError):
    """An OpenTelemetry trace file (or span list) cannot be read: not OTLP JSON, too large,
    nested too deeply, a span of the wrong shape, parent ids that form a cycle. The message
    names the file (``path``) and, when one is at fault, the span (``span``: its id, else
    where it sits in the file)."""

    def __init__(self, message: str, *, path: str = "", span: str | None = None) -> None:
        self.path = path
        self.span = span
        super().__init__(message)


class UnencodableText(UsageError):
    """A text the request would carry is not valid Unicode (a lone surrogate such as
    ``"\\ud800"``, e.g. from bytes decoded with ``errors="surrogateescape"``): no provider
    accepts it, and the SDKs fail to encode it. ``where`` names the message or field."""

    def __init__(self, message: str, *, where: str = "") -> None:
        self.where = where
        super().__init__(message)


class StrategyError(HarnessError):
    """An injection strategy raised an unexpected exception (kept as ``__cause__``)."""


class LoopSignal(HarnessError):
    """Control flow raised inside a tool, meant for the loop (or its caller), not the model.

    Subclass it for your own signals (stop, hand off, escalate). A tool that raises one
    does not get an error result the model reads: the loop records every call of the
    turn (the signalling call's result says the run was interrupted), ends the run and
    raises the signal out of ``run``/``arun`` with ``trace`` and ``messages`` attached.
    It is never retried. An agent tool re-raises a signal from its nested run, so a
    signal crosses any depth of nested agents.
    """

    def attach_run(
        self, trace: Any, messages: Sequence[Any], state: dict[str, Any] | None = None
    ) -> None:
        """Record the run the signal ends; a signal crossing nested agents ends up with the
        outermost run's trace (the nested run's is in that trace's ``children``)."""
        self.trace = trace
        self.messages = list(messages)
        self.state = state


class RestartRequired(LoopSignal):
    """The run cannot continue as is and must be evaluated again from the start.

    Raised for models that do not accept a new tool list mid-conversation; an outer
    loop (e.g. ``harness.injection.run_with_sections``) catches it and restarts.
    """


class VisibilityExpansionRequired(RestartRequired):
    """Prompt sections must be shown in full, which the model can only get by a restart.

    ``requested_overrides`` (also ``overrides``) maps section keys to the visibility they
    need (``"full"``); ``reason`` says why; ``section_keys`` lists the sections. The outer
    loop persists the overrides in session state and re-renders the prompt.
    """

    def __init__(
        self, *, overrides: dict[str, str], reason: str, section_keys: Sequence[str]
    ) -> None:
        self.overrides = dict(overrides)
        self.requested_overrides = self.overrides
        """The visibility each section needs (``{key: "full"}``); same dict as ``overrides``."""
        self.reason = reason
        self.section_keys = tuple(section_keys)
        super().__init__(
            f"sections {list(self.section_keys)!r} must be shown in full ({reason}); the model "
            "does not support dynamic tools, so the run must restart with the re-rendered "
            "prompt: use run_with_sections()/arun_with_sections() to restart automatically"
        )


class ModelBehaviorError(HarnessError):
    """The model did something the configured policy refuses."""


class ToolNotFound(ModelBehaviorError):
    """The model called a tool that is not offered at this turn."""

    def __init__(self, name: str, offered: Sequence[str]) -> None:
        self.name = name
        self.offered = tuple(offered)
        super().__init__(
            f"the model called unknown tool {name!r}{did_you_mean(name, self.offered)}; "
            f"offered tools: {format_names(self.offered, quote=False)}"
        )


class OutputValidationError(ModelBehaviorError):
    """The final answer did not validate against the output type after all retries."""


class RunLimitError(HarnessError):
    """A configured limit ended the run."""


class MaxIterationsExceeded(RunLimitError):
    """The loop reached ``max_iterations`` without a final answer."""

    def __init__(self, max_iterations: int) -> None:
        self.max_iterations = max_iterations
        super().__init__(
            f"the run reached max_iterations={max_iterations} without a final answer; "
            "raise max_iterations or check the trace for a loop"
        )


class InjectionLimitExceeded(RunLimitError):
    """An injection strategy hit one of its limits with ``on_limit="raise"``."""


class ProviderError(HarnessError):
    """The model provider failed: HTTP status, retry-after and the provider's message."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        code: str | None = None,
        retryable: bool | None = None,
    ) -> None:
        self.status = status
        self.retry_after = retry_after
        self.code = code
        self.retryable = (
            retryable
            if retryable is not None
            else (status is not None and (status == 429 or status >= 500))
        )
        super().__init__(message)


class RateLimited(ProviderError):
    """The provider answered 429: too many requests; wait ``retry_after`` seconds."""


class ProviderTimeout(ProviderError):
    """The request to the provider timed out (no HTTP status); retryable by default."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        code: str | None = "timeout",
        retryable: bool | None = True,
    ) -> None:
        super().__init__(
            message, status=status, retry_after=retry_after, code=code, retryable=retryable
        )


class ContextLengthExceeded(ProviderError):
    """The request did not fit the model's context window (HTTP 400, not retryable)."""


class MalformedResponse(ProviderError):
    """The provider answered 200 with a body the harness cannot read: not JSON (empty or
    truncated), a field of the wrong shape, or larger than the adapter's limit once
    decompressed. ``code`` is ``"malformed_response"``; not retryable by default."""

    def __init__(self, message: str, **kwargs: Any) -> None:
        kwargs.setdefault("code", "malformed_response")
        super().__init__(message, **kwargs)


class HarnessWarning(UserWarning):
    """Base of the warnings the harness issues (a definition that works but looks wrong)."""


class UnreachableStateWarning(HarnessWarning):
    """A state machine has states that no transition leads to from the initial state."""


class CassetteWarning(UserWarning):
    """A cassette was not fully used (``unused="warn"``)."""


class SettingOverridden(HarnessWarning):
    """The command line overrode a setting a test's marker set, for this run (pytest plugin).

    Intended when re-recording (``--harness-record-mode=all``); under
    ``filterwarnings = error`` silence it with ``ignore::harness.SettingOverridden``.
    """


class StaticToolsChanged(ProviderError):
    """A provider that configures tools once per session was sent another tool list."""


_SUBPACKAGE_ONLY = {
    "CassetteWarning": "harness.cassettes",
    "CassetteExhausted": "harness.cassettes",
    "CassetteMismatch": "harness.cassettes",
    "CassetteUnused": "harness.cassettes",
}
"""Classes exported by a subpackage only; every other class here is exported by ``harness``."""

for _name in __all__:  # tracebacks say harness.ScriptError, not harness._errors.ScriptError
    globals()[_name].__module__ = _SUBPACKAGE_ONLY.get(_name, "harness")
del _name
