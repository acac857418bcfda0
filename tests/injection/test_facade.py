"""Unfolding facades: plain, by category, selectable, exclusive, nested; bad input."""

from __future__ import annotations

from typing import TypeVar

import pytest

from harness import (
    CallContext,
    Event,
    FacadeError,
    RunResult,
    ScriptedModel,
    StrategyWarning,
    Tool,
    ToolsInjected,
    ToolsRemoved,
    UsageError,
    as_tool,
    call,
    calls,
    llm_tool,
    reply,
    run,
)
from harness.injection import ALL_CATEGORIES, Facade, facade, is_facade
from harness.loop import InjectionContext, ToolsetChange
from harness.scenarios import check_invariants


@llm_tool(category="read")
def read_file(path: str) -> str:
    """Read a file."""
    return f"content of {path}"


@llm_tool(category="write")
def write_file(path: str, text: str) -> str:
    """Write a file."""
    return f"wrote {path}"


@llm_tool
def file_size(path: str) -> int:
    """Size of a file."""
    return 3


@llm_tool
def other() -> str:
    """A tool outside every facade."""
    return "other"


E = TypeVar("E", bound=Event)


def events(result: RunResult, kind: type[E]) -> list[E]:
    return [e for e in result.trace.events if isinstance(e, kind)]


def offered(model: ScriptedModel) -> list[tuple[str, ...]]:
    return [r.tool_names for r in model.requests]


def files() -> Tool:
    return facade(
        "files",
        "File tools.",
        [read_file, write_file, file_size],
        notes=["Paths are relative.", "Writes replace the file."],
    )


# -- plain facades -------------------------------------------------------------------


def test_plain_facade_unfolds_with_guide_and_context_tool() -> None:
    tool = facade("ops", "Operations.", [file_size, other])
    assert is_facade(tool)
    assert tool.parameters == {"type": "object", "properties": {}}
    assert "file_size, other" in tool.full_description
    model = ScriptedModel([call("ops"), call("ops"), call("ops_context"), reply("done")])
    result = run(model, "go", tools=[tool])
    assert offered(model) == [
        ("ops",),
        ("ops", "ops_context", "file_size", "other"),
        ("ops", "ops_context", "file_size", "other"),
        ("ops", "ops_context", "file_size", "other"),
    ]
    first, guide, context = result.trace.calls
    assert first.content.startswith("Unfolded 'ops': now available: file_size, other.")
    assert "already unfolded" in guide.content and "- file_size: Size of a file." in guide.content
    assert not guide.is_error
    assert context.content.startswith("ops: Operations.")
    (change,) = result.trace.changes
    assert change.strategy == "unfolding"
    assert change.after_call == "ops"
    assert change.replaced == ("ops",)
    assert change.added == ("ops_context", "file_size", "other")
    assert "ops was called: unfolded 'ops' into" in change.reason
    injected = events(result, ToolsInjected)
    assert [e.strategy for e in injected] == ["unfolding"]


def test_unfolded_guide_is_not_a_facade_any_more() -> None:
    model = ScriptedModel([call("ops"), reply("done")])
    result = run(model, "go", tools=[facade("ops", "Operations.", [other])])
    assert result.trace.iterations[-1].offered == ("ops", "ops_context", "other")
    # the guide keeps the name but is marked as a guide
    tool = facade("ops", "Operations.", [other])
    assert tool.metadata["facade_tree"] == ("ops",)


def test_notes_appear_once_in_the_context_tool_not_in_children() -> None:
    model = ScriptedModel([call("files", {"category": "all"}), call("files_context"), reply("ok")])
    result = run(model, "go", tools=[files()])
    context_call = result.trace.calls[1]
    assert context_call.content.count("Paths are relative.") == 1
    assert "- read_file [read]: Read a file." in context_call.content
    assert "- file_size: Size of a file." in context_call.content
    request = model.requests[1]
    descriptions = {d.name: d.description for d in request.tools}
    assert "Paths are relative." in descriptions["files_context"]
    assert all("Paths are relative." not in descriptions[n] for n in ("read_file", "write_file"))


