"""The cache model: which prefix of each request is read from the provider's cache.

Pure functions over prompts (a request as cache-ordered pieces, ``harness.formats``'s
``prompt_*`` functions). Each request is compared with the previous request of its
conversation: the first differing piece is a **cache break** when it lies before the end
of that request (a changed tool, system prompt, tool choice or earlier message, or a
restarted conversation); appending never breaks. Hits follow the provider's rules
(``CacheRules``): every prefix of a cached request (OpenAI, token-exact within a piece,
in increments) or the entries written at breakpoints, searched ``lookback`` pieces back
(Anthropic).

Speed: a request that extends the previous one costs the work of its new pieces only.
Pieces are interned (one object per distinct text), so prefixes are compared as lists of
identical objects in C, and the running token sums and prefix hashes of the previous
request are reused up to the first difference.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from harness.cost._report import CAUSE_OF_SECTION, CacheBreak, CostReport, RequestCost
from harness.cost._rules import CacheRules
from harness.cost._tokens import Tokenizer
from harness.formats._prompt import PROMPT_SECTIONS, TOOLS, PromptPiece, PromptSection
from harness.loop import ChangeRecord, Trace, Usage

__all__ = ["Block", "Interner", "Prompt", "analyse_prompts"]

_EMPTY = hash("harness.cost: the empty prefix")


class Block:
    """An interned piece: one object per distinct (section, text), with its token count."""

    __slots__ = ("section", "text", "tokens")

    def __init__(self, section: PromptSection, text: str, tokens: int) -> None:
        self.section: PromptSection = section
        self.text = text
        self.tokens = tokens

    def __repr__(self) -> str:
        return f"Block({self.section!r}, {self.tokens} tokens)"


class Interner:
    """Gives each distinct piece one ``Block`` (counted once with the tokenizer)."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self._blocks: dict[tuple[str, str], Block] = {}

    def block(self, piece: PromptPiece) -> Block:
        """The block of ``piece`` (its breakpoint flag is the request's, not the block's)."""
        key = (piece.section, piece.text)
        found = self._blocks.get(key)
        if found is None:
            found = Block(piece.section, piece.text, self.tokenizer.count(piece.text))
            self._blocks[key] = found
        return found


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Prompt:
    """One request, ready for the cache model."""

    blocks: list[Block]
    """Its pieces in the provider's cache order, interned."""
    breakpoints: tuple[int, ...] = ()
    """Indexes of the blocks the request marks as cache breakpoints (explicit marks; the
    automatic one after the last block is added by the rules)."""
    tool_count: int = 0
    """How many leading blocks are tool definitions."""
    run: int = 1
    """The 1-based run (conversation attempt) it belongs to."""
    iteration: int | None = None
    """Its loop iteration in that run, when known."""
    conversation: object = None
    """What identifies its conversation across runs (its first message block): the
    first request of a run is compared with the last request of the same conversation."""
    changes: tuple[ChangeRecord, ...] = ()
    """Change records that may explain a difference from the previous request."""
    restart_reason: str | None = None
    """Why its run restarted the conversation, when the trace says."""
    recorded: Usage | None = None
    """The provider's own usage, for recordings."""


@dataclasses.dataclass(slots=True)
class _Seen:
    """A request already analysed, as later requests compare with it."""

    blocks: list[Block]
    tokens: list[int]
    """``tokens[j]``: tokens of the first ``j`` blocks."""
    hashes: list[int]
    """``hashes[j]``: the hash of the first ``j`` blocks."""
    cached: bool
    """Its prefixes were stored (it reached the minimum length)."""


def _last_holding(high: int, holds: Callable[[int, int], bool]) -> int:
    """The largest ``n <= high`` whose first ``n`` items hold, by halving: ``holds(a, b)``
    says whether items ``a`` to ``b`` hold (a slice compared in C, or a single member)."""
    if holds(0, high):
        return high
    low = 0  # items [0, low) hold, [0, high) do not
    while high - low > 1:
        mid = (low + high) // 2
        if holds(low, mid):
            low = mid
        else:
            high = mid
    return low


