"""harness: test and run LLM tool loops whose toolset changes mid-conversation.

The public API is re-exported here; every other module is private. Names are
imported lazily on first use (PEP 562), so ``import harness`` (and the pytest
plugin, which lives in this package) stays cheap for test suites that never use
the loop.
"""

from __future__ import annotations

import typing

from harness._lazy import lazy_exports as _lazy_exports
from harness._version import __version__

if typing.TYPE_CHECKING:  # the public API: each name once (harness._lazy reads this)
    from harness._errors import (
        CassetteError as CassetteError,
        CompletionError as CompletionError,
        ContextLengthExceeded as ContextLengthExceeded,
        DuplicateToolName as DuplicateToolName,
        FacadeError as FacadeError,
        HarnessError as HarnessError,
        HarnessWarning as HarnessWarning,
        InjectionLimitExceeded as InjectionLimitExceeded,
        InvalidToolName as InvalidToolName,
        InvalidToolProvider as InvalidToolProvider,
        LateCompletion as LateCompletion,
        LoopSignal as LoopSignal,
        MalformedResponse as MalformedResponse,
        MaxIterationsExceeded as MaxIterationsExceeded,
        ModelBehaviorError as ModelBehaviorError,
        NetworkRefused as NetworkRefused,
        OutputValidationError as OutputValidationError,
        ProviderError as ProviderError,
        ProviderTimeout as ProviderTimeout,
        RateLimited as RateLimited,
        RestartRequired as RestartRequired,
        RunLimitError as RunLimitError,
        ScenarioError as ScenarioError,
        ScriptError as ScriptError,
        SettingOverridden as SettingOverridden,
        StaticToolsChanged as StaticToolsChanged,
        StrategyError as StrategyError,
        ToolDefinitionError as ToolDefinitionError,
        ToolNotFound as ToolNotFound,
        TraceFileError as TraceFileError,
        UnencodableText as UnencodableText,
        UnreachableStateWarning as UnreachableStateWarning,
        UsageError as UsageError,
        VisibilityExpansionRequired as VisibilityExpansionRequired,
    )
    from harness._secrets import (
        Secret as Secret,
        ShortSecretWarning as ShortSecretWarning,
    )
    from harness.cost import (
        CostReport as CostReport,
        record_requests as record_requests,
    )
    from harness.injection import (
        AddTools as AddTools,
        AllowedTools as AllowedTools,
        ChainedType as ChainedType,
        EntityDiscovery as EntityDiscovery,
        Facade as Facade,
        GroupRequest as GroupRequest,
        Phases as Phases,
        Playbook as Playbook,
        PromptTemplate as PromptTemplate,
        RunIntrospection as RunIntrospection,
        Section as Section,
        SectionDisclosure as SectionDisclosure,
        StateMachine as StateMachine,
        ToolChaining as ToolChaining,
        ToolGroup as ToolGroup,
        ToolGroups as ToolGroups,
        ToolSearch as ToolSearch,
        UsageIntrospection as UsageIntrospection,
        Visibility as Visibility,
        agent_tool as agent_tool,
        arun_with_sections as arun_with_sections,
        blackboard_tools as blackboard_tools,
        facade as facade,
        facade_class as facade_class,
        facade_of as facade_of,
        run_with_sections as run_with_sections,
        subagent_tool as subagent_tool,
        tool_provider as tool_provider,
        unlock as unlock,
    )
    from harness.loop import (
        CallRecord as CallRecord,
        CapturedRun as CapturedRun,
        ChangeRecord as ChangeRecord,
        Continuation as Continuation,
        ContinueUntilTool as ContinueUntilTool,
        ContinueWhile as ContinueWhile,
        DeclaredChanges as DeclaredChanges,
        Event as Event,
        InjectionContext as InjectionContext,
        InjectionStrategy as InjectionStrategy,
        IterationRecord as IterationRecord,
        IterationStarted as IterationStarted,
        LimitReached as LimitReached,
        LoopCore as LoopCore,
        LoopOptions as LoopOptions,
        Model as Model,
        ModelCapabilities as ModelCapabilities,
        ModelRequest as ModelRequest,
        ModelResponded as ModelResponded,
        ModelResponse as ModelResponse,
        ModelSettings as ModelSettings,
        NudgeAfterResults as NudgeAfterResults,
        ProviderDiscovered as ProviderDiscovered,
        ReAct as ReAct,
        RetryableToolError as RetryableToolError,
        RunCapture as RunCapture,
        RunFinished as RunFinished,
        RunResult as RunResult,
        Session as Session,
        StrategyChain as StrategyChain,
        StrategyWarning as StrategyWarning,
        ToolAbandoned as ToolAbandoned,
        ToolCalled as ToolCalled,
        ToolChoiceSchedule as ToolChoiceSchedule,
        ToolFailed as ToolFailed,
        ToolsetChange as ToolsetChange,
        ToolsInjected as ToolsInjected,
        ToolsRemoved as ToolsRemoved,
        Trace as Trace,
        TurnRecord as TurnRecord,
        Usage as Usage,
        UserNotified as UserNotified,
        arun as arun,
        capture_run as capture_run,
        override_model as override_model,
        return_direct as return_direct,
        run as run,
    )
    from harness.messages import (
        AssistantMessage as AssistantMessage,
        Message as Message,
        SystemMessage as SystemMessage,
        ToolCall as ToolCall,
        ToolMessage as ToolMessage,
        UserMessage as UserMessage,
    )
    from harness.models import (
        ScriptedModel as ScriptedModel,
        call as call,
        calls as calls,
        expect_message as expect_message,
        expect_offered as expect_offered,
        expect_tool_choice as expect_tool_choice,
        output as output,
        reply as reply,
        search as search,
    )
    from harness.tools import (
        ArtifactSink as ArtifactSink,
        CallContext as CallContext,
        ChatContext as ChatContext,
        Completion as Completion,
        CompositeSink as CompositeSink,
        DelegatingTool as DelegatingTool,
        Emitter as Emitter,
        Injected as Injected,
        ListSink as ListSink,
        OneShotTool as OneShotTool,
        SinkingTool as SinkingTool,
        StateSink as StateSink,
        Tool as Tool,
        ToolChoice as ToolChoice,
        ToolDefinition as ToolDefinition,
        ToolResult as ToolResult,
        Toolset as Toolset,
        as_tool as as_tool,
        context_type as context_type,
        llm_tool as llm_tool,
        one_shot as one_shot,
        sink_artifacts as sink_artifacts,
        tools_of as tools_of,
    )


__getattr__, __dir__, _public = _lazy_exports(__name__, __file__, globals())
__all__ = ["__version__", *_public]
"""The public API: the names imported above for type checkers, and the version."""
