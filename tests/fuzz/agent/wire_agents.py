"""Wire factories for the tests of ``fuzz_agent(..., wire=...)``: hand-written loops over
the ``openai`` and ``anthropic`` SDKs with planted bugs, and broken factories."""

from __future__ import annotations

import json
import uuid
from typing import Any

from harness.scenarios import WireRun

NOTE_TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "list_notes",
            "description": "The user's notes: id and whether it is pinned.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "delete_note",
            "description": "Delete one note.",
            "parameters": {
                "type": "object",
                "properties": {"note_id": {"type": "string"}},
                "required": ["note_id"],
            },
        },
    },
]


class Notes:
    """Two notes with fresh ids, one pinned; deleting the pinned one is the planted bug."""

    def __init__(self) -> None:
        self.notes = {f"n-{uuid.uuid4().hex[:8]}": pinned for pinned in (False, True)}
        self.deleted: list[bool] = []

    def call(self, name: str, args: dict[str, Any]) -> Any:
        if name == "list_notes":
            return [{"note_id": n, "pinned": p} for n, p in self.notes.items()]
        if name == "delete_note":
            self.deleted.append(self.notes.pop(args["note_id"]))  # BUG: pinned notes too
            return "deleted"
        raise KeyError(f"no tool {name!r}")


def _chat_loop(client: Any, notes: Notes, prompt: str, **extra: Any) -> str | None:
    messages: list[Any] = [{"role": "user", "content": prompt}]
    for _ in range(8):
        answer = client.chat.completions.create(
            model="gpt-4o-mini", messages=messages, tools=NOTE_TOOLS, **extra
        )
        message = answer.choices[0].message
        if not message.tool_calls:
            return str(message.content)
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            try:
                result = json.dumps(
                    notes.call(call.function.name, json.loads(call.function.arguments))
                )
            except (KeyError, ValueError, TypeError) as exc:
                result = f"error: {exc}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return None


def notes_chat(base_url: str, api_key: str) -> dict[str, Any]:
    """A hand-written Chat Completions loop (sync) over the ``openai`` SDK."""
    from openai import OpenAI

    client: Any = OpenAI(base_url=base_url, api_key=api_key, max_retries=0)
    notes = Notes()

    def run(prompt: str) -> str | None:
        with client:  # closed when the run ends: one run per agent
            return _chat_loop(client, notes, prompt)

    return {"run": run, "prompt": "Tidy up my notes.", "state": notes}


def notes_chat_async(base_url: str, api_key: str) -> dict[str, Any]:
    """The same loop, ``async`` (``run`` returns a coroutine)."""
    from openai import AsyncOpenAI

    notes = Notes()

    async def run(prompt: str) -> str | None:
        # the client lives on the run's event loop: opened and closed in it
        async with AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0) as opened:
            client: Any = opened
            messages: list[Any] = [{"role": "user", "content": prompt}]
            for _ in range(8):
                answer = await client.chat.completions.create(
                    model="gpt-4o-mini", messages=messages, tools=NOTE_TOOLS
                )
                message = answer.choices[0].message
                if not message.tool_calls:
                    return str(message.content)
                messages.append(message.model_dump(exclude_none=True))
                for call in message.tool_calls:
                    try:
                        args = json.loads(call.function.arguments)
                        result = json.dumps(notes.call(call.function.name, args))
                    except (KeyError, ValueError, TypeError) as exc:
                        result = f"error: {exc}"
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        return None

    return {"run": run, "prompt": "Tidy up my notes.", "state": notes}


def pinned_notes_stay(run: WireRun) -> None:
    notes: Notes = run.state
    assert True not in notes.deleted, "a pinned note was deleted"


def notes_anthropic(base_url: str, api_key: str) -> dict[str, Any]:
    """A hand-written loop over the ``anthropic`` SDK (Messages)."""
    from anthropic import Anthropic

    client: Any = Anthropic(base_url=base_url, api_key=api_key, max_retries=0)
    notes = Notes()
    tools: list[Any] = [
        {
            "name": t["function"]["name"],
            "description": t["function"]["description"],
            "input_schema": t["function"]["parameters"],
        }
        for t in NOTE_TOOLS
    ]

    def run(prompt: str) -> str:
        with client:
            return loop(prompt)

    def loop(prompt: str) -> str:
        messages: list[Any] = [{"role": "user", "content": prompt}]
        for _ in range(8):
            answer = client.messages.create(
                model="claude-test", max_tokens=512, messages=messages, tools=tools
            )
            calls = [b for b in answer.content if b.type == "tool_use"]
            if not calls:
                return "".join(b.text for b in answer.content if b.type == "text")
            messages.append({"role": "assistant", "content": answer.content})
            results = []
            for call in calls:
                try:
                    text = json.dumps(notes.call(call.name, dict(call.input)))
                except (KeyError, ValueError, TypeError) as exc:
                    text = f"error: {exc}"
                results.append({"type": "tool_result", "tool_use_id": call.id, "content": text})
            messages.append({"role": "user", "content": results})
        return ""

    return {"run": run, "prompt": "Tidy up my notes.", "state": notes}


