"""The embedded judges' caches are bounded in bytes, whatever the input: a stream of distinct
long words, large JSON passages or large contexts leaves at most a fixed amount behind."""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable

from ground_integrations.judges import _language, _records
from ground_integrations.text import MAX_CACHED_WORD, fold, stem


def _retained(work: Callable[[], None]) -> int:
    """Bytes still allocated after ``work`` and a collection (what caches kept)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        work()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_long_words_are_not_cached() -> None:
    def work() -> None:  # 1 MB of distinct long words, each dropped after use
        for i in range(500):
            stem(fold(f"{i:06d}" + "x" * 2_000))

    assert _retained(work) < 100_000
    assert fold("Hawaiʻi's") == "hawaii" and stem("wrote") == stem("write")
    short = "y" * MAX_CACHED_WORD
    assert fold(short) == short  # short words still go through the cache


def test_large_json_passages_are_not_cached() -> None:
    def work() -> None:  # each passage is dropped after the call: only a cache could keep it
        for i in range(64):
            assert _records.is_record(json.dumps({"id": i, "review": "word " * 10_000}))

    assert _retained(work) < 100_000
    assert _records.is_record('{"name": "Aromi", "food": "Italian"}')
    assert not _records.is_record("  plain text") and not _records.is_record("")


def test_the_language_cache_keeps_samples_not_contexts() -> None:
    def work() -> None:
        for i in range(40):
            context = (f"Context {i}. " + "Some English words here. " * 8_000,)
            assert _language.context_language(context).code == "en"

    assert _retained(work) < 32 * 4 * _language.SAMPLE_CHARS + 200_000


def test_a_long_window_is_read_once_per_check(monkeypatch) -> None:
    """A window sentence too long for the token cache (an unpunctuated page) is tokenized once
    per check, not once per answer sentence it supports: the check stays linear in the answer
    and the context, and nothing of it is kept after the check."""
    from ground_integrations import GroundednessChecker, Verdict
    from ground_integrations.judges import HeuristicJudge
    from ground_integrations.judges._structure import _words

    read: list[int] = []
    tokenize = _words._tokenize

    def counting(text: str):
        read.append(len(text))
        return tokenize(text)

    monkeypatch.setattr(_words, "_tokenize", counting)
    page = " ".join(["the river bank report was alpha beta in the city"] * 600)  # 30k chars
    answer = " ".join(["The river bank report was not alpha beta in the city."] * 60)
    result = GroundednessChecker(HeuristicJudge(), cache_size=0).check([page], answer)
    assert result.verdict is Verdict.NOT_GROUNDED  # the negation is still read, in every sentence
    assert sum(1 for n in read if n > _words.CACHED_CHARS) == 1, read
    assert _words._READ.get() is None  # the block's memory went with it
    assert _words.once("k", lambda: 1) == 1 and _words.once("k", lambda: 2) == 2