# -- categories ----------------------------------------------------------------------


def test_category_schema_has_enum_with_all() -> None:
    tool = files()
    prop = tool.parameters["properties"]["category"]
    assert prop["enum"] == ["read", "write", ALL_CATEGORIES]
    assert tool.parameters["required"] == ["category"]


def test_custom_category_parameter_name() -> None:
    tool = facade("files", "File tools.", [read_file, write_file], category_param="area")
    assert list(tool.parameters["properties"]) == ["area"]
    model = ScriptedModel([call("files", {"area": "write"}), reply("ok")])
    run(model, "go", tools=[tool])
    assert offered(model)[1] == ("files", "files_context", "write_file")


def test_category_reveals_its_tools_and_uncategorised_ones() -> None:
    model = ScriptedModel(
        [
            call("files", {"category": "read"}),
            call("files", {"category": "write"}),
            call("files", {"category": "read"}),
            call("files"),
            reply("ok"),
        ]
    )
    result = run(model, "go", tools=[files()])
    assert offered(model) == [
        ("files",),
        ("files", "files_context", "read_file", "file_size"),
        ("files", "files_context", "read_file", "file_size", "write_file"),
        ("files", "files_context", "read_file", "file_size", "write_file"),
        ("files", "files_context", "read_file", "file_size", "write_file"),
    ]
    changes = result.trace.changes
    assert [c.added for c in changes] == [
        ("files_context", "read_file", "file_size"),
        ("write_file",),
    ]
    assert "(category 'write')" in changes[1].reason
    listing = result.trace.calls[3].content
    assert "- write_file" in listing and "- read_file" in listing


def test_all_category_reveals_everything() -> None:
    model = ScriptedModel([call("files", {"category": "all"}), reply("ok")])
    run(model, "go", tools=[files()])
    assert offered(model)[1] == (
        "files",
        "files_context",
        "read_file",
        "write_file",
        "file_size",
    )


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ("delete", "unknown category 'delete'"),
        (3, "unknown category 3"),
        (None, "the 'category' argument is missing"),
    ],
)
def test_unknown_category_is_an_error_listing_valid_ones(bad: object, problem: str) -> None:
    args = {"category": bad} if bad is not None else {}
    model = ScriptedModel([call("files", args), reply("ok")])
    result = run(model, "go", tools=[files()])
    record = result.trace.calls[0]
    assert record.is_error and record.error_kind == "invalid_arguments"
    assert f"Facade 'files': {problem}" in record.content
    assert "valid categories: read, write, all" in record.content
    assert offered(model) == [("files",), ("files",)]
    assert result.trace.changes == []


def test_guide_rejects_unknown_category_too() -> None:
    model = ScriptedModel(
        [call("files", {"category": "read"}), call("files", {"category": "x"}), reply("ok")]
    )
    result = run(model, "go", tools=[files()])
    assert result.trace.calls[1].is_error
    assert "unknown category 'x'" in result.trace.calls[1].content


# -- selectable ----------------------------------------------------------------------


def test_selector_gets_arguments_and_tools_share_state() -> None:
    made: list[str] = []

    def open_cart(customer: str) -> list[Tool]:
        made.append(customer)
        items: list[str] = []

        @llm_tool
        def add(sku: str) -> int:
            """Add."""
            items.append(sku)
            return len(items)

        @llm_tool
        def view() -> list[str]:
            """View."""
            return list(items)

        return [as_tool(add), as_tool(view)]

    shop = facade("shop", "Shop.", selector=open_cart)
    assert shop.parameters["required"] == ["customer"]
    model = ScriptedModel(
        [
            call("shop", {"customer": "Ada"}),
            call("add", {"sku": "apple"}),
            call("add", {"sku": "milk"}),
            call("view"),
            call("shop", {"customer": "Bob"}),
            reply("ok"),
        ]
    )
    result = run(model, "go", tools=[shop])
    assert made == ["Ada"]
    assert result.trace.calls[3].content == '["apple","milk"]'
    assert "already unfolded" in result.trace.calls[4].content
    assert offered(model)[1] == ("shop", "shop_context", "add", "view")


