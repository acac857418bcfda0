"""Models: the interface, the scripted fake and (later) personas and provider adapters."""

from harness.loop import Model, ModelCapabilities, ModelRequest, ModelResponse, ModelSettings, Usage
from harness.models._scripted import ScriptedModel
from harness.models._steps import (
    CallsStep,
    CallStep,
    ExpectOffered,
    OutputStep,
    ReplyStep,
    Step,
    call,
    calls,
    expect_offered,
    output,
    reply,
    step_from_data,
    steps_from_data,
)

__all__ = [
    "CallStep",
    "CallsStep",
    "ExpectOffered",
    "Model",
    "ModelCapabilities",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OutputStep",
    "ReplyStep",
    "ScriptedModel",
    "Step",
    "Usage",
    "call",
    "calls",
    "expect_offered",
    "output",
    "reply",
    "step_from_data",
    "steps_from_data",
]