def forced_choice(base_url: str, api_key: str) -> dict[str, Any]:
    """Asks for ``list_notes`` by name on its first request, and for no tool after: a
    model that ignores ``tool_choice`` breaks ``tool_choice_obeyed``."""
    from openai import OpenAI

    client: Any = OpenAI(base_url=base_url, api_key=api_key, max_retries=0)
    notes = Notes()
    answers: list[tuple[str, list[str]]] = []

    def run(prompt: str) -> None:
        with client:
            ask(prompt)

    def ask(prompt: str) -> None:
        messages: list[Any] = [{"role": "user", "content": prompt}]
        choices: list[Any] = [{"type": "function", "function": {"name": "list_notes"}}, "none"]
        for choice in choices:
            answer = client.chat.completions.create(
                model="gpt-4o-mini", messages=messages, tools=NOTE_TOOLS, tool_choice=choice
            )
            message = answer.choices[0].message
            names = [c.function.name for c in message.tool_calls or []]
            answers.append((str(choice if isinstance(choice, str) else "list_notes"), names))
            if not message.tool_calls:
                return
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                result = json.dumps(notes.call(call.function.name, {}))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

    return {"run": run, "prompt": "List my notes.", "state": answers}


def tool_choice_obeyed(run: WireRun) -> None:
    answers: list[tuple[str, list[str]]] = run.state
    for asked, called in answers:
        if asked == "none":
            assert called == [], f"tool_choice 'none' answered with calls {called}"
        else:
            assert called == [asked], f"tool_choice {asked!r} answered with calls {called}"


class RetriesExhausted(Exception):
    """What a framework raises when its retry budget runs out."""


def gives_up(base_url: str, api_key: str) -> dict[str, Any]:
    """A loop that gives up (raises) when a tool fails twice: a framework-level failure,
    the run's ``error``."""
    from openai import OpenAI

    client: Any = OpenAI(base_url=base_url, api_key=api_key, max_retries=0)
    notes = Notes()

    def run(prompt: str) -> str | None:
        with client:
            return loop(prompt)

    def loop(prompt: str) -> str | None:
        failures = 0
        messages: list[Any] = [{"role": "user", "content": prompt}]
        for _ in range(8):
            message = (
                client.chat.completions.create(
                    model="gpt-4o-mini", messages=messages, tools=NOTE_TOOLS
                )
                .choices[0]
                .message
            )
            if not message.tool_calls:
                return str(message.content)
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                try:
                    args = json.loads(call.function.arguments)
                    result = json.dumps(notes.call(call.function.name, args))
                except (KeyError, ValueError, TypeError) as exc:
                    failures += 1
                    if failures > 1:  # a retry budget of one
                        raise RetriesExhausted(f"tool {call.function.name} failed") from exc
                    result = f"error: {exc}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        return None

    return {"run": run, "prompt": "Tidy up my notes.", "state": notes}


def never_gives_up(run: WireRun) -> None:
    assert run.error is None, f"the agent gave up: {type(run.error).__name__}"


def one_argument(base_url: str) -> dict[str, Any]:
    """Broken: takes no api_key."""
    return {"run": print, "prompt": "hi"}


def no_prompt(base_url: str, api_key: str) -> dict[str, Any]:
    """Broken: no prompt."""
    return {"run": print}


def run_not_callable(base_url: str, api_key: str) -> dict[str, Any]:
    """Broken: ``run`` is not a function."""
    return {"run": "agent.run", "prompt": "hi"}


def not_a_dict(base_url: str, api_key: str) -> Any:
    """Broken: returns the run function itself."""
    return print


def never_calls(base_url: str, api_key: str) -> dict[str, Any]:
    """Broken: ``run`` answers without calling the endpoint (its client points elsewhere)."""
    return {"run": lambda prompt: "hello", "prompt": "hi"}


def calls_responses(base_url: str, api_key: str) -> dict[str, Any]:
    """Calls the Responses API: fuzzed with ``--wire openai-chat`` it is the wrong wire."""
    from openai import OpenAI

    client: Any = OpenAI(base_url=base_url, api_key=api_key, max_retries=0)

    def run(prompt: str) -> str:
        with client:
            return str(client.responses.create(model="gpt-4o-mini", input=prompt).output_text)

    return {"run": run, "prompt": "hi"}