class Db:
    def __init__(self, dsn: str) -> None:
        self.dsn = dsn

    @llm_tool
    def where(self) -> str:
        """Where the database is."""
        return self.dsn


def test_selector_may_return_an_object_with_tool_methods() -> None:
    def connect(dsn: str) -> Db:
        return Db(dsn)

    model = ScriptedModel([call("db", {"dsn": "memory://x"}), call("where"), reply("ok")])
    result = run(model, "go", tools=[facade("db", "Database.", selector=connect)])
    assert result.trace.calls[1].content == "memory://x"


def test_selector_raising_is_a_clear_error_and_nothing_is_lost() -> None:
    def connect(dsn: str, context: CallContext) -> list[Tool]:
        raise ValueError(f"cannot reach {dsn} with {context['password']}")

    model = ScriptedModel([call("db", {"dsn": "pg://prod"}), reply("ok")])
    result = run(
        model,
        "go",
        tools=[facade("db", "Database.", selector=connect), other],
        context={"password": "s3cret-pw"},
    )
    record = result.trace.calls[0]
    assert record.is_error
    assert "selector of facade 'db' raised ValueError: cannot reach pg://prod" in record.content
    assert "still offered" in record.content
    assert "s3cret-pw" not in record.content
    assert offered(model) == [("db", "other"), ("db", "other")]
    assert isinstance(record.exception, FacadeError)


@pytest.mark.parametrize(
    ("produced", "problem"),
    [
        ("lambda: [t1, t1]", "duplicate tool names ['t1']"),
        ("lambda: [t_db]", "which the facade uses itself"),
        ("lambda: 42", "returned 42"),
        ("lambda: [42]", "not a tool"),
    ],
)
def test_selector_bad_results_are_errors(produced: str, problem: str) -> None:
    t1 = as_tool(other).with_name("t1")
    t_db = as_tool(other).with_name("db_context")
    make = eval(produced, {"t1": t1, "t_db": t_db})

    def select() -> object:
        return make()

    model = ScriptedModel([call("db"), reply("ok")])
    result = run(model, "go", tools=[facade("db", "Database.", selector=select)])
    record = result.trace.calls[0]
    assert record.is_error and problem in record.content
    assert offered(model) == [("db",), ("db",)]


def test_selector_with_tools_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="has a selector"):
        Facade("db", "Database.", [other], selector=lambda: [])


def test_selected_tool_clashing_with_offered_tool_is_skipped_with_warning() -> None:
    def select() -> list[Tool]:
        return [as_tool(other).with_description("another other"), as_tool(file_size)]

    model = ScriptedModel([call("db"), reply("ok")])
    result = run(model, "go", tools=[facade("db", "Database.", selector=select), other])
    assert offered(model)[1] == ("db", "other", "db_context", "file_size")
    warnings = events(result, StrategyWarning)
    assert len(warnings) == 1 and "did not add ['other']" in warnings[0].message
    assert "[Not added, the names are taken by other tools: other]" in result.trace.calls[0].content


def test_same_facade_called_twice_in_one_turn_unfolds_once() -> None:
    model = ScriptedModel([calls(call("ops"), call("ops")), reply("ok")])
    result = run(model, "go", tools=[facade("ops", "Operations.", [other])])
    assert offered(model)[1] == ("ops", "ops_context", "other")
    assert [c.added for c in result.trace.changes] == [("ops_context", "other"), ()]
    assert events(result, StrategyWarning) == []


# -- exclusive -----------------------------------------------------------------------


