"""The cache model against the providers' own figures, on every real recording that has
them (``cassettes/real`` with its ``cost/`` folders, and ``$HARNESS_CORPUS``); the
folders are iterated, no file is named except to pin a fact of it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness import UsageError
from harness.cassettes import load_cassette
from harness.cassettes._model import llm_turns
from harness.cost import EstimateTokenizer, analyse

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cassettes"))
from corpus import CORPUS, REAL, ids, recordings

COST_FILES = sorted(REAL.rglob("cost/*.yaml"))
ALL_FILES = [*recordings(), *COST_FILES]
SKIP = "no real recordings with usage: cassettes/real/*/cost is empty"


def _recorded(path: Path) -> list[tuple[int, int, int, int, int]]:
    """``(estimate, recorded input, model cached, recorded cached, model written)`` per
    request that has recorded usage."""
    report = analyse(path)
    return [
        (r.input_tokens, r.recorded.input_tokens, r.cached_tokens, r.recorded.cache_read_tokens, 0)
        for r in report.requests
        if r.recorded is not None
    ]


def _declares_hosted_search(path: Path) -> bool:
    """A request of the recording declares a search the provider runs (OpenAI's hosted
    ``tool_search``, Anthropic's ``tool_search_tool_*``), or one of Gemini's built-in tools
    (``codeExecution``, ``googleSearch``): the provider adds an unpublished prompt for
    them (1,963 tokens beside a 26-token request for Gemini's code execution)."""
    for interaction, _ in llm_turns(load_cassette(path)):
        body = interaction.request.json() or {}
        for tool in body.get("tools") or ():
            kind = str(tool.get("type", ""))
            if kind == "tool_search" and tool.get("execution") != "client":
                return True
            if kind.startswith("tool_search_tool_"):
                return True
            if "type" not in tool and not (
                {"functionDeclarations", "function_declarations"} & tool.keys()
            ):
                return True
    return False


@pytest.mark.skipif(not COST_FILES, reason=SKIP)
@pytest.mark.parametrize("path", COST_FILES, ids=ids(COST_FILES))
def test_a_recorded_cache_hit_is_predicted_and_its_size_is_close(path: Path) -> None:
    rows = _recorded(path)
    assert rows, f"{path.name} carries usage"
    assert any(recorded_cached for _, _, _, recorded_cached, _ in rows)
    for estimate, recorded, cached, recorded_cached, _ in rows:
        assert 0.7 <= estimate / recorded <= 1.3, (path.name, estimate, recorded)
        if recorded_cached:
            assert 0.7 <= cached / recorded_cached <= 1.3, (path.name, cached, recorded_cached)
        else:
            assert cached == 0, (path.name, cached)


@pytest.mark.skipif(not ALL_FILES, reason=SKIP)
@pytest.mark.parametrize("path", ALL_FILES, ids=ids(ALL_FILES))
def test_every_real_recording_is_read_and_no_hit_is_invented(path: Path) -> None:
    """Short recorded requests are never cached, and the model says so too; the estimate
    stays within a factor of three of the provider's count (small requests are dominated
    by what each provider adds or leaves out: ids, the tool-use prompt). A recording
    that asks two providers (one conversation continued on another API) is refused
    naming both: the cache model reads one provider's cache at a time."""
    formats = {codec.name for _, codec in llm_turns(load_cassette(path))}
    if len(formats) > 1:
        with pytest.raises(UsageError, match="mixes wire formats"):
            analyse(path)
        return
    report = analyse(path)
    assert report.requests
    hosted = _declares_hosted_search(path)
    for estimate, recorded, cached, recorded_cached, _ in _recorded(path):
        assert estimate <= recorded * 3, (path.name, estimate, recorded)
        if not hosted:  # provider-run searches and Gemini's built-in tools add unpublished prompts
            assert recorded / 3 <= estimate, (path.name, estimate, recorded)
        if not recorded_cached:
            assert cached == 0, (path.name, cached)


def test_known_figures_of_the_shipped_recordings() -> None:
    """The figures ``docs/cost.md`` quotes (recorded beside the model's estimate)."""
    found = {p.name: p for p in COST_FILES}
    name = "openai_responses_deferred_tool_reveal_cached_tokens_3req.yaml"
    if name not in found:
        pytest.skip(f"{name} is not in cassettes/real/openai/cost")
    report = analyse(found[name], tokenizer=EstimateTokenizer())  # the figures of the docs
    assert [r.recorded.cache_read_tokens for r in report.requests if r.recorded] == [0, 3712, 3968]
    assert [r.cached_tokens for r in report.requests] == [0, 4096, 4480]
    assert report.breaks == []  # a tool revealed by a client-side search is appended
    assert CORPUS is None or CORPUS.is_dir()