def _first_difference(blocks: list[Block], before: list[Block]) -> int:
    """The length of the common prefix of two block lists (compared in C, by identity)."""
    return _last_holding(min(len(blocks), len(before)), lambda a, b: blocks[a:b] == before[a:b])


def _extend(prompt: Prompt, previous: _Seen | None, common: int) -> _Seen:
    blocks = prompt.blocks
    if previous is None:
        tokens, hashes, start = [0], [_EMPTY], 0
    else:
        tokens, hashes, start = previous.tokens[: common + 1], previous.hashes[: common + 1], common
    total, chain = tokens[-1], hashes[-1]
    for block in blocks[start:]:
        total += block.tokens
        chain = hash((chain, id(block)))
        tokens.append(total)
        hashes.append(chain)
    return _Seen(blocks=blocks, tokens=tokens, hashes=hashes, cached=False)


def _first_section(blocks: list[Block], before: list[Block], common: int) -> PromptSection:
    """The section of the first difference: of the two pieces at ``common`` (one may be
    missing), the one earlier in the prompt's order (a removed last tool is a change of
    the tools, not of the message now in its place)."""
    sections = [b[common].section for b in (blocks, before) if common < len(b)]
    return min(sections, key=PROMPT_SECTIONS.index)


def _attribute(changes: Sequence[ChangeRecord]) -> ChangeRecord | None:
    for record in changes:
        if not record.initial and (record.added or record.removed or record.replaced):
            return record
    return None


def _shared_characters(one: str, two: str) -> int:
    """How many leading characters two texts share (slices compared in C)."""
    return _last_holding(min(len(one), len(two)), lambda a, b: one[a:b] == two[a:b])


class _Cache:
    """The provider's cache as the requests fill it."""

    def __init__(self, rules: CacheRules, tokenizer: Tokenizer) -> None:
        self.rules = rules
        self.tokenizer = tokenizer
        self.prefixes: set[int] = {_EMPTY}
        self.next_block: dict[int, Block] = {}
        """For prefix caching: the block that followed each stored prefix (latest)."""

    def _longest_prefix(self, seen: _Seen) -> int:
        """The most blocks of ``seen`` whose prefix is stored (membership is monotone along
        a request's prefixes: a stored request stored all of its own)."""
        hashes, prefixes = seen.hashes, self.prefixes
        return _last_holding(len(hashes) - 1, lambda _, b: hashes[b] in prefixes)

    def _partial(self, seen: _Seen, length: int) -> int:
        """Tokens shared inside the first differing block (a prefix may end mid-block)."""
        if length >= len(seen.blocks):
            return 0
        other = self.next_block.get(seen.hashes[length])
        if other is None:
            return 0
        text = seen.blocks[length].text
        shared = _shared_characters(other.text, text)
        return self.tokenizer.count(text[:shared]) if shared else 0

    def read_prefix(self, seen: _Seen) -> int:
        """Automatic prefix caching: tokens of the longest stored prefix, in increments."""
        rules = self.rules
        length = self._longest_prefix(seen)
        matched = seen.tokens[length] + (self._partial(seen, length) if rules.partial else 0)
        if matched < rules.minimum_tokens:
            return 0
        return min(matched, seen.tokens[-1]) // rules.increment * rules.increment

    def store_prefix(self, seen: _Seen, start: int) -> None:
        """Store every prefix of a request long enough to be cached (from ``start``)."""
        if seen.tokens[-1] < self.rules.minimum_tokens:
            return
        hashes, blocks = seen.hashes, seen.blocks
        self.prefixes.update(hashes[start + 1 :])
        following = self.next_block
        for j in range(start, len(blocks)):
            following[hashes[j]] = blocks[j]
        seen.cached = True

    def read_write_breakpoints(self, seen: _Seen, marks: Sequence[int]) -> tuple[int, int]:
        """Breakpoint caching: ``(read, written)`` tokens. A breakpoint after block ``j``
        reads the longest entry at ``j`` or up to ``lookback - 1`` blocks before it, then
        writes its own entry when the prefix reaches the minimum length."""
        lookback = self.rules.lookback or 0
        lengths = sorted({j + 1 for j in marks})
        hashes, tokens, prefixes = seen.hashes, seen.tokens, self.prefixes
        read = 0
        for length in reversed(lengths):
            for p in range(length, max(length - lookback, 0), -1):
                if hashes[p] in prefixes:
                    read = max(read, tokens[p])
                    break
        written_to = 0
        for length in lengths:
            if tokens[length] >= self.rules.minimum_tokens and tokens[length] > read:
                prefixes.add(hashes[length])
                written_to = tokens[length]
        return read, max(0, written_to - read)


