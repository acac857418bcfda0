"""The tool loop: a sans-IO core, sync and async drivers, trace, events, strategy interface."""

from harness.loop._capture import CapturedRun, RunCapture, capture_run, override_model
from harness.loop._channels import EMPTY_ERROR, EMPTY_RESULT
from harness.loop._control import RETURN_DIRECT, is_return_direct, return_direct
from harness.loop._core import LoopCore, PendingCall
from harness.loop._drivers import arun, build_core, default_strategy, run
from harness.loop._events import (
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
from harness.loop._options import LoopOptions, RetryableToolError, UnknownToolPolicy
from harness.loop._phases import Phase
from harness.loop._result import RunResult
from harness.loop._strategy import (
    DeclaredChanges,
    InjectionContext,
    InjectionStrategy,
    StrategyChain,
    ToolsetChange,
)
from harness.loop._telemetry import METRICS, configure_metrics, record_metric
from harness.loop._trace import CallRecord, ChangeRecord, IterationRecord, Trace

__all__ = [
    "EMPTY_ERROR",
    "EMPTY_RESULT",
    "METRICS",
    "RETURN_DIRECT",
    "CallRecord",
    "CapturedRun",
    "ChangeRecord",
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
    "Model",
    "ModelCapabilities",
    "ModelRequest",
    "ModelResponded",
    "ModelResponse",
    "ModelSettings",
    "Observer",
    "PendingCall",
    "Phase",
    "ProviderDiscovered",
    "RetryableToolError",
    "RunCapture",
    "RunFinished",
    "RunResult",
    "StrategyChain",
    "StrategyWarning",
    "ToolAbandoned",
    "ToolCalled",
    "ToolFailed",
    "ToolsInjected",
    "ToolsRemoved",
    "ToolsetChange",
    "Trace",
    "UnknownToolPolicy",
    "Usage",
    "UserNotified",
    "arun",
    "build_core",
    "capture_run",
    "configure_metrics",
    "default_strategy",
    "is_return_direct",
    "override_model",
    "record_metric",
    "return_direct",
    "run",
]
