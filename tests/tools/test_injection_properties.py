"""Properties: injected parameters never reach a schema; injected values never reach the model.

Hypothesis builds tools with random signatures (model-visible ``str`` parameters and
injected parameters of three context classes), registers objects holding random secret
texts on a random source (call, run, toolset or tool), and runs them through the loop;
half the tools raise with every injected value in the exception message.
"""

from __future__ import annotations

import inspect
import json
import keyword
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from harness import ScriptedModel, Tool, call, reply, run
from harness.messages import ToolCall
from harness.tools import Injected, Toolset


class Alpha:
    def __init__(self, secret: str) -> None:
        self.secret = secret


class Beta(Alpha):
    pass


class Gamma:
    def __init__(self, secret: str) -> None:
        self.secret = secret


CLASSES = (Alpha, Beta, Gamma)

names = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True).filter(
    lambda n: not keyword.iskeyword(n) and n not in ("self", "cls")
)
secrets = st.from_regex(r"[A-Z]{3}[a-z0-9]{9,14}", fullmatch=True)


@st.composite
def tool_cases(draw: st.DrawFn) -> dict[str, Any]:
    all_names = draw(st.lists(names, min_size=1, max_size=6, unique=True))
    split = draw(st.integers(min_value=0, max_value=len(all_names) - 1))
    visible, injected = all_names[:split], all_names[split:]
    kinds = {name: draw(st.sampled_from(CLASSES)) for name in injected}
    used = sorted({k for k in kinds.values()}, key=lambda k: k.__name__)
    objects = {k: k(draw(secrets)) for k in used}
    # a Beta is also an Alpha: register Alpha itself when an Alpha parameter exists
    if Alpha in kinds.values() and Beta in objects and Alpha not in objects:
        objects[Alpha] = Alpha(draw(secrets))
    return {
        "visible": visible,
        "kinds": kinds,
        "objects": list(objects.values()),
        "source": draw(st.sampled_from(["call", "run", "toolset", "tool"])),
        "raises": draw(st.booleans()),
    }


def make_tool(case: dict[str, Any], received: dict[str, Any]) -> Tool:
    kinds: dict[str, type] = case["kinds"]
    params = [
        inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=str)
        for n in case["visible"]
    ] + [
        inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=Injected[k])
        for n, k in kinds.items()
    ]

    def handler(**kwargs: Any) -> str:
        received.update(kwargs)
        if case["raises"]:
            values = [v.secret for k, v in kwargs.items() if k in kinds]
            raise RuntimeError("failed with " + ", ".join(values))
        return "done"

    handler.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    handler.__annotations__ = {p.name: p.annotation for p in params}
    handler.__doc__ = "A generated tool."
    return Tool.from_function(handler, name="generated")


@settings(max_examples=60, deadline=None)
@given(tool_cases())
def test_injected_parameters_and_values_never_reach_the_model(case: dict[str, Any]) -> None:
    received: dict[str, Any] = {}
    tool = make_tool(case, received)
    objects = case["objects"]
    source = case["source"]
    if source == "tool":
        tool = tool.with_context(*objects)
    tools = Toolset([tool], context=objects if source == "toolset" else ())
    options: dict[str, Any] = {}
    if source == "run":
        options["context_objects"] = objects
    if source == "call":

        def per_call(tool_call: ToolCall) -> list[object]:
            return objects

        options["call_context_objects"] = per_call
    args = {name: "v" for name in case["visible"]}
    model = ScriptedModel([call("generated", **args), reply("end")])
    result = run(model, "go", tools=tools, **options)

    schema = json.dumps(model.requests[0].tools[0].parameters)
    parameters = model.requests[0].tools[0].parameters
    assert set(parameters["properties"]) == set(case["visible"])
    for name in case["kinds"]:
        assert name not in parameters["properties"]
        assert name not in parameters.get("required", [])
    shown = [json.dumps(m.model_dump(mode="json")) for m in result.messages]
    for obj in objects:
        assert obj.secret not in schema
        assert all(obj.secret not in text for text in shown)
        assert obj.secret not in repr(result.trace.to_dict())
    for name, kind in case["kinds"].items():  # each parameter got the object of its class
        assert type(received[name]) is kind
    assert result.trace.calls[0].is_error is case["raises"]


def _report(alpha: str, beta: str, gamma: str) -> str:
    """Report the values received."""
    return json.dumps([alpha, beta, gamma])


PARAMS = ("alpha", "beta", "gamma")


@settings(max_examples=60, deadline=None)
@given(
    presets=st.dictionaries(st.sampled_from(PARAMS), secrets, min_size=1),
    policy=st.one_of(st.booleans(), st.sets(st.sampled_from(PARAMS))),
    sent=st.dictionaries(st.sampled_from(PARAMS), st.sampled_from(["m1", "m2"])),
)
def test_preset_values_never_reach_a_schema_and_the_policy_decides(
    presets: dict[str, str], policy: bool | set[str], sent: dict[str, str]
) -> None:
    from harness import as_tool
    from harness._errors import ToolDefinitionError
    from harness.tools import CallContext

    names = set(presets) if policy is True else set() if policy is False else set(policy)
    if not names <= set(presets):
        with pytest.raises(ToolDefinitionError, match="which are not presets"):
            as_tool(_report, presets=presets, model_may_override=policy)
        return
    tool = as_tool(_report, presets=presets, model_may_override=policy)
    schema = json.dumps(tool.parameters)
    assert all(value not in schema for value in presets.values())
    visible = set(tool.parameters["properties"])
    assert visible == (set(PARAMS) - set(presets)) | names
    assert set(tool.parameters.get("required", [])) == set(PARAMS) - set(presets)
    arguments = {name: "x" for name in set(PARAMS) - set(presets)}
    arguments.update({k: v for k, v in sent.items() if k in visible})
    refused = {k for k in sent if k not in visible}
    arguments.update({k: sent[k] for k in refused})
    prepared = tool.prepare(json.dumps(arguments), CallContext())
    if refused:  # the model sent a preset it may not override: invalid arguments
        assert getattr(prepared, "error_kind", None) == "invalid_arguments"
        return
    got = dict(zip(PARAMS, json.loads(prepared.run_sync()), strict=True))  # type: ignore[union-attr]
    for name in PARAMS:
        if name in presets and name not in sent:
            assert got[name] == presets[name]
        elif name in presets:
            assert got[name] == sent[name]  # overridable and sent: the model's value won
