"""``analyse``: the cost report of requests a harness run sent, or of a recording."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness import _check_sink as _sink
from harness._errors import UsageError
from harness.cassettes import Cassette, load_cassette
from harness.cassettes._model import llm_turns
from harness.cost._analysis import Interner, Prompt, analyse_prompts
from harness.cost._record import RecordedRun, RequestLog, runs_of
from harness.cost._report import CostReport
from harness.cost._rules import FORMATS, CacheRules, cache_rules
from harness.cost._sources import BodyPrompts, NeutralPrompts
from harness.cost._tokens import Tokenizer, checked_tokenizer, default_tokenizer
from harness.formats._prompt import body_model
from harness.loop import ModelRequest, Usage

__all__ = ["analyse", "analyse_cassette"]

DEFAULT_FORMAT = "openai-chat"


def _runs(source: Any) -> list[RecordedRun]:
    if isinstance(source, RequestLog):
        return source.runs
    if isinstance(source, RecordedRun):
        return [source]
    requests = getattr(source, "requests", source)
    if isinstance(requests, Sequence) and not isinstance(requests, (str, bytes)):
        items = list(requests)
        if all(isinstance(r, RecordedRun) for r in items):
            return items
        if all(isinstance(r, ModelRequest) for r in items):
            return runs_of(items)
    raise UsageError(
        "analyse() reads the requests runs sent: a RequestLog (harness.cost.record_requests()), "
        "a list of ModelRequest, a model that keeps them in .requests (ScriptedModel, "
        "RecordingModel), or a cassette file; a trace or a RunResult does not hold them. "
        f"Got {type(source).__name__}: {source!r}"
    )


def _pick(
    rules: CacheRules | None, format: str | None, model: str | None, automatic: bool
) -> CacheRules:
    if rules is not None:
        return rules
    return cache_rules(format or DEFAULT_FORMAT, model, automatic=automatic)


def analyse(
    source: Any,
    *,
    format: str | None = None,
    model: str | None = None,
    tokenizer: Tokenizer | None = None,
    automatic: bool = True,
    rules: CacheRules | None = None,
) -> CostReport:
    """The cache model's report for the requests of ``source``.

    ``source``: a ``RequestLog`` from ``record_requests()`` (runs paired with their
    traces, so breaks are attributed to change records), a list of ``ModelRequest``, a
    model keeping them in ``.requests``, or a cassette (a path or ``Cassette``: the bodies
    as recorded, with the provider's usage beside the model's figures). ``format`` says
    which provider's wire format the requests go out in (``openai-chat`` when not given;
    a cassette says its own); ``model`` picks the minimum cacheable length and the exact
    tokenizer; ``automatic`` (Anthropic) models requests that ask for automatic caching.
    """
    if isinstance(source, (str, Path, Cassette)):
        return analyse_cassette(
            source, model=model, tokenizer=tokenizer, automatic=automatic, rules=rules
        )
    if format is not None and format not in FORMATS:
        cache_rules(format)  # raises the UsageError naming the formats
    runs = _runs(source)
    chosen = _pick(rules, format, model, automatic)
    counter = (
        checked_tokenizer(tokenizer)
        if tokenizer is not None
        else default_tokenizer(chosen.vendor, model)
    )
    prompts = NeutralPrompts(chosen.format, Interner(counter)).prompts(runs)
    report = analyse_prompts(
        prompts,
        rules=chosen,
        tokenizer=counter,
        model=model,
        traces=[r.trace for r in runs if r.trace is not None],
    )
    _sink.record_cost(report)  # the test report's cost summary (under the pytest plugin)
    return report


def analyse_cassette(
    source: str | Path | Cassette,
    *,
    model: str | None = None,
    tokenizer: Tokenizer | None = None,
    automatic: bool = True,
    rules: CacheRules | None = None,
) -> CostReport:
    """The cache model's report for a recording's LLM requests, each beside the usage the
    provider recorded for it (the bodies are read as sent, ``cache_control`` marks
    included; a top-level ``cache_control`` is automatic caching)."""
    cassette = source if isinstance(source, Cassette) else load_cassette(source)
    turns = [(i, c) for i, c in llm_turns(cassette) if i.request.json() is not None]
    if not turns:
        raise UsageError(f"cassette {cassette.name!r} holds no LLM request the harness reads")
    names = {codec.name for _, codec in turns}
    if len(names) > 1:
        raise UsageError(
            f"cassette {cassette.name!r} mixes wire formats ({', '.join(sorted(names))}); "
            "the cache model reads one provider at a time"
        )
    format_name = turns[0][1].name
    if format_name not in FORMATS:
        raise UsageError(f"cassette {cassette.name!r}: no cache model for format {format_name!r}")
    first, codec = turns[0]
    model = model or body_model(first.request.json()) or codec.model_of(first.path)
    # a Bedrock recording's cachePoint blocks are all its checkpoints (no automatic caching)
    automatic = automatic and format_name != "bedrock-converse"
    chosen = rules or cache_rules(format_name, model, automatic=automatic)
    counter = (
        checked_tokenizer(tokenizer)
        if tokenizer is not None
        else default_tokenizer(chosen.vendor, model)
    )
    interner = Interner(counter)
    bodies = BodyPrompts(format_name, interner)
    prompts = _body_prompts(cassette, turns, bodies)
    report = analyse_prompts(prompts, rules=chosen, tokenizer=counter, model=model)
    _sink.record_cost(report)
    return report


def _body_prompts(cassette: Cassette, turns: list[Any], bodies: BodyPrompts) -> list[Prompt]:
    """The prompt of each LLM request, in order; a format with explicit caches (Gemini's
    ``cachedContents``) also has the request that created one (it writes the cache), and
    a request naming a cache is read with the cached prefix in front."""
    module = bodies.module
    entry_of = getattr(module, "cache_entry", None)
    caches: dict[str, Any] = {}
    llm = {id(i): codec for i, codec in turns}
    prompts: list[Prompt] = []
    for interaction in cassette.interactions:
        codec = llm.get(id(interaction))
        if codec is None:
            entry = entry_of and entry_of(
                interaction.method,
                interaction.path,
                interaction.request.json(),
                interaction.response.json(),
            )
            if entry:
                caches[entry[0]] = entry[1]
                prompts.append(bodies.prompt(entry[1]))
            continue
        body = interaction.request.json()
        if caches:
            body = module.with_cached_content(body, caches)
        prompts.append(bodies.prompt(body, recorded=_usage(interaction, codec)))
    return prompts


def _usage(interaction: Any, codec: Any) -> Usage | None:
    try:
        response = codec.decode_response(
            interaction.status, interaction.response.headers, interaction.response.body
        )
    except Exception:  # an error answer or a body the codec cannot read: no figures
        return None
    usage: Usage = response.usage
    return usage if usage.input_tokens else None
