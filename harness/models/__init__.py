"""Models: the interface, scripted and callback fakes, personas, provider adapters.

Names are imported lazily on first use (PEP 562): ``import harness.models`` does not
import the provider SDKs or httpx2, which are extras (``harness._extras``).
"""

from __future__ import annotations

import typing

from harness._lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:  # the public API: each name once (harness._lazy reads this)
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
    from harness.models._bedrock._model import (
        BEDROCK_CAPABILITIES as BEDROCK_CAPABILITIES,
        BedrockConverseModel as BedrockConverseModel,
        map_bedrock_error as map_bedrock_error,
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
    from harness.models._gemini._model import (
        GEMINI_CAPABILITIES as GEMINI_CAPABILITIES,
        GeminiModel as GeminiModel,
        map_gemini_error as map_gemini_error,
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
    from harness.models._scripted._expect_choice import (
        ExpectToolChoice as ExpectToolChoice,
        expect_tool_choice as expect_tool_choice,
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
    from harness.models._wire._bedrock_client import (
        FAKE_BEDROCK_ENDPOINT as FAKE_BEDROCK_ENDPOINT,
        BedrockWireHook as BedrockWireHook,
        fake_bedrock_client as fake_bedrock_client,
    )
    from harness.models._wire._gemini_client import (
        FAKE_GEMINI_BASE_URL as FAKE_GEMINI_BASE_URL,
        fake_gemini_client as fake_gemini_client,
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


__getattr__, __dir__, __all__ = _lazy_exports(__name__, __file__, globals())
"""Lazy re-exports (PEP 562): ``__all__`` is the names imported above for type checkers."""
