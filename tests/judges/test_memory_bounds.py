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
