"""Typed context objects injected into tool parameters: schema hiding, sources, errors."""

from __future__ import annotations

import dataclasses
import json

import pytest

from harness import (
    ChatContext,
    Emitter,
    Injected,
    Tool,
    ToolResult,
    as_tool,
    context_type,
    llm_tool,
)
from harness._errors import ToolDefinitionError, UsageError
from harness._secrets import scrub_text
from harness.tools import CallContext, ContextObjects, Toolset, is_context_type


class Database:
    def __init__(self, dsn: str) -> None:
        self.dsn = dsn


class ReplicaDatabase(Database):
    pass


class AuditDatabase(Database):
    pass


@context_type
class Clock:
    def __init__(self, now: str) -> None:
        self.now = now


class FrozenClock(Clock):
    pass


@llm_tool
def lookup(query: str, db: Injected[Database]) -> str:
    """Look something up."""
    return f"{query}@{db.dsn}"


@llm_tool
def what_time(clock: Clock) -> str:
    """The time."""
    return clock.now


def ctx(
    *,
    call: list[object] | None = None,
    run: list[object] | None = None,
    toolset: list[object] | None = None,
) -> CallContext:
    base = CallContext(objects=ContextObjects(run, source="run") if run else None)
    return base.for_call(
        tool_name="t",
        tool_call_id="c1",
        iteration=1,
        objects=ContextObjects(call, source="call") if call else None,
        toolset_objects=ContextObjects(toolset, source="toolset") if toolset else None,
    )


def run_tool(tool: Tool, arguments: str, context: CallContext) -> object:
    prepared = tool.prepare(arguments, context)
    if isinstance(prepared, ToolResult):
        return prepared
    return prepared.run_sync()


# -- the schema -----------------------------------------------------------------------


def test_injected_parameters_are_not_in_the_schema() -> None:
    tool = as_tool(lookup)
    assert tool.parameters["properties"] == {"query": {"type": "string"}}
    assert tool.parameters["required"] == ["query"]
    assert [p.name for p in tool.args_schema.injected_params] == ["db"]  # type: ignore[union-attr]
    assert as_tool(what_time).parameters["properties"] == {}


def test_optional_and_builtin_context_types_are_injected() -> None:
    @llm_tool
    def f(x: int, chat: ChatContext | None, progress: Emitter, clock: Clock | None = None) -> int:
        """F."""
        return x

    tool = as_tool(f)
    assert list(tool.parameters["properties"]) == ["x"]
    names = {p.name: p.has_default for p in tool.args_schema.injected_params}  # type: ignore[union-attr]
    assert names == {"chat": False, "progress": False, "clock": True}


def test_context_type_marks_subclasses_too() -> None:
    assert is_context_type(Clock) and is_context_type(FrozenClock)
    assert is_context_type(ChatContext) and is_context_type(Emitter)
    assert not is_context_type(Database) and not is_context_type(Clock("x"))
    with pytest.raises(UsageError, match="decorates a class"):
        context_type(Clock("x"))  # type: ignore[type-var]


def test_injected_needs_a_class_at_definition_time() -> None:
    with pytest.raises(ToolDefinitionError, match=r"parameter 'db'.*needs a class"):

        @llm_tool
        def f(db: Injected[list[int]]) -> None:
            """F."""


# -- resolving ------------------------------------------------------------------------


def test_run_object_is_injected() -> None:
    assert run_tool(as_tool(lookup), '{"query": "q"}', ctx(run=[Database("run-db")])) == "q@run-db"


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        ({"call": "call", "run": "run", "toolset": "toolset", "tool": "tool"}, "call"),
        ({"run": "run", "toolset": "toolset", "tool": "tool"}, "run"),
        ({"toolset": "toolset", "tool": "tool"}, "toolset"),
        ({"tool": "tool"}, "tool"),
        ({"call": "call", "tool": "tool"}, "call"),
    ],
)
def test_priority_is_call_run_toolset_tool(sources: dict[str, str], expected: str) -> None:
    tool = as_tool(lookup)
    if "tool" in sources:
        tool = tool.with_context(Database(sources["tool"]))
    context = ctx(
        call=[Database(sources["call"])] if "call" in sources else None,
        run=[Database(sources["run"])] if "run" in sources else None,
        toolset=[Database(sources["toolset"])] if "toolset" in sources else None,
    )
    assert run_tool(tool, '{"query": "q"}', context) == f"q@{expected}"


