"""Each provider rule the cache model applies, on hand-made prompts (pieces of known size)."""

from __future__ import annotations

import dataclasses

import pytest

from harness import UsageError
from harness.cost import CacheRules, Prompt, analyse_prompts, cache_rules
from harness.cost._analysis import Block
from harness.formats.openai_responses import prompt_pieces


class Fixed:
    """Counts every piece as ``size`` tokens, whatever its text."""

    name = "fixed"

    def __init__(self, size: int = 100) -> None:
        self.size = size

    def count(self, text: str) -> int:
        return len(text) if text.startswith("#") else self.size


_BLOCKS: dict[str, Block] = {}


def block(text: str, tokens: int = 100, section: str = "messages") -> Block:
    key = f"{section}:{text}"
    if key not in _BLOCKS:
        _BLOCKS[key] = Block(section, text, tokens)  # type: ignore[arg-type]
    return _BLOCKS[key]


def prompt(*texts: str, marks: tuple[int, ...] = (), tools: int = 0, run: int = 1) -> Prompt:
    blocks = [block(t, section="tools" if i < tools else "messages") for i, t in enumerate(texts)]
    return Prompt(blocks=blocks, breakpoints=marks, tool_count=tools, run=run)


def run(rules: CacheRules, *prompts: Prompt) -> list[tuple[int, int]]:
    report = analyse_prompts(list(prompts), rules=rules, tokenizer=Fixed())
    return [(r.cached_tokens, r.cache_write_tokens) for r in report.requests]


ANTHROPIC = dataclasses.replace(cache_rules("anthropic-messages"), tool_prompt_tokens=0)
OPENAI = cache_rules("openai-chat")


def test_anthropic_writes_at_a_breakpoint_once_the_prefix_reaches_the_minimum() -> None:
    short = [f"m{i}" for i in range(10)]  # 1,000 tokens: under 1,024, nothing is written
    assert run(ANTHROPIC, prompt(*short), prompt(*short, "m10")) == [(0, 0), (0, 1100)]
    long = [f"m{i}" for i in range(11)]  # 1,100 tokens
    assert run(ANTHROPIC, prompt(*long), prompt(*long, "m11")) == [(0, 1100), (1100, 100)]


def test_anthropic_reads_only_within_twenty_blocks_of_a_breakpoint() -> None:
    first = [f"m{i}" for i in range(11)]
    grown_19 = [*first, *(f"n{i}" for i in range(19))]  # the entry is 19 blocks back: read
    grown_20 = [*first, *(f"n{i}" for i in range(20))]  # 20 blocks back: out of reach
    assert run(ANTHROPIC, prompt(*first), prompt(*grown_19))[1] == (1100, 1900)
    assert run(ANTHROPIC, prompt(*first), prompt(*grown_20))[1] == (0, 3100)


def test_anthropic_an_explicit_breakpoint_closer_to_the_end_keeps_the_entry_in_reach() -> None:
    first = [f"m{i}" for i in range(11)]
    grown = [*first, *(f"n{i}" for i in range(25))]
    marks = (15,)  # a breakpoint 5 blocks after the first request's end
    assert run(ANTHROPIC, prompt(*first), prompt(*grown, marks=marks))[1] == (1100, 2500)


def test_anthropic_without_automatic_caching_only_marked_blocks_are_cached() -> None:
    manual = dataclasses.replace(ANTHROPIC, automatic=False)
    texts = [f"m{i}" for i in range(12)]
    assert run(manual, prompt(*texts), prompt(*texts, "x")) == [(0, 0), (0, 0)]
    marked = prompt(*texts, marks=(10,))  # tools and the first 11 messages
    assert run(manual, marked, prompt(*texts, "x", marks=(10,))) == [(0, 1100), (1100, 0)]


def test_anthropic_minimum_lengths_follow_the_model() -> None:
    assert cache_rules("anthropic-messages", "claude-opus-4-5-20251101").minimum_tokens == 4096
    assert cache_rules("anthropic-messages", "claude-haiku-4-5").minimum_tokens == 4096
    assert cache_rules("anthropic-messages", "claude-3-haiku-20240307").minimum_tokens == 2048
    assert cache_rules("anthropic-messages", "claude-sonnet-4-5").minimum_tokens == 1024
    assert cache_rules("anthropic-messages", None).minimum_tokens == 1024


def test_openai_caches_every_prefix_from_1024_tokens_in_steps_of_128() -> None:
    texts = [f"m{i}" for i in range(12)]  # 1,200 tokens
    assert run(OPENAI, prompt(*texts), prompt(*texts, "x")) == [(0, 0), (1152, 0)]
    assert run(OPENAI, prompt(*texts[:10]), prompt(*texts[:10], "x")) == [(0, 0), (0, 0)]


def test_openai_a_prefix_may_end_inside_a_piece() -> None:
    """Two requests whose only message shares its first characters (a long common text
    and a different question): the shared characters are read from the cache."""
    shared = "#" + "a" * 1299  # Fixed counts a '#' text by its length: 1,300 tokens
    one, two = block(shared + "one?", 1304), block(shared + "two?", 1304)
    report = analyse_prompts(
        [Prompt(blocks=[one], conversation=one), Prompt(blocks=[two], conversation=two, run=2)],
        rules=OPENAI,
        tokenizer=Fixed(),
    )
    assert [r.cached_tokens for r in report.requests] == [0, 1280]
    assert report.breaks == []  # two conversations, not an edit


def test_a_restart_breaks_at_the_first_difference_and_names_its_reason() -> None:
    first = Prompt(blocks=[block("sys", section="system"), block("ask")], conversation=block("ask"))
    again = Prompt(
        blocks=[block("sys2", section="system"), block("ask")],
        conversation=block("ask"),
        run=2,
        restart_reason="opened a section",
    )
    report = analyse_prompts([first, again], rules=OPENAI, tokenizer=Fixed())
    (only,) = report.breaks
    assert (only.request, only.cause, only.by, only.position) == (
        2,
        "restart",
        "opened a section",
        0,
    )


@pytest.mark.parametrize(
    ("section", "cause"),
    [
        ("system", "system-changed"),
        ("tool_choice", "tool-choice-changed"),
        ("messages", "history-edited"),
    ],
)
def test_the_cause_is_the_section_of_the_first_difference(section: str, cause: str) -> None:
    before = Prompt(blocks=[block("t", section="tools"), block("a", section=section), block("z")])
    after = Prompt(blocks=[block("t", section="tools"), block("b", section=section), block("z")])
    (only,) = analyse_prompts([before, after], rules=OPENAI, tokenizer=Fixed()).breaks
    assert (only.cause, only.section, only.position, only.by) == (cause, section, 1, None)
    assert only.lost_tokens == 200


def test_unknown_formats_are_refused_with_the_choices() -> None:
    with pytest.raises(UsageError, match="openai-chat, openai-responses, anthropic-messages"):
        cache_rules("openai-chats")


def test_a_responses_reasoning_item_counts_without_its_ciphertext() -> None:
    cipher = "gAAAA" + "x" * 4000
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": cipher}
    body = {"model": "gpt-5", "input": [{"role": "user", "content": "hi"}, item]}
    pieces = prompt_pieces(body)
    assert [p.section for p in pieces] == ["messages", "messages"]
    assert cipher not in pieces[1].text and '"id":"rs_1"' in pieces[1].text