def test_exclusive_hides_every_other_tool_for_the_rest_of_the_run() -> None:
    tool = facade("files", "File tools.", [read_file, write_file], exclusive=True)
    model = ScriptedModel(
        [call("files", {"category": "read"}), call("read_file", {"path": "a"}), reply("ok")]
    )
    result = run(model, "go", tools=[other, tool, file_size])
    assert offered(model) == [
        ("other", "files", "file_size"),
        ("files", "files_context", "read_file"),
        ("files", "files_context", "read_file"),
    ]
    (change,) = result.trace.changes
    assert change.removed == ("other", "file_size")
    assert "exclusive: hid other, file_size" in change.reason
    removed = events(result, ToolsRemoved)
    assert [e.tool_names for e in removed] == [("other", "file_size")]
    assert "Every other tool is hidden" in result.trace.calls[0].content


@pytest.mark.parametrize("order", [("files", "meta"), ("meta", "files")])
def test_an_exclusive_facade_wins_over_another_facade_called_in_the_same_turn(
    order: tuple[str, str],
) -> None:
    exclusive = facade("files", "File tools.", [read_file], exclusive=True)
    plain = facade("meta", "Meta tools.", [file_size])
    args = {"files": {"category": "all"}, "meta": {"category": "all"}}
    model = ScriptedModel([calls(*(call(name, args[name]) for name in order)), reply("ok")])
    result = run(model, "go", tools=[other, exclusive, plain])
    # whatever the order of the calls, only the exclusive facade's tools remain
    assert offered(model)[-1] == ("files", "files_context", "read_file")
    assert check_invariants(result.trace, result.messages) == []
    if order[0] == "files":  # the later facade stays folded, and the model is told so
        meta = result.trace.calls[1]
        assert "[Not unfolded after all: the exclusive facade 'files'" in meta.content
        (warning,) = events(result, StrategyWarning)
        assert "facade 'meta' was not unfolded" in warning.message


def test_the_exclusive_claim_lasts_one_run_even_with_a_reused_state() -> None:
    state: dict[str, object] = {}
    for _ in range(2):  # the second run starts clean: "meta" unfolds
        exclusive = facade("files", "File tools.", [read_file], exclusive=True)
        plain = facade("meta", "Meta tools.", [file_size])
        model = ScriptedModel([call("meta", {"category": "all"}), reply("ok")])
        run(model, "go", tools=[exclusive, plain], state=state)
        assert "file_size" in offered(model)[-1]
        model = ScriptedModel(
            [
                calls(call("files", {"category": "all"}), call("meta", {"category": "all"})),
                reply("ok"),
            ]
        )
        run(model, "go", tools=[exclusive, plain], state=state)
        assert offered(model)[-1] == ("files", "files_context", "read_file")


def test_facades_nested_in_the_exclusive_one_still_unfold() -> None:
    inner = Facade("meta", "Meta tools.", [file_size])
    outer = Facade("files", "File tools.", [read_file, inner], exclusive=True)
    model = ScriptedModel([call("files", {"category": "all"}), call("meta"), reply("ok")])
    result = run(model, "go", tools=[other, outer.tool()])
    assert set(offered(model)[-1]) == {
        "files", "files_context", "read_file", "meta", "meta_context", "file_size"
    }  # fmt: skip
    assert check_invariants(result.trace, result.messages) == []


# -- nesting -------------------------------------------------------------------------


def test_nesting_to_depth_three() -> None:
    plain_read = Tool.from_function(read_file)  # no category: plain facades
    plain_write = Tool.from_function(write_file)
    inner = Facade("perms", "Permissions.", [plain_read])
    middle = Facade("users", "Users.", [plain_write, inner])
    outer = Facade("admin", "Admin.", [middle, other])
    tool = outer.tool()
    assert tool.metadata["facade_tree"] == ("admin", "users", "perms")
    model = ScriptedModel([call("admin"), call("users"), call("perms"), reply("ok")])
    result = run(model, "go", tools=[tool])
    assert offered(model) == [
        ("admin",),
        ("admin", "admin_context", "users", "other"),
        ("admin", "admin_context", "users", "other", "users_context", "write_file", "perms"),
        (
            "admin",
            "admin_context",
            "users",
            "other",
            "users_context",
            "write_file",
            "perms",
            "perms_context",
            "read_file",
        ),
    ]
    assert [c.after_call for c in result.trace.changes] == ["admin", "users", "perms"]