def test_exact_class_wins_over_a_subclass_in_one_source() -> None:
    context = ctx(run=[ReplicaDatabase("replica"), Database("primary")])
    assert run_tool(as_tool(lookup), '{"query": "q"}', context) == "q@primary"


def test_a_single_subclass_instance_matches() -> None:
    assert run_tool(as_tool(what_time), "{}", ctx(run=[FrozenClock("noon")])) == "noon"


def test_a_higher_source_with_a_subclass_beats_a_lower_exact_match() -> None:
    context = ctx(call=[ReplicaDatabase("replica")], run=[Database("primary")])
    assert run_tool(as_tool(lookup), '{"query": "q"}', context) == "q@replica"


def test_two_subclass_instances_in_one_source_are_ambiguous() -> None:
    context = ctx(run=[ReplicaDatabase("replica-secret-dsn"), AuditDatabase("audit-secret-dsn")])
    result = run_tool(as_tool(lookup), '{"query": "q"}', context)
    assert isinstance(result, ToolResult) and result.is_error
    assert result.error_kind == "missing_context"
    assert "parameter 'db'" in result.content and "the run has 2 matching" in result.content
    assert "AuditDatabase, ReplicaDatabase" in result.content
    assert "secret-dsn" not in result.content


def test_missing_object_is_an_error_result_naming_the_class() -> None:
    result = run_tool(as_tool(lookup), '{"query": "q"}', ctx())
    assert isinstance(result, ToolResult) and result.is_error
    assert result.error_kind == "missing_context"
    assert "parameter 'db' takes a Database context object and none is registered" in (
        result.content
    )
    assert "context_objects=[Database(...)]" in result.content


def test_missing_object_with_a_default_uses_the_default() -> None:
    @llm_tool
    def f(clock: Clock | None = None) -> str:
        """F."""
        return "none" if clock is None else clock.now

    assert run_tool(as_tool(f), "{}", ctx()) == "none"
    assert run_tool(as_tool(f), "{}", ctx(run=[Clock("nine")])) == "nine"

    noon = Clock("noon")

    @llm_tool
    def g(clock: Clock = noon) -> str:
        """G."""
        return clock.now

    assert run_tool(as_tool(g), "{}", ctx()) == "noon"  # the default, not None


def test_unrelated_objects_do_not_match() -> None:
    result = run_tool(as_tool(what_time), "{}", ctx(run=[Database("x"), ChatContext("web", "c1")]))
    assert isinstance(result, ToolResult) and result.error_kind == "missing_context"


