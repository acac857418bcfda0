"""What an injection costs: the provider's prompt cache, tokens and money, per request.

``analyse(source, format=..., model=...)`` reads the requests a run sent (recorded with
``record_requests()`` or kept by a scripted model) or a cassette, and returns a
``CostReport``: per request the input tokens, the tokens read from and written to the
cache, the tool-definition tokens, and each **cache break** with its cause
(``tools-changed``, ``system-changed``, ``tool-choice-changed``, ``history-edited``,
``restart``) and the strategy that caused it. The provider rules it applies are in
``docs/cost.md`` with their sources. Nothing here is used by the loop.
"""

from harness.cost._analysis import Prompt, analyse_prompts
from harness.cost._api import analyse, analyse_cassette
from harness.cost._prices import Price, PriceTable, load_prices
from harness.cost._record import RecordedRun, RecordingModel, RequestLog, record_requests
from harness.cost._report import BREAK_CAUSES, BreakCause, CacheBreak, CostReport, RequestCost
from harness.cost._rules import FORMATS, CacheRules, cache_rules
from harness.cost._tokens import (
    EstimateTokenizer,
    TiktokenTokenizer,
    Tokenizer,
    default_tokenizer,
    tiktoken_tokenizer,
)

__all__ = [
    "BREAK_CAUSES",
    "FORMATS",
    "BreakCause",
    "CacheBreak",
    "CacheRules",
    "CostReport",
    "EstimateTokenizer",
    "Price",
    "PriceTable",
    "Prompt",
    "RecordedRun",
    "RecordingModel",
    "RequestCost",
    "RequestLog",
    "TiktokenTokenizer",
    "Tokenizer",
    "analyse",
    "analyse_cassette",
    "analyse_prompts",
    "cache_rules",
    "default_tokenizer",
    "load_prices",
    "record_requests",
    "tiktoken_tokenizer",
]
