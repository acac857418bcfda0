"""A research agent on a playbook: search is always offered; fetch, summarize and publish
unlock one after another. Planted bug: publish does not check whether the source was
retracted (search, fetch the retracted result, summarize, publish: 4 calls)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from harness import RunResult, llm_tool
from harness.injection import Playbook, unlock


class Library:
    def __init__(self) -> None:
        self.results = [
            {"url": f"https://journal.test/{uuid.uuid4().hex[:6]}", "title": t, "retracted": r}
            for t, r in (
                ("Solar yields", False),
                ("Cold fusion at home", True),
                ("Wind maps", False),
            )
        ]
        self.docs: dict[str, dict[str, Any]] = {}
        self.summaries: dict[str, str] = {}
        self.published: list[dict[str, Any]] = []


def make() -> dict[str, Any]:
    lib = Library()

    @llm_tool
    def search(query: Annotated[str, "What to look for"]) -> list[dict[str, Any]]:
        """Papers on the subject."""
        return lib.results

    @llm_tool
    def fetch(url: Annotated[str, "A paper's url"]) -> dict[str, Any]:
        """Download a paper."""
        found = next((r for r in lib.results if r["url"] == url), None)
        if found is None:
            raise KeyError(f"no paper at {url!r}")
        doc_id = f"doc-{uuid.uuid4().hex[:6]}"
        lib.docs[doc_id] = found
        return {"doc_id": doc_id, "title": found["title"], "retracted": found["retracted"]}

    @llm_tool
    def summarize(doc_id: Annotated[str, "A fetched paper"]) -> dict[str, str]:
        """Summarize a fetched paper."""
        if doc_id not in lib.docs:
            raise KeyError(f"no document {doc_id!r}")
        summary_id = f"sum-{uuid.uuid4().hex[:6]}"
        lib.summaries[summary_id] = doc_id
        return {"summary_id": summary_id}

    @llm_tool
    def publish(summary_id: Annotated[str, "A summary"]) -> str:
        """Publish a summary on the team's blog."""
        doc_id = lib.summaries.get(summary_id)
        if doc_id is None:
            raise KeyError(f"no summary {summary_id!r}")
        lib.published.append(lib.docs[doc_id])  # BUG: retracted papers are published too
        return "published"

    playbook = Playbook(
        always=[search],
        unlocks=[
            unlock(fetch, when="search"),
            unlock(summarize, when="fetch"),
            unlock(publish, when="summarize"),
        ],
        mode="hidden",
    )
    return {
        "prompt": "Write up the latest energy research for the blog.",
        "tools": [],
        "strategies": [playbook],
        "state": {"library": lib},
    }


def nothing_retracted_is_published(run: RunResult) -> None:
    lib: Library = run.state["library"]
    bad = [p["title"] for p in lib.published if p["retracted"]]
    assert not bad, f"retracted papers published: {bad}"


KNOWN_BAD = [
    {"call": "search", "args": {"query": "energy"}},
    {"call": "fetch", "args": {"url": {"$from": "call 1", "path": "[1].url"}}},
    {"call": "summarize", "args": {"doc_id": {"$from": "call 2", "path": "doc_id"}}},
    {"call": "publish", "args": {"summary_id": {"$from": "call 3", "path": "summary_id"}}},
    {"reply": "Done."},
]