# -- registering ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("objects", "message"),
    [
        ([None], "item 0 is None"),
        ([Database], "is the class Database, not an instance"),
        ([Database("a"), Database("b")], "items 0 and 1 are both Database"),
        ([CallContext()], "the loop makes one for each call"),
        ([Emitter()], "the loop makes one for each call"),
    ],
)
def test_bad_registrations_are_refused(objects: list[object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        ContextObjects(objects, source="run")


def test_a_non_list_is_refused() -> None:
    with pytest.raises(UsageError, match="must be a list of objects"):
        ContextObjects("not-a-list")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="must be a list of objects"):
        ContextObjects(Database("x"))  # type: ignore[arg-type]


def test_the_repr_names_classes_never_values() -> None:
    objects = ContextObjects([Database("postgres://user:hunter2-pw@db.invalid/x")], source="run")
    assert repr(objects) == "<context objects on the run: [Database] (values hidden)>"


def test_with_context_refuses_an_object_no_parameter_takes() -> None:
    with pytest.raises(ToolDefinitionError, match="no parameter takes a Clock"):
        as_tool(lookup).with_context(Clock("x"))
    with pytest.raises(ToolDefinitionError, match="items 0 and 1 are both Database"):
        as_tool(lookup, context=[Database("a"), Database("b")])


def test_with_context_replaces_an_object_of_the_same_class() -> None:
    tool = as_tool(lookup).with_context(Database("one")).with_context(Database("two"))
    assert len(tool.context_objects) == 1
    assert run_tool(tool, '{"query": "q"}', ctx()) == "q@two"


def test_context_needs_a_function_tool() -> None:
    tool = Tool.from_schema("s", "S.", {"type": "object"}, lambda args: "ok")
    with pytest.raises(ToolDefinitionError, match="need a function tool"):
        tool.with_context(Database("x"))


def test_as_tool_registers_tool_objects() -> None:
    tool = as_tool(lookup, context=[Database("tool-db")])
    assert run_tool(tool, '{"query": "q"}', ctx()) == "q@tool-db"
    assert as_tool(lookup).context_objects.objects == ()  # the decorated tool is unchanged


def test_toolset_objects_are_kept_on_copy_and_provide_replaces_by_class() -> None:
    toolset = Toolset([lookup], context=[Database("first")])
    copy = toolset.copy()
    toolset.provide(Database("second"), Clock("c"))
    assert [type(o).__name__ for o in toolset.context_objects or ()] == ["Database", "Clock"]
    assert [o.dsn for o in copy.context_objects or () if isinstance(o, Database)] == ["first"]
    assert Toolset([lookup]).context_objects is None


@dataclasses.dataclass
class UserContext:
    user_id: str
    api_key: str


def test_only_the_secret_texts_of_injected_objects_are_registered() -> None:
    ContextObjects([Database("postgres://app:s3cret-passw0rd@db.invalid/main")])
    ContextObjects([ChatContext(channel="slack", chat_id="C0NOTSECRETCHAT")])
    ContextObjects([UserContext(user_id="user123-visible", api_key="k3y-of-user-123456")])
    text = scrub_text(
        "dsn=postgres://app:s3cret-passw0rd@db.invalid/main chat=C0NOTSECRETCHAT "
        "user=user123-visible key=k3y-of-user-123456"
    )
    assert "s3cret" not in text  # a URL with a password: a credential's shape
    assert "k3y-of-user" not in text  # under a credential name
    assert "C0NOTSECRETCHAT" in text and "user123-visible" in text  # ids are not secrets
    assert "slack" in scrub_text("the slack chat")


def test_an_object_that_names_its_secrets_hides_those() -> None:
    class Account:
        def __init__(self, owner: str, pin: str) -> None:
            self.owner, self.pin_code = owner, pin

        def __harness_secrets__(self) -> tuple[str, ...]:
            return (self.owner,)  # the caller marks what is secret, whatever its name

    ContextObjects([Account("owner-marked-secret", "plain-pin-1234")])
    text = scrub_text("owner-marked-secret plain-pin-1234")
    assert "owner-marked-secret" not in text and "plain-pin-1234" in text


def test_a_tool_error_mentioning_an_injected_value_is_scrubbed() -> None:
    @llm_tool
    def connect(db: Injected[Database]) -> str:
        """Connect."""
        raise ConnectionError(f"cannot reach {db.dsn}")

    context = ctx(run=[Database("postgres://svc:tops3cret-key@db.invalid/x")])
    prepared = as_tool(connect).prepare("{}", context)
    assert not isinstance(prepared, ToolResult)
    with pytest.raises(ConnectionError) as info:
        prepared.run_sync()
    result = prepared.error_result(info.value)
    assert "tops3cret-key" not in result.content and "[hidden]" in result.content


# -- ChatContext and Emitter ------------------------------------------------------------


def test_chat_context_validates_and_hides_ids() -> None:
    chat = ChatContext(channel="slack", chat_id="C024BE91L", thread_id="T-1700000000")
    assert repr(chat) == "ChatContext(channel='slack', chat_id='[hidden]', thread_id='[hidden]')"
    assert "C024BE91L" not in repr(ContextObjects([chat]))
    with pytest.raises(UsageError, match="chat_id must be a non-empty string"):
        ChatContext(channel="slack", chat_id="")
    with pytest.raises(UsageError, match="channel must be a non-empty string"):
        ChatContext(channel=3, chat_id="x")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="thread_id must be a string"):
        ChatContext(channel="web", chat_id="x", thread_id=5)  # type: ignore[arg-type]


def test_an_emitter_outside_a_loop_keeps_its_chunks() -> None:
    @llm_tool
    def work(progress: Emitter) -> str:
        """Work."""
        progress.emit("half way")
        progress("   ")  # blank: not delivered
        progress("done")
        return "ok"

    context = ctx()
    assert run_tool(as_tool(work), "{}", context) == "ok"
    assert context.emitter.sent == ("half way", "done")
    assert context.emitter.call_id == "c1"
    assert "half way" not in repr(context.emitter)
    with pytest.raises(UsageError, match="takes text"):
        context.emitter.emit(3)  # type: ignore[arg-type]


def test_the_emitter_reaches_its_sink_with_the_call_id() -> None:
    got: list[tuple[str, str, str]] = []
    base = CallContext(progress=lambda *chunk: got.append(chunk))
    context = base.for_call(tool_name="work", tool_call_id="call_9", iteration=1)
    context.emitter.emit("step 1")
    assert got == [("call_9", "work", "step 1")]


# -- presets the model may override ------------------------------------------------------


