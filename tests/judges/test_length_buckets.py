"""How CrossEncoderJudge groups pairs into runs: by similar token length, nothing lost."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ground_integrations.judges.cross_encoder import length_buckets


@given(st.lists(st.integers(1, 512), max_size=60), st.integers(1, 40))
def test_every_pair_runs_once_within_the_batch_size_and_waste(lengths, batch_size) -> None:
    buckets = length_buckets(lengths, batch_size)
    assert sorted(i for b in buckets for i in b) == list(range(len(lengths)))
    for b in buckets:
        assert 1 <= len(b) <= batch_size
        width = max(lengths[i] for i in b)
        padded = width * len(b)
        real = sum(lengths[i] for i in b)
        assert padded - real <= 0.15 * padded or len(b) == 1
    assert length_buckets(lengths, batch_size) == buckets  # deterministic


def test_short_and_long_pairs_run_apart() -> None:
    lengths = [128, 20, 22, 126, 21]
    assert length_buckets(lengths, 32) == [[1, 4, 2], [3, 0]]
    assert length_buckets([30] * 5, 2) == [[0, 1], [2, 3], [4]]
