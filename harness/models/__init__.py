"""Models: the interface, scripted and callback fakes, personas, provider adapters."""

from harness._errors import StaticToolsChanged
from harness.loop import Model, ModelCapabilities, ModelRequest, ModelResponse, ModelSettings, Usage
from harness.loop._model import ToolHistoryRule
from harness.models._anthropic._codec import (
    message_body,
    message_events,
    messages_params,
    request_from_body,
    response_from_body,
    response_from_events,
    response_from_message,
    response_from_sse,
    thinking_blocks,
)
from harness.models._anthropic._model import (
    ANTHROPIC_CAPABILITIES,
    AnthropicModel,
    map_anthropic_error,
)
from harness.models._callback import CallbackModel, CallbackResult
from harness.models._capabilities import CapabilitiesOverride, StaticToolsModel, with_capabilities
from harness.models._openai._chat import (
    OPENAI_CHAT_CAPABILITIES,
    OpenAIChatModel,
    chat_params,
    chat_response_from_chunks,
    chat_response_from_completion,
)
from harness.models._openai._common import map_openai_error
from harness.models._openai._responses import (
    OPENAI_RESPONSES_CAPABILITIES,
    OpenAIResponsesModel,
    reasoning_items,
    responses_params,
    responses_response_from_events,
    responses_response_from_response,
)
from harness.models._personas._base import ArgumentOverrides, Persona, Plan
from harness.models._personas._explorer import Explorer
from harness.models._personas._goal import DEFAULT_HINTS, GoalDirected
from harness.models._personas._record import Decision, ReplayModel
from harness.models._personas._state import RunState
from harness.models._personas._weak import WeakBehavior
from harness.models._scripted._model import ScriptedModel
from harness.models._scripted._steps import (
    CallsStep,
    CallStep,
    ErrorKind,
    ExpectMessage,
    ExpectOffered,
    OutputStep,
    RaiseStep,
    RefuseStep,
    ReplyStep,
    Step,
    call,
    calls,
    expect_message,
    expect_offered,
    output,
    raise_error,
    refuse,
    reply,
)
from harness.models._scripted._steps_data import step_from_data, steps_from_data
from harness.models._tool_history import (
    ToolHistoryError,
    ToolHistoryPolicy,
    apply_tool_history,
    missing_tools,
)
from harness.models._wire._anthropic_client import (
    FAKE_ANTHROPIC_BASE_URL,
    fake_anthropic_client,
    fake_async_anthropic_client,
)
from harness.models._wire._app import RecordedRequest, WireApp, WireReply
from harness.models._wire._server import WireServer
from harness.models._wire._transport import (
    FAKE_BASE_URL,
    OpenAIWireTransport,
    fake_async_openai_client,
    fake_openai_client,
)

__all__ = [
    "ANTHROPIC_CAPABILITIES",
    "DEFAULT_HINTS",
    "FAKE_ANTHROPIC_BASE_URL",
    "FAKE_BASE_URL",
    "OPENAI_CHAT_CAPABILITIES",
    "OPENAI_RESPONSES_CAPABILITIES",
    "AnthropicModel",
    "ArgumentOverrides",
    "CallStep",
    "CallbackModel",
    "CallbackResult",
    "CallsStep",
    "CapabilitiesOverride",
    "Decision",
    "ErrorKind",
    "ExpectMessage",
    "ExpectOffered",
    "Explorer",
    "GoalDirected",
    "Model",
    "ModelCapabilities",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "OpenAIWireTransport",
    "OutputStep",
    "Persona",
    "Plan",
    "RaiseStep",
    "RecordedRequest",
    "RefuseStep",
    "ReplayModel",
    "ReplyStep",
    "RunState",
    "ScriptedModel",
    "StaticToolsChanged",
    "StaticToolsModel",
    "Step",
    "ToolHistoryError",
    "ToolHistoryPolicy",
    "ToolHistoryRule",
    "Usage",
    "WeakBehavior",
    "WireApp",
    "WireReply",
    "WireServer",
    "apply_tool_history",
    "call",
    "calls",
    "chat_params",
    "chat_response_from_chunks",
    "chat_response_from_completion",
    "expect_message",
    "expect_offered",
    "fake_anthropic_client",
    "fake_async_anthropic_client",
    "fake_async_openai_client",
    "fake_openai_client",
    "map_anthropic_error",
    "map_openai_error",
    "message_body",
    "message_events",
    "messages_params",
    "missing_tools",
    "output",
    "raise_error",
    "reasoning_items",
    "refuse",
    "reply",
    "request_from_body",
    "response_from_body",
    "response_from_events",
    "response_from_message",
    "response_from_sse",
    "responses_params",
    "responses_response_from_events",
    "responses_response_from_response",
    "step_from_data",
    "steps_from_data",
    "thinking_blocks",
    "with_capabilities",
]