def fetch(url: str, api_key: str, region: str = "eu") -> str:
    """Fetch a page.

    Args:
        url: The address.
        api_key: The key.
    """
    return json.dumps({"url": url, "api_key": api_key, "region": region})


KEY = "sk-preset-secret-000111222"


def test_a_preset_sent_by_the_model_is_refused_by_default() -> None:
    tool = as_tool(fetch, presets={"api_key": KEY})
    assert "api_key" not in tool.parameters["properties"]
    result = tool.prepare('{"url": "u", "api_key": "mine-123456"}', CallContext())
    assert isinstance(result, ToolResult) and result.error_kind == "invalid_arguments"
    assert "'api_key' is not a parameter" in result.content


def test_model_may_override_shows_the_parameter_without_its_value() -> None:
    tool = as_tool(
        fetch,
        presets={"api_key": KEY, "region": "us-east-1-cluster"},
        model_may_override=["region"],
    )
    props = tool.parameters["properties"]
    assert "api_key" not in props
    assert props["region"] == {
        "type": "string",
        "description": "Optional: when omitted, a value set by the application is used.",
    }
    assert "region" not in tool.parameters.get("required", [])
    assert KEY not in json.dumps(tool.parameters) and "us-east" not in json.dumps(props)
    sent = run_tool(tool, '{"url": "u", "region": "ap"}', CallContext())
    assert json.loads(str(sent)) == {"url": "u", "api_key": KEY, "region": "ap"}
    omitted = run_tool(tool, '{"url": "u"}', CallContext())
    assert json.loads(str(omitted))["region"] == "us-east-1-cluster"


def test_model_may_override_true_covers_every_preset_and_keeps_descriptions() -> None:
    tool = as_tool(fetch, presets={"api_key": KEY}, model_may_override=True)
    assert tool.parameters["properties"]["api_key"]["description"].startswith("The key. Optional")
    assert KEY not in json.dumps(tool.parameters)
    assert (
        json.loads(str(run_tool(tool, '{"url": "u", "api_key": "own"}', CallContext())))["api_key"]
        == "own"
    )


def test_the_policy_survives_more_presets_and_can_be_turned_off() -> None:
    tool = as_tool(fetch, presets={"api_key": KEY}, model_may_override=True)
    more = tool.with_presets(region="us-east-1-cluster")
    assert "api_key" in more.parameters["properties"]  # the policy is kept (still a name set)
    assert "region" not in more.parameters["properties"]  # not named when the policy was set
    off = more.with_presets(model_may_override=False)
    assert "api_key" not in off.parameters["properties"]


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        (["nope"], r"model_may_override names \['nope'\], which are not presets"),
        ("region", "expected True"),
    ],
)
def test_bad_override_policies_are_refused(policy: object, message: str) -> None:
    with pytest.raises(ToolDefinitionError, match=message):
        as_tool(fetch, presets={"region": "us-east-1-cluster"}, model_may_override=policy)  # type: ignore[arg-type]


def test_wrapped_tools_keep_their_context_objects_and_override_policy() -> None:
    from harness.tools import DelegatingTool

    wrapped = DelegatingTool.wrap(lookup).with_context(Database("wrapped-db"))
    assert run_tool(wrapped, '{"query": "q"}', ctx()).content == "q@wrapped-db"  # type: ignore[attr-defined]
    fetching = DelegatingTool.wrap(fetch).with_presets(api_key=KEY, model_may_override=True)
    assert "api_key" in fetching.parameters["properties"]
    sent = run_tool(fetching, '{"url": "u", "api_key": "model-key"}', CallContext())
    assert json.loads(sent.content)["api_key"] == "model-key"  # type: ignore[attr-defined]


def test_schema_tools_look_objects_up_on_the_call_context() -> None:
    def handler(args: dict[str, object], context: CallContext) -> str:
        db = context.lookup(Database)
        clock = context.lookup(Clock)
        context.lookup(Emitter).emit("looked up")  # type: ignore[union-attr]
        return f"{db.dsn if db else None}/{clock}"

    tool = Tool.from_schema("s", "S.", {"type": "object"}, handler)
    context = ctx(run=[Database("run-db")], call=[ReplicaDatabase("call-db")])
    assert run_tool(tool, "{}", context) == "call-db/None"
    assert context.emitter.sent == ("looked up",)
    ambiguous = ctx(run=[ReplicaDatabase("a-db"), AuditDatabase("b-db")])
    with pytest.raises(UsageError, match="the run has 2 matching context objects"):
        ambiguous.lookup(Database)
