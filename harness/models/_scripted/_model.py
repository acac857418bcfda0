"""The scripted model: answers from an ordered list of steps, resolved against offered tools."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast, get_args

from harness._errors import ScriptError
from harness._frozen import maker
from harness._names import did_you_mean, format_names
from harness._validation import assert_never
from harness.formats._search_names import SEARCH_TOOL_NAMES
from harness.loop import (
    Model,
    ModelCapabilities,
    ModelRequest,
    ModelResponse,
    Usage,
    choice_violation,
    follow_up_source,
)
from harness.loop._tool_states import has_native_tools, tool_states
from harness.messages import AssistantMessage, HostedSearch, Message, ToolCall, ToolMessage
from harness.models._scripted._expect_choice import ExpectToolChoice
from harness.models._scripted._steps import (
    CallsStep,
    CallStep,
    ExpectMessage,
    ExpectOffered,
    OutputStep,
    RaiseStep,
    RefuseStep,
    ReplyStep,
    SearchStep,
    Step,
)
from harness.models._scripted._steps_data import step_from_data, steps_from_data
from harness.tools import match_names
from harness.tools._definitions import ToolDefinition
from harness.tools._patterns import PatternTimeout
from harness.tools._search import BM25Index, regex_search

__all__ = ["ScriptedModel"]

_NO_USAGE = Usage()
_STEP_TYPES: tuple[type, ...] = get_args(Step)
_STEP_SET = frozenset(_STEP_TYPES)

_GLOB_CHARS = frozenset("*?[")
_ModelResponse = maker(ModelResponse)  # without type.__call__: see harness/loop/_fast.py

# ``Model(**fields)`` without ``BaseModel.__init__``'s wrapper (validated the same)
_tool_call: Callable[[dict[str, Any]], ToolCall] = ToolCall.__pydantic_validator__.validate_python
_assistant_message: Callable[[dict[str, Any]], AssistantMessage] = (
    AssistantMessage.__pydantic_validator__.validate_python
)


def _matches(pattern: str, names: Sequence[str], name_set: frozenset[str]) -> list[str]:
    if pattern in name_set:  # an offered name (never a glob: names have no glob characters)
        return [pattern]
    if not _GLOB_CHARS.intersection(pattern):
        return []
    return match_names(pattern, names)


def _callable_names(request: ModelRequest) -> tuple[str, ...]:
    """What the model may call: the offered names, less deferred tools not revealed yet
    and the searches the provider runs (a real model cannot call those)."""
    names = request.tool_names
    if request.settings.tool_choice is None and request.tools is _PLAIN[0]:
        return names  # the same plain tools as the last request: nothing to narrow
    if _has_native(request.tools):
        names = tuple(n for n in tool_states(request).offered if n not in _hosted(request))
    choice = request.settings.tool_choice
    if choice is not None and choice.allowed is not None:
        allowed = set(choice.allowed)
        names = tuple(n for n in names if n in allowed)
    return names


_PLAIN: list[Sequence[ToolDefinition] | None] = [None]
"""The last plain tool list seen (by identity)."""


def _has_native(tools: Sequence[ToolDefinition]) -> bool:
    """Whether ``tools`` has deferred, search or namespaced tools (the loop's cache by
    identity: a run's requests share one list while the tools do not change, so 10,000
    plain tools are read once)."""
    native = has_native_tools(tools)
    if not native:
        _PLAIN[0] = tools
    return native


def _hosted(request: ModelRequest) -> frozenset[str]:
    return frozenset(t.name for t in request.tools if t.is_hosted)


def _search(tool: ToolDefinition, step: SearchStep, request: ModelRequest) -> tuple[str, ...]:
    """What the provider's search finds among the request's deferred tools."""
    hidden = set(tool_states(request).deferred)
    candidates = [t for t in request.tools if t.name in hidden]
    if tool.search == "regex":
        return tuple(regex_search(candidates, step.text, step.limit))
    return tuple(BM25Index(candidates).search(step.text, step.limit))


def _show(names: Sequence[str]) -> str:
    return format_names(names, quote=False)


_NAME_SETS: dict[int, tuple[tuple[str, ...], frozenset[str]]] = {}
_MAX_NAME_SETS = 16


def _name_set(names: tuple[str, ...]) -> frozenset[str]:
    """``frozenset(names)``, remembered for the last few tuples seen by identity
    (toolsets reuse their names tuple across requests and runs, so a fresh model need
    not rebuild the set for 10,000 tools)."""
    known = _NAME_SETS.get(id(names))
    if known is not None and known[0] is names:
        return known[1]
    found = frozenset(names)
    if len(_NAME_SETS) >= _MAX_NAME_SETS:
        _NAME_SETS.clear()
    _NAME_SETS[id(names)] = (names, found)  # the tuple is kept, so its id stays its own
    return found


class ScriptedModel(Model):
    """A fake model that plays a script.

    Steps call tools (exact names or globs resolved against the tools offered at
    that turn), reply, return structured output, refuse, raise provider errors, or
    assert what is offered; response steps may carry token ``usage`` and a
    ``finish_reason``. It records every request in ``requests``. Strict by default:
    calling a tool that is not offered is a script error; ``lenient=True`` sends the
    name anyway.
    """

    __test__ = False
    capabilities = ModelCapabilities(allowed_tools=True)
    """What the loop may ask of it: what Chat Completions supports (allowed subsets, no
    provider-run tool search, no tools added mid-conversation), so ``ToolSearch()`` offers
    the local ``tool_search`` tool as it does through the Chat adapter, and a scripted trace
    names the tools a Chat trace names. To stand for another provider,
    ``with_capabilities(model, **fields)`` or ``CapabilitiesOverride(model,
    ANTHROPIC_CAPABILITIES)``: ``search`` steps then play that provider's search, and
    additions reach it as a system message."""

    def __init__(
        self,
        steps: Sequence[Step | Mapping[str, Any]],
        *,
        lenient: bool = False,
        require_exhausted: bool = True,
        name: str = "scripted",
    ) -> None:
        self.steps: list[Step]
        if all(type(s) in _STEP_SET for s in steps):  # built steps: no Mapping check each
            self.steps = cast("list[Step]", list(steps))
        else:
            self.steps = [
                s if not isinstance(s, Mapping) else step_from_data(s, i)
                for i, s in enumerate(steps)
            ]
        for index, step in enumerate(self.steps):
            if not isinstance(step, _STEP_TYPES):
                raise ScriptError(
                    f"step {index + 1}: {step!r} is not a step; build steps with call(), "
                    "calls(), reply(), output(), refuse(), raise_error(), expect_offered() or "
                    "expect_message()"
                )
        self.lenient = lenient
        self.require_exhausted = require_exhausted
        self.name = name
        self.requests: list[ModelRequest] = []
        """Every request seen, in order."""
        self.position = 0
        """Index of the next step."""
        self._call_counter = 0
        self._names_key: tuple[str, ...] | None = None
        self._name_set: frozenset[str] = frozenset()

    @classmethod
    def from_data(cls, data: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        """Build from plain data (e.g. the ``steps`` list of a YAML scenario)."""
        return cls(steps_from_data(data), **kwargs)

    @property
    def remaining(self) -> list[Step]:
        """Steps not played yet."""
        return self.steps[self.position :]

    def reset(self) -> None:
        """Rewind to the first step and forget recorded requests."""
        self.position = 0
        self._call_counter = 0
        self.requests.clear()

    def request(self, request: ModelRequest) -> ModelResponse:
        __tracebackhide__ = True  # pytest shows the test's line, not this frame
        self.requests.append(request)
        if request.settings.tool_choice is None and request.tools is _PLAIN[0]:
            names = request.tool_names  # the same plain tools as before: all callable
        else:
            names = _callable_names(request)
        if names is not self._names_key:
            self._names_key = names
            self._name_set = _name_set(names)
        while True:
            if self.position >= len(self.steps):
                raise ScriptError(
                    f"script ran out: iteration {request.iteration} asked for a response but all "
                    f"{len(self.steps)} steps were used; add a step (e.g. reply(...)). "
                    f"Offered tools: {_show(names)}"
                )
            step = self.steps[self.position]
            self.position += 1
            if type(step) is CallStep:  # the common case, without _respond's dispatch
                return self._calls_response((step,), step, names, request)
            if isinstance(step, ExpectOffered):
                self._check_offered(step, names)
                continue
            if isinstance(step, ExpectMessage):
                self._check_message(step, request)
                continue
            if isinstance(step, ExpectToolChoice):
                problem = step.problem(request.settings.tool_choice)
                if problem is not None:
                    raise ScriptError(
                        f"{self._where()}: {problem} (request of iteration {request.iteration})"
                    )
                continue
            return self._respond(step, request)

    def _where(self) -> str:
        step = self.steps[self.position - 1]
        return f"step {self.position} ({step.describe()})"

    def _check_offered(self, step: ExpectOffered, names: tuple[str, ...]) -> None:
        __tracebackhide__ = True  # pytest shows the test's line, not this frame
        problems = []
        for pattern in step.includes:
            if not _matches(pattern, names, self._name_set):
                problems.append(f"expected {pattern!r} to be offered")
        for pattern in step.excludes:
            found = _matches(pattern, names, self._name_set)
            if found:
                problems.append(f"expected {pattern!r} not to be offered, found {found}")
        if step.exactly is not None:
            expected = set()
            for pattern in step.exactly:
                expected.update(_matches(pattern, names, self._name_set) or [pattern])
            if expected != self._name_set:
                missing = sorted(expected - self._name_set)
                extra = sorted(self._name_set - expected)
                problems.append(
                    f"expected exactly {list(step.exactly)}: missing {missing}, extra {extra}"
                )
        if problems:
            raise ScriptError(
                f"{self._where()}: " + "; ".join(problems) + f". Offered: {_show(names)}"
            )

    def _arrived(self, request: ModelRequest) -> Sequence[Message]:
        """The messages new since the previous request (all of them on the first)."""
        messages = request.messages
        if len(self.requests) >= 2:
            before = len(self.requests[-2].messages)
            if before <= len(messages):
                return messages[before:]
        return messages

    def _check_message(self, step: ExpectMessage, request: ModelRequest) -> None:
        __tracebackhide__ = True  # pytest shows the test's line, not this frame
        arrived = self._arrived(request)
        for message in arrived:
            if _message_matches(step, message):
                return
        shown = "; ".join(_describe_message(m) for m in arrived) or "nothing"
        raise ScriptError(
            f"{self._where()}: no message that arrived since the model's previous turn "
            f"matched (request of iteration {request.iteration}). Arrived instead: {shown}"
        )

    def _resolve(self, step: CallStep, names: tuple[str, ...]) -> str:
        __tracebackhide__ = True  # pytest shows the test's line, not this frame
        found = _matches(step.name, names, self._name_set)
        if step.rank is not None and len(found) >= step.rank:
            return found[step.rank - 1]
        if step.rank is not None:
            raise ScriptError(
                f"{self._where()}: {step.name!r} matches {len(found)} offered tool(s), "
                f"rank {step.rank} asked. Offered: {_show(names)}"
            )
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise ScriptError(
                f"{self._where()}: glob {step.name!r} matches several offered tools: {found}; "
                f"make it specific enough to match one. Offered: {_show(names)}"
            )
        if self.lenient and not _GLOB_CHARS.intersection(step.name):
            return step.name
        kind = "glob" if _GLOB_CHARS.intersection(step.name) else "tool"
        raise ScriptError(
            f"{self._where()}: {kind} {step.name!r} matches no offered tool"
            f"{did_you_mean(step.name, names)} (a real model could not call it). "
            f"Offered: {_show(names)}"
        )

    def _arguments(self, step: CallStep, request: ModelRequest) -> str:
        __tracebackhide__ = True  # pytest shows the test's line, not this frame
        args = step.arguments
        if args is None:
            return "{}"
        if step.arguments_json is not None:  # a mapping: encoded once per step
            return step.arguments_json
        if isinstance(args, str):
            return args
        if callable(args):
            args = args(request)
            if isinstance(args, str):
                return args
        return json.dumps(args)

    def _respond(
        self, step: Step, request: ModelRequest, names: tuple[str, ...] | None = None
    ) -> ModelResponse:
        __tracebackhide__ = True  # pytest shows the test's line, not this frame
        if names is None:
            names = _callable_names(request)
        match step:
            case CallStep():  # the common case first
                return self._calls_response((step,), step, names, request)
            case SearchStep():
                return self._search_response(step, request, names)
            case CallsStep():
                return self._calls_response(step.calls, step, names, request)
            case RaiseStep():
                raise step.error()
            case RefuseStep():
                return ModelResponse(
                    message=AssistantMessage(refusal=step.text),
                    finish_reason="stop",
                    usage=step.usage or _NO_USAGE,
                    model_name=self.name,
                )
            case ReplyStep() | OutputStep():
                text = step.text if isinstance(step, ReplyStep) else step.text()
                answer = AssistantMessage(content=text)
                self._obey(request, answer)
                return ModelResponse(
                    message=answer,
                    finish_reason=step.finish_reason or "stop",
                    usage=step.usage or _NO_USAGE,
                    model_name=self.name,
                )
            case ExpectOffered() | ExpectMessage() | ExpectToolChoice():  # pragma: no cover
                raise AssertionError(f"{step!r} is a check, not a response")
            case _:  # pragma: no cover - every step type is checked in __init__
                assert_never(step)

    def _search_response(
        self, step: SearchStep, request: ModelRequest, names: tuple[str, ...]
    ) -> ModelResponse:
        """A provider-run search joined to the next step's response, or a call of the
        client search tool."""
        searches = [t for t in request.tools if t.search is not None] or [
            # behind a wire fake a client search is a plain function: known by its name
            dataclasses.replace(t, search="client")
            for t in request.tools
            if t.name == SEARCH_TOOL_NAMES["client"]
        ]
        if not searches:
            raise ScriptError(
                f"{self._where()}: the request offers no tool search (declare one, e.g. with "
                f"harness.injection.ToolSearch). Offered: {_show(names)}"
            )
        tool = searches[0]
        self._call_counter += 1
        if tool.search == "client":
            arguments = step.query if isinstance(step.query, Mapping) else {"query": step.query}
            return self._calls_response(
                (CallStep(name=tool.name, arguments=arguments, id=step.id),),
                CallStep(name=tool.name),
                (*names, tool.name) if tool.name not in names else names,
                request,
            )
        try:
            found = step.found if step.found is not None else _search(tool, step, request)
        except (PatternTimeout, ValueError) as exc:  # a pattern that backtracks or is invalid
            raise ScriptError(
                f"{self._where()}: the {tool.search} search for {step.text!r} failed: {exc}; "
                "use a simpler pattern, or give the tools it finds with search(found=[...])"
            ) from None
        if isinstance(step.query, Mapping):
            arguments = dict(step.query)
        else:
            arguments = {"pattern" if tool.search == "regex" else "query": step.query}
        hosted = HostedSearch(
            id=step.id or f"search_{self._call_counter}",
            tool=tool.name,
            arguments=json.dumps(arguments),
            found=found,
        )
        if self.position >= len(self.steps):
            raise ScriptError(
                f"{self._where()}: a provider-run search is part of a turn: add the step "
                "the model takes after it (a call of a found tool, or a reply)"
            )
        following = self.steps[self.position]
        self.position += 1
        if isinstance(following, (ExpectOffered, ExpectMessage)):
            raise ScriptError(
                f"{self._where()}: a check cannot follow a provider-run search (the search "
                "and the next step are one response)"
            )
        extended = (*names, *(n for n in found if n not in names))
        self._names_key, self._name_set = extended, _name_set(extended)
        response = self._respond(following, request, extended)
        message = response.message.model_copy(
            update={"searches": (hosted, *response.message.searches)}
        )
        return dataclasses.replace(response, message=message)

    def _calls_response(
        self,
        call_steps: tuple[CallStep, ...],
        step: CallStep | CallsStep,
        names: tuple[str, ...],
        request: ModelRequest,
    ) -> ModelResponse:
        __tracebackhide__ = True  # pytest shows the test's line, not this frame
        tool_calls = []
        for call_step in call_steps:
            self._call_counter += 1
            tool_calls.append(
                _tool_call(
                    {
                        "id": call_step.id or f"call_{self._call_counter}",
                        "name": self._resolve(call_step, names),
                        "arguments": self._arguments(call_step, request),
                    }
                )
            )
        message = _assistant_message({"tool_calls": tuple(tool_calls)})
        if request.settings.tool_choice is not None:
            self._obey(request, message)
        return _ModelResponse(
            message=message,
            finish_reason=step.finish_reason or "tool_calls",
            usage=step.usage or _NO_USAGE,
            model_name=self.name,
        )

    def _obey(self, request: ModelRequest, message: AssistantMessage) -> None:
        """A strict script answers as a real model must under the request's tool_choice."""
        __tracebackhide__ = True  # pytest shows the test's line, not this frame
        problem = choice_violation(request.settings.tool_choice, message)
        if problem is not None and not self.lenient:
            raise ScriptError(
                f"{self._where()}: {problem} (request of iteration {request.iteration}); a "
                "real model could not answer so. Fix the script or the tool_choice, or pass "
                "lenient=True"
            )

    def end_run(self, *, completed: bool) -> None:
        __tracebackhide__ = True  # pytest shows the test's line, not this frame
        if completed and self.require_exhausted and self.position < len(self.steps):
            left = ", ".join(
                f"step {i + 1} ({s.describe()})"
                for i, s in enumerate(self.steps[self.position :], start=self.position)
            )
            raise ScriptError(
                f"the run ended after {self.position} of {len(self.steps)} steps; "
                f"not used: {left}. "
                "The model answered before the script expected (or remove the extra steps)."
            )


def _message_matches(step: ExpectMessage, message: Message) -> bool:
    if step.role is not None and message.role != step.role:
        return False
    content = message.content
    if step.contains is not None and (content is None or step.contains not in content):
        return False
    if step.tool is not None or step.call_id is not None:
        source = follow_up_source(content) if message.role == "user" else None
        if source is None:
            return False
        if step.tool is not None and source[0] != step.tool:
            return False
        if step.call_id is not None and source[1] != step.call_id:
            return False
    return True


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _describe_message(message: Message) -> str:
    content = message.content or ""
    if isinstance(message, ToolMessage):
        return f"tool message of {message.name!r} (call {message.tool_call_id}): {_short(content)}"
    if isinstance(message, AssistantMessage) and message.tool_calls:
        return "assistant calls [" + ", ".join(c.name for c in message.tool_calls) + "]"
    source = follow_up_source(content) if message.role == "user" else None
    if source is not None:  # the header names the source; show the result after it
        body = content.split("\n", 1)[1] if "\n" in content else ""
        return f"follow-up of tool {source[0]!r} (call {source[1]}): {_short(body)}"
    return f"{message.role}: {_short(content)}"
