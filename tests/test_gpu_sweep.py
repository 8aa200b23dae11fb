"""The GPU sweep's own arithmetic (training/gpu_sweep.py): its AUROC, the weights it returns,
and the mix it trains on. The training itself runs on a lent accelerator, not here."""

from __future__ import annotations

import json
import lzma
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))

import gpu_sweep


def test_auroc_counts_unsupported_pairs_scored_below_supported_ones() -> None:
    # label 0 = unsupported; a support logit that ranks every unsupported pair lowest is 1.0
    assert gpu_sweep.auroc([-3.0, -1.0, 2.0, 4.0], [0, 0, 1, 1]) == 1.0
    assert gpu_sweep.auroc([3.0, 1.0, -2.0, -4.0], [0, 0, 1, 1]) == 0.0
    # ties count half, and one wrong order out of four pairs costs a quarter
    assert gpu_sweep.auroc([0.0, 0.0], [0, 1]) == 0.5
    assert gpu_sweep.auroc([-1.0, 1.5, 1.0, 2.0], [0, 0, 1, 1]) == 0.75
    # one class only: undefined
    assert gpu_sweep.auroc([1.0, 2.0], [1, 1]) != gpu_sweep.auroc([1.0, 2.0], [1, 1])


def test_auroc_matches_the_pairwise_definition_on_random_scores() -> None:
    rng = random.Random(5)
    scores = [round(rng.gauss(0, 1), 1) for _ in range(200)]
    labels = [rng.randrange(2) for _ in scores]
    pos = [x for x, y in zip(scores, labels) if y == 0]
    neg = [x for x, y in zip(scores, labels) if y == 1]
    expected = sum((a < b) + 0.5 * (a == b) for a in pos for b in neg) / (len(pos) * len(neg))
    assert gpu_sweep.auroc(scores, labels) == pytest.approx(expected)


def write_rows(path: Path, rows: list) -> None:
    with lzma.open(path, "wt", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")


def test_the_mix_repeats_unsupported_pairs_and_replays_as_many_general_ones(tmp_path) -> None:
    write_rows(
        tmp_path / "fold0_train.jsonl.xz",
        [["p1", "c1", 1, "QA"], ["p2", "c2", 0, "QA"], ["p3", "c3", 1, "Summary"]],
    )
    write_rows(
        tmp_path / "fold0_synth.jsonl.xz", [["p", f"edit {i}", 0, "negation"] for i in range(4)]
    )
    pool = [[f"g{i}", f"h{i}", i % 2, "pool"] for i in range(50)]
    write_rows(tmp_path / "general.jsonl.xz", [["gp", "gh", 1, "held"], *pool])
    mixed = gpu_sweep.mix(tmp_path, 0, synthetic=2, rag_train=0, seed=13)
    claims = [c for _, c, _ in mixed]
    # the unsupported in-domain pair three times, the others once, two edits
    assert claims.count("c2") == 3 and claims.count("c1") == 1 and claims.count("c3") == 1
    assert sum(c.startswith("edit") for c in claims) == 2
    # as many replayed general pairs as in-domain ones (3 + 2 + 2 = 7), never a held-out one
    general = [c for c in claims if c.startswith("h")]
    assert len(general) == 7 and "gh" not in claims
    assert mixed == gpu_sweep.mix(tmp_path, 0, synthetic=2, rag_train=0, seed=13)  # seeded


def test_returned_weights_dequantise_within_half_a_step() -> None:
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    weight = torch.randn(64, 128, generator=gen) * 0.05
    weight[3] = torch.abs(weight[3])  # a row with no negative value: zero point at 0
    state = {
        "bert.embeddings.word_embeddings.weight": torch.randn(10, 4, generator=gen),
        "bert.encoder.layer.0.attention.self.query.weight": weight,
        "bert.encoder.layer.0.attention.self.query.bias": torch.randn(64, generator=gen),
    }
    out = gpu_sweep.quantise(state)
    assert "bert.embeddings.word_embeddings.weight" not in out  # frozen: never sent back
    assert torch.equal(
        out["bert.encoder.layer.0.attention.self.query.bias"],
        state["bert.encoder.layer.0.attention.self.query.bias"],
    )
    q = out["bert.encoder.layer.0.attention.self.query.weight"]
    assert q["q"].dtype == torch.uint8 and q["q"].shape == weight.shape
    back = (q["q"].float() - q["zero"].float()[:, None]) * q["scale"][:, None]
    assert torch.all((back - weight).abs() <= q["scale"][:, None] * 0.5 + 1e-7)
    assert torch.all(back[3] >= 0)


def test_a_summary_weighted_mix_repeats_only_the_summary_pairs(tmp_path) -> None:
    write_rows(
        tmp_path / "fold0_train.jsonl.xz",
        [["p1", "c1", 1, "QA"], ["p2", "c2", 0, "Summary"], ["p3", "c3", 1, "Summary"]],
    )
    pool = [[f"g{i}", f"h{i}", i % 2, "pool"] for i in range(50)]
    write_rows(tmp_path / "general.jsonl.xz", [["gp", "gh", 1, "held"], *pool])
    plain = gpu_sweep.mix(tmp_path, 0, synthetic=0, rag_train=0, seed=13)
    mixed = gpu_sweep.mix(tmp_path, 0, synthetic=0, rag_train=0, seed=13, summary_weight=2)
    claims = [c for _, c, _ in mixed]
    # the unsupported summary pair 3 x 2 times, the supported one twice, the QA pair once
    assert claims.count("c2") == 6 and claims.count("c3") == 2 and claims.count("c1") == 1
    assert sum(c.startswith("h") for c in claims) == 9  # as many general pairs again
    assert [c for _, c, _ in plain].count("c2") == 3
    assert gpu_sweep.SUMMARY_WEIGHT["e3-lr1-sum2"] == 2
    assert gpu_sweep.LEARNING_RATE["e3-lr1-sum2"] == 1e-5
