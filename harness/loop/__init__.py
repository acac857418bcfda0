"""The tool loop: a sans-IO core, sync and async drivers, trace, events, strategy interface."""

from harness._deprecation import Renamed as _Renamed, deprecated_getattr as _deprecated_getattr
from harness.loop._capture import CapturedRun, RunCapture, capture_run, override_model
from harness.loop._channels import EMPTY_ERROR, EMPTY_RESULT
from harness.loop._completions import FOLLOW_UP, follow_up_source, follow_up_text
from harness.loop._continuation import (
    Continuation,
    ContinuationContext,
    ContinueUntilTool,
    ContinueWhile,
    NudgeAfterResults,
    ReAct,
)
from harness.loop._control import RETURN_DIRECT, is_return_direct, return_direct
from harness.loop._core import LoopCore, PendingCall
from harness.loop._drivers import arun, build_core, default_strategy, run
from harness.loop._events import (
    CompletionDelivered,
    CompletionLost,
    CompletionQueued,
    CompletionsAwaited,
    Event,
    IterationStarted,
    LimitReached,
    ModelResponded,
    Observer,
    ProviderDiscovered,
    RunFinished,
    StrategyWarning,
    ToolAbandoned,
    ToolCalled,
    ToolFailed,
    ToolsInjected,
    ToolsRemoved,
    UserNotified,
)
from harness.loop._model import (
    FinishReason,
    HistoryView,
    Model,
    ModelCapabilities,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    Usage,
)
from harness.loop._options import (
    LoopOptions,
    PendingCompletionsPolicy,
    RetryableToolError,
    UnknownToolPolicy,
)
from harness.loop._phases import LoopPhase
from harness.loop._result import RunResult
from harness.loop._session import Session
from harness.loop._strategy import (
    DeclaredChanges,
    InjectionContext,
    InjectionStrategy,
    StrategyChain,
    ToolsetChange,
)
from harness.loop._telemetry import METRICS, configure_metrics, record_metric
from harness.loop._tool_choice import ToolChoiceSchedule, choice_violation
from harness.loop._trace import (
    CallRecord,
    ChangeRecord,
    CompletionRecord,
    IterationRecord,
    Trace,
    TurnRecord,
)

__all__ = [
    "EMPTY_ERROR",
    "EMPTY_RESULT",
    "FOLLOW_UP",
    "METRICS",
    "RETURN_DIRECT",
    "CallRecord",
    "CapturedRun",
    "ChangeRecord",
    "CompletionDelivered",
    "CompletionLost",
    "CompletionQueued",
    "CompletionRecord",
    "CompletionsAwaited",
    "Continuation",
    "ContinuationContext",
    "ContinueUntilTool",
    "ContinueWhile",
    "DeclaredChanges",
    "Event",
    "FinishReason",
    "HistoryView",
    "InjectionContext",
    "InjectionStrategy",
    "IterationRecord",
    "IterationStarted",
    "LimitReached",
    "LoopCore",
    "LoopOptions",
    "LoopPhase",
    "Model",
    "ModelCapabilities",
    "ModelRequest",
    "ModelResponded",
    "ModelResponse",
    "ModelSettings",
    "NudgeAfterResults",
    "Observer",
    "PendingCall",
    "PendingCompletionsPolicy",
    "ProviderDiscovered",
    "ReAct",
    "RetryableToolError",
    "RunCapture",
    "RunFinished",
    "RunResult",
    "Session",
    "StrategyChain",
    "StrategyWarning",
    "ToolAbandoned",
    "ToolCalled",
    "ToolChoiceSchedule",
    "ToolFailed",
    "ToolsInjected",
    "ToolsRemoved",
    "ToolsetChange",
    "Trace",
    "TurnRecord",
    "UnknownToolPolicy",
    "Usage",
    "UserNotified",
    "arun",
    "build_core",
    "capture_run",
    "choice_violation",
    "configure_metrics",
    "default_strategy",
    "follow_up_source",
    "follow_up_text",
    "is_return_direct",
    "override_model",
    "record_metric",
    "return_direct",
    "run",
]

__getattr__ = _deprecated_getattr(
    __name__,
    {
        # one letter from harness.Phases (a strategy): the core's state has its own name
        "Phase": _Renamed(
            old="Phase", new="LoopPhase", module=__name__, since="0.2.0", removal="0.3.0"
        ),
    },
)
"""Renamed names of this package: the old spelling warns and answers the new object."""
