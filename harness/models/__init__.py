"""Models: the interface, scripted and callback fakes, personas, provider adapters.

Names are imported lazily on first use (PEP 562): ``import harness.models`` does not
import the provider SDKs or httpx2, which are extras (``harness._extras``).
"""

from __future__ import annotations

import typing

from harness._lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:  # the same names as _LAZY, for type checkers (tests/test_public_api.py)
    from harness._errors import (
        StaticToolsChanged as StaticToolsChanged,
    )
    from harness.loop import (
        Model as Model,
        ModelCapabilities as ModelCapabilities,
        ModelRequest as ModelRequest,
        ModelResponse as ModelResponse,
        ModelSettings as ModelSettings,
        Usage as Usage,
    )
    from harness.loop._model import (
        ToolHistoryRule as ToolHistoryRule,
    )
    from harness.models._anthropic._model import (
        ANTHROPIC_CAPABILITIES as ANTHROPIC_CAPABILITIES,
        AnthropicModel as AnthropicModel,
        map_anthropic_error as map_anthropic_error,
    )
    from harness.models._callback import (
        CallbackModel as CallbackModel,
        CallbackResult as CallbackResult,
    )
    from harness.models._capabilities import (
        CapabilitiesOverride as CapabilitiesOverride,
        StaticToolsModel as StaticToolsModel,
        with_capabilities as with_capabilities,
    )
    from harness.models._openai._chat import (
        OPENAI_CHAT_CAPABILITIES as OPENAI_CHAT_CAPABILITIES,
        OpenAIChatModel as OpenAIChatModel,
    )
    from harness.models._openai._common import (
        map_openai_error as map_openai_error,
    )
    from harness.models._openai._responses import (
        OPENAI_RESPONSES_CAPABILITIES as OPENAI_RESPONSES_CAPABILITIES,
        OpenAIResponsesModel as OpenAIResponsesModel,
    )
    from harness.models._personas._base import (
        ArgumentOverrides as ArgumentOverrides,
        Persona as Persona,
        Plan as Plan,
    )
    from harness.models._personas._explorer import (
        Explorer as Explorer,
    )
    from harness.models._personas._goal import (
        DEFAULT_HINTS as DEFAULT_HINTS,
        GoalDirected as GoalDirected,
    )
    from harness.models._personas._record import (
        Decision as Decision,
        ReplayModel as ReplayModel,
    )
    from harness.models._personas._state import (
        RunState as RunState,
    )
    from harness.models._personas._weak import (
        WeakBehavior as WeakBehavior,
    )
    from harness.models._scripted._model import (
        ScriptedModel as ScriptedModel,
    )
    from harness.models._scripted._steps import (
        CallsStep as CallsStep,
        CallStep as CallStep,
        ErrorKind as ErrorKind,
        ExpectMessage as ExpectMessage,
        ExpectOffered as ExpectOffered,
        OutputStep as OutputStep,
        RaiseStep as RaiseStep,
        RefuseStep as RefuseStep,
        ReplyStep as ReplyStep,
        SearchStep as SearchStep,
        Step as Step,
        call as call,
        calls as calls,
        expect_message as expect_message,
        expect_offered as expect_offered,
        output as output,
        raise_error as raise_error,
        refuse as refuse,
        reply as reply,
        search as search,
    )
    from harness.models._scripted._steps_data import (
        step_from_data as step_from_data,
        steps_from_data as steps_from_data,
    )
    from harness.models._tool_history import (
        ToolHistoryError as ToolHistoryError,
        ToolHistoryPolicy as ToolHistoryPolicy,
        apply_tool_history as apply_tool_history,
        missing_tools as missing_tools,
    )
    from harness.models._wire._anthropic_client import (
        FAKE_ANTHROPIC_BASE_URL as FAKE_ANTHROPIC_BASE_URL,
        fake_anthropic_client as fake_anthropic_client,
        fake_async_anthropic_client as fake_async_anthropic_client,
    )
    from harness.models._wire._app import (
        RecordedRequest as RecordedRequest,
        WireApp as WireApp,
        WireReply as WireReply,
    )
    from harness.models._wire._server import (
        WireServer as WireServer,
    )
    from harness.models._wire._transport import (
        FAKE_BASE_URL as FAKE_BASE_URL,
        OpenAIWireTransport as OpenAIWireTransport,
        fake_async_openai_client as fake_async_openai_client,
        fake_openai_client as fake_openai_client,
    )