def _with_tool_prompt(prompt: Prompt, overhead: Block) -> Prompt:
    """``prompt`` with the provider's tool-use prompt before its tools (when it has any)."""
    if not prompt.tool_count:
        return prompt
    return dataclasses.replace(
        prompt,
        blocks=[overhead, *prompt.blocks],
        breakpoints=tuple(i + 1 for i in prompt.breakpoints),
        tool_count=prompt.tool_count + 1,
    )


def analyse_prompts(
    prompts: Sequence[Prompt],
    *,
    rules: CacheRules,
    tokenizer: Tokenizer,
    model: str | None = None,
    traces: Sequence[Trace] = (),
) -> CostReport:
    """The cost report of ``prompts`` sent in this order under ``rules``."""
    cache = _Cache(rules, tokenizer)
    if rules.tool_prompt_tokens:
        overhead = Block(TOOLS, "(the provider's tool-use system prompt)", rules.tool_prompt_tokens)
        prompts = [_with_tool_prompt(p, overhead) for p in prompts]
    last_of_run: dict[int, _Seen] = {}
    last_of_conversation: dict[int, tuple[int, _Seen]] = {}
    out: list[RequestCost] = []
    for index, prompt in enumerate(prompts, 1):
        previous = last_of_run.get(prompt.run)
        restarted = False
        if previous is None and prompt.conversation is not None:
            found = last_of_conversation.get(id(prompt.conversation))
            if found is not None and found[0] != prompt.run:
                previous, restarted = found[1], True
        common = 0 if previous is None else _first_difference(prompt.blocks, previous.blocks)
        seen = _extend(prompt, previous, common)
        cache_break = None
        if previous is not None and common < len(previous.blocks):
            section = _first_section(prompt.blocks, previous.blocks, common)
            cause = "restart" if restarted else CAUSE_OF_SECTION[section]
            record = _attribute(prompt.changes) if cause == "tools-changed" else None
            by = record.strategy if record is not None else None
            if restarted:
                by = prompt.restart_reason
            cache_break = CacheBreak(
                request=index,
                cause=cause,
                by=by,
                section=section,
                position=common,
                lost_tokens=previous.tokens[-1] - previous.tokens[common],
                change=record,
            )
        if rules.prefix_caching:
            read, written = cache.read_prefix(seen), 0
            start = common if previous is not None and previous.cached else 0
            cache.store_prefix(seen, start)
        else:
            marks = list(prompt.breakpoints)
            if rules.automatic and prompt.blocks:
                marks.append(len(prompt.blocks) - 1)
            read, written = cache.read_write_breakpoints(seen, marks)
        out.append(
            RequestCost(
                index=index,
                run=prompt.run,
                iteration=prompt.iteration,
                input_tokens=seen.tokens[-1],
                cached_tokens=read,
                cache_write_tokens=written,
                tool_tokens=seen.tokens[prompt.tool_count],
                tools=prompt.tool_count - (prompt.tool_count > 0 and rules.tool_prompt_tokens > 0),
                cache_break=cache_break,
                recorded=prompt.recorded,
            )
        )
        last_of_run[prompt.run] = seen
        if prompt.conversation is not None:
            last_of_conversation[id(prompt.conversation)] = (prompt.run, seen)
    return CostReport(
        rules=rules,
        model=model,
        tokenizer=tokenizer.name,
        requests=tuple(out),
        traces=tuple(traces),
    )