def test_cycle_is_detected_at_construction() -> None:
    a = Facade("a", "A.", [other])
    b = Facade("b", "B.", [file_size])
    c = Facade("c", "C.", [read_file])
    a.add(b)
    b.add(c)
    with pytest.raises(FacadeError, match=r"cycle in nested facades: c -> a -> b -> c"):
        c.add(a)
    with pytest.raises(FacadeError, match=r"a -> a"):
        a.add(a)
    assert [getattr(x, "name", None) for x in c.children] == ["read_file"]


def test_nested_facade_tool_with_an_ancestor_name_is_a_cycle() -> None:
    inner = facade("admin", "Another admin.", [other])
    with pytest.raises(FacadeError, match="contains a facade named 'admin' again"):
        Facade("admin", "Admin.", [Facade("users", "Users.", [inner])]).tool()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"description": ""}, "description must be a non-empty text"),
        ({"category_param": "not valid"}, "category_param must be a parameter name"),
        ({"notes": "just one"}, "notes must be a list of texts"),
        ({"selector": 42}, "selector must be a function"),
    ],
)
def test_bad_facade_arguments(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"description": "D.", **kwargs}
    with pytest.raises(UsageError, match=message):
        Facade("x", tools=[other], **arguments)  # type: ignore[arg-type]


def test_empty_facade_and_bad_inner_names() -> None:
    with pytest.raises(UsageError, match="has no inner tools"):
        facade("x", "X.")
    with pytest.raises(FacadeError, match="duplicates \\['other'\\]"):
        facade("x", "X.", [other, as_tool(other)])
    with pytest.raises(FacadeError, match="reserved names \\['x_context'\\]"):
        facade("x", "X.", [as_tool(other).with_name("x_context")])


def test_long_facade_name_gets_a_valid_context_name() -> None:
    name = "f" * 60
    model = ScriptedModel([call(name), reply("ok")])
    run(model, "go", tools=[facade(name, "Long.", [other])])
    added = offered(model)[1][1]
    assert added != f"{name}_context" and len(added) <= 64 and added.startswith("f")


def test_deferred_change_is_applied_by_declared_changes_only_without_errors() -> None:
    from harness.loop import DeclaredChanges

    tool = facade("ops", "Operations.", [other])
    result = tool.prepare("{}", CallContext())
    assert not isinstance(result, Exception)
    value = result.run_sync()  # type: ignore[union-attr]
    assert callable(value.change)
    from harness.tools import Toolset

    toolset = Toolset([tool])
    context = InjectionContext(
        history=[],
        offered=toolset.names,
        tools=toolset.view(),
        iteration=1,
        state={},
        result=value,
    )
    change = DeclaredChanges().on_tool_result(context)
    assert isinstance(change, ToolsetChange)
    assert change.strategy == "unfolding"
    assert [t.name for t in change.add] == ["ops_context", "other"]


def test_selector_may_return_a_toolset() -> None:
    from harness.tools import Toolset

    model = ScriptedModel([call("db"), reply("ok")])
    run(model, "go", tools=[facade("db", "Database.", selector=lambda: Toolset([other]))])
    assert offered(model)[1] == ("db", "db_context", "other")


def test_deferred_change_returning_none_or_junk() -> None:
    from harness.loop import DeclaredChanges
    from harness.tools import ToolResult

    def context_with(change: object) -> InjectionContext:
        return InjectionContext(
            history=[],
            offered=(),
            tools={},
            iteration=1,
            state={},
            result=ToolResult(content="x", change=change),
        )

    assert DeclaredChanges().on_tool_result(context_with(lambda ctx: None)) is None
    with pytest.raises(TypeError, match="must be a ToolsetChange or a function"):
        DeclaredChanges().on_tool_result(context_with(lambda ctx: "junk"))