_LAZY: dict[str, str] = {
    "StaticToolsChanged": "harness._errors",
    "Model": "harness.loop",
    "ModelCapabilities": "harness.loop",
    "ModelRequest": "harness.loop",
    "ModelResponse": "harness.loop",
    "ModelSettings": "harness.loop",
    "Usage": "harness.loop",
    "ToolHistoryRule": "harness.loop._model",
    "ANTHROPIC_CAPABILITIES": "harness.models._anthropic._model",
    "AnthropicModel": "harness.models._anthropic._model",
    "map_anthropic_error": "harness.models._anthropic._model",
    "CallbackModel": "harness.models._callback",
    "CallbackResult": "harness.models._callback",
    "CapabilitiesOverride": "harness.models._capabilities",
    "StaticToolsModel": "harness.models._capabilities",
    "with_capabilities": "harness.models._capabilities",
    "OPENAI_CHAT_CAPABILITIES": "harness.models._openai._chat",
    "OpenAIChatModel": "harness.models._openai._chat",
    "map_openai_error": "harness.models._openai._common",
    "OPENAI_RESPONSES_CAPABILITIES": "harness.models._openai._responses",
    "OpenAIResponsesModel": "harness.models._openai._responses",
    "ArgumentOverrides": "harness.models._personas._base",
    "Persona": "harness.models._personas._base",
    "Plan": "harness.models._personas._base",
    "Explorer": "harness.models._personas._explorer",
    "DEFAULT_HINTS": "harness.models._personas._goal",
    "GoalDirected": "harness.models._personas._goal",
    "Decision": "harness.models._personas._record",
    "ReplayModel": "harness.models._personas._record",
    "RunState": "harness.models._personas._state",
    "WeakBehavior": "harness.models._personas._weak",
    "ScriptedModel": "harness.models._scripted._model",
    "CallsStep": "harness.models._scripted._steps",
    "CallStep": "harness.models._scripted._steps",
    "ErrorKind": "harness.models._scripted._steps",
    "ExpectMessage": "harness.models._scripted._steps",
    "ExpectOffered": "harness.models._scripted._steps",
    "OutputStep": "harness.models._scripted._steps",
    "RaiseStep": "harness.models._scripted._steps",
    "RefuseStep": "harness.models._scripted._steps",
    "ReplyStep": "harness.models._scripted._steps",
    "SearchStep": "harness.models._scripted._steps",
    "Step": "harness.models._scripted._steps",
    "call": "harness.models._scripted._steps",
    "calls": "harness.models._scripted._steps",
    "expect_message": "harness.models._scripted._steps",
    "expect_offered": "harness.models._scripted._steps",
    "output": "harness.models._scripted._steps",
    "raise_error": "harness.models._scripted._steps",
    "refuse": "harness.models._scripted._steps",
    "reply": "harness.models._scripted._steps",
    "search": "harness.models._scripted._steps",
    "step_from_data": "harness.models._scripted._steps_data",
    "steps_from_data": "harness.models._scripted._steps_data",
    "ToolHistoryError": "harness.models._tool_history",
    "ToolHistoryPolicy": "harness.models._tool_history",
    "apply_tool_history": "harness.models._tool_history",
    "missing_tools": "harness.models._tool_history",
    "FAKE_ANTHROPIC_BASE_URL": "harness.models._wire._anthropic_client",
    "fake_anthropic_client": "harness.models._wire._anthropic_client",
    "fake_async_anthropic_client": "harness.models._wire._anthropic_client",
    "RecordedRequest": "harness.models._wire._app",
    "WireApp": "harness.models._wire._app",
    "WireReply": "harness.models._wire._app",
    "WireServer": "harness.models._wire._server",
    "FAKE_BASE_URL": "harness.models._wire._transport",
    "OpenAIWireTransport": "harness.models._wire._transport",
    "fake_async_openai_client": "harness.models._wire._transport",
    "fake_openai_client": "harness.models._wire._transport",
}

__all__ = [*sorted(_LAZY)]
"""The public API: every name of ``_LAZY``."""


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, globals())
