"""A release agent: eight calls, each needing an id from an earlier one. Planted bug: an
approval is not invalidated by a change added after it, so an unreviewed change reaches
production (create, add, request review, approve, add, build, deploy, promote)."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Annotated, Any

from harness import RunResult, llm_tool


def _id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


@dataclasses.dataclass
class Release:
    id: str
    name: str
    changes: list[str] = dataclasses.field(default_factory=list)
    reviewed: list[str] = dataclasses.field(default_factory=list)
    approved: bool = False


class Pipeline:
    def __init__(self) -> None:
        self.releases: dict[str, Release] = {}
        self.reviews: dict[str, tuple[str, list[str]]] = {}
        self.builds: dict[str, tuple[str, list[str]]] = {}
        self.deployments: dict[str, str] = {}
        self.production: list[tuple[str, list[str], list[str]]] = []


def make() -> dict[str, Any]:
    p = Pipeline()

    def release_of(release_id: str) -> Release:
        if release_id not in p.releases:
            raise KeyError(f"no release {release_id!r}")
        return p.releases[release_id]

    @llm_tool
    def create_release(name: Annotated[str, "A name like 'v2.3'"]) -> dict[str, str]:
        """Start a release."""
        release = Release(id=_id("rel"), name=name)
        p.releases[release.id] = release
        return {"release_id": release.id}

    @llm_tool
    def add_change(release_id: str, description: str) -> dict[str, str]:
        """Add a change to a release."""
        change = _id("chg")
        release_of(release_id).changes.append(change)
        return {"change_id": change}

    @llm_tool
    def request_review(release_id: str) -> dict[str, str]:
        """Ask for a review of the release's changes."""
        release = release_of(release_id)
        if not release.changes:
            raise ValueError("nothing to review: add a change first")
        review = _id("rev")
        p.reviews[review] = (release_id, list(release.changes))
        return {"review_id": review}

    @llm_tool
    def approve(review_id: str) -> str:
        """Approve a review."""
        if review_id not in p.reviews:
            raise KeyError(f"no review {review_id!r}")
        release_id, changes = p.reviews.pop(review_id)
        release = release_of(release_id)
        release.approved = True  # BUG: a later add_change does not reset it
        release.reviewed = changes
        return "approved"

    @llm_tool
    def build(release_id: str) -> dict[str, str]:
        """Build an approved release."""
        release = release_of(release_id)
        if not release.approved:
            raise PermissionError("the release is not approved")
        build_id = _id("bld")
        p.builds[build_id] = (release_id, list(release.changes))
        return {"build_id": build_id}

    @llm_tool
    def deploy_staging(build_id: str) -> dict[str, str]:
        """Deploy a build to staging."""
        if build_id not in p.builds:
            raise KeyError(f"no build {build_id!r}")
        deployment = _id("dep")
        p.deployments[deployment] = build_id
        return {"deployment_id": deployment}

    @llm_tool
    def promote(deployment_id: str) -> str:
        """Promote a staging deployment to production."""
        if deployment_id not in p.deployments:
            raise KeyError(f"no deployment {deployment_id!r}")
        release_id, changes = p.builds[p.deployments.pop(deployment_id)]
        p.production.append((release_id, changes, list(p.releases[release_id].reviewed)))
        return "live"

    return {
        "prompt": "Ship the fix for the login bug as release v2.3.",
        "tools": [
            create_release,
            add_change,
            request_review,
            approve,
            build,
            deploy_staging,
            promote,
        ],
        "strategies": [],
        "state": {"pipeline": p},
    }


def promoted_builds_are_reviewed(run: RunResult) -> None:
    p: Pipeline = run.state["pipeline"]
    for release_id, changes, reviewed in p.production:
        unreviewed = [c for c in changes if c not in reviewed]
        assert not unreviewed, f"release {release_id} went live with unreviewed {unreviewed}"


def _arg(key: str, call: int, path: str) -> dict[str, Any]:
    return {key: {"$from": f"call {call}", "path": path}}


KNOWN_BAD = [
    {"call": "create_release", "args": {"name": "v2.3"}},
    {"call": "add_change", "args": {**_arg("release_id", 1, "release_id"), "description": "fix"}},
    {"call": "request_review", "args": _arg("release_id", 1, "release_id")},
    {"call": "approve", "args": _arg("review_id", 3, "review_id")},
    {"call": "add_change", "args": {**_arg("release_id", 1, "release_id"), "description": "more"}},
    {"call": "build", "args": _arg("release_id", 1, "release_id")},
    {"call": "deploy_staging", "args": _arg("build_id", 6, "build_id")},
    {"call": "promote", "args": _arg("deployment_id", 7, "deployment_id")},
    {"reply": "Done."},
]
