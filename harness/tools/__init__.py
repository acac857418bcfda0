"""The tool model: define tools, validate arguments, build results, hold toolsets; the
neutral ``ToolDefinition`` and ``ToolChoice`` every layer (and each wire format) speaks."""

from harness.tools._completion import Completion
from harness.tools._context import CallContext
from harness.tools._decorator import (
    ToolSpec,
    as_tool,
    as_tools,
    llm_tool,
    register_tool_converter,
    tool_methods,
    tool_spec,
    tools_of,
)
from harness.tools._definitions import ToolChoice, ToolDefinition
from harness.tools._inject import ContextObjects, Injected, context_type, is_context_type
from harness.tools._names import (
    is_valid_name,
    make_name,
    match_names,
    readable_part,
    sanitize_part,
    validate_name,
)
from harness.tools._objects import ChatContext, Emitter
from harness.tools._result import STARTED_TEXT, ToolResult, serialize_for_model
from harness.tools._schema import ArgsSchema, build_args_schema
from harness.tools._sinks import ArtifactSink, CompositeSink, ListSink, StateSink, artifacts_in
from harness.tools._tool import PreparedCall, Tool
from harness.tools._toolset import Toolset
from harness.tools._wrappers import (
    DelegatingTool,
    OneShotTool,
    SinkingTool,
    one_shot,
    sink_artifacts,
)

__all__ = [
    "STARTED_TEXT",
    "ArgsSchema",
    "ArtifactSink",
    "CallContext",
    "ChatContext",
    "Completion",
    "CompositeSink",
    "ContextObjects",
    "DelegatingTool",
    "Emitter",
    "Injected",
    "ListSink",
    "OneShotTool",
    "PreparedCall",
    "SinkingTool",
    "StateSink",
    "Tool",
    "ToolChoice",
    "ToolDefinition",
    "ToolResult",
    "ToolSpec",
    "Toolset",
    "artifacts_in",
    "as_tool",
    "as_tools",
    "build_args_schema",
    "context_type",
    "is_context_type",
    "is_valid_name",
    "llm_tool",
    "make_name",
    "match_names",
    "one_shot",
    "readable_part",
    "register_tool_converter",
    "sanitize_part",
    "serialize_for_model",
    "sink_artifacts",
    "tool_methods",
    "tool_spec",
    "tools_of",
    "validate_name",
]
