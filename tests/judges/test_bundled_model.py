"""The model shipped in the wheel: loads offline and decides the reference examples.

Runs whenever this install carries the bundled model (``ground_integrations/_model``) and its
runtime; the core install has both.
"""

from __future__ import annotations

import json
import socket

import pytest

from ground_integrations import ConfigurationError, GroundednessChecker, Verdict
from ground_integrations.judges import CrossEncoderJudge, default_judge
from ground_integrations.judges.cross_encoder import bundled_model

from ..conftest import MAUNA_KEA

pytestmark = pytest.mark.skipif(bundled_model() is None, reason="this install has no bundled model")
pytest.importorskip("onnxruntime")

BANK = (
    "I'm 21 years old and I need to make a decision about the next two years of my life. Within a "
    "week. I currently work for a bank that requires strict sales goals to meet. IF they aren't "
    "met three times (three months) you're canned. They pay me 10/hour and it's not unheard of to "
    "get a raise in 6ish months. The issue is, **I'm not a salesperson**. That's not my "
    "personality."
)
BANK_QUERY = "How much does she currently get paid per hour at the bank?"
SUN = "The sun rises from the east due to the visual effect caused by the Earth"
SUN_QUERY = "Where does the sun rise?"
# Azure's sun example is a Summarization request; in that mode the default leaves the decision to
# the heuristic (see docs/model_card.md), which misses this antonym. The model catches it in QnA.


def test_is_the_default_and_runs_without_network(default_checker, monkeypatch) -> None:
    assert isinstance(default_judge(), CrossEncoderJudge)
    assert isinstance(default_checker.judge, CrossEncoderJudge)

    def no_network(*args, **kwargs):
        raise AssertionError("the bundled model must not touch the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    fresh = GroundednessChecker(CrossEncoderJudge(), cache_size=0)
    assert fresh.check([MAUNA_KEA], "Mauna Kea is an inactive volcano.").verdict is not None


@pytest.mark.parametrize(
    ("context", "answer", "query", "task", "expected"),
    [
        (
            [MAUNA_KEA],
            "Mauna Kea is an inactive volcano on the island of Hawaiʻi.",
            "What is Mauna Kea?",
            "QnA",
            Verdict.GROUNDED,
        ),
        (
            [MAUNA_KEA],
            "Its peak is 5,207.3 m above sea level.",
            "How tall is it?",
            "QnA",
            Verdict.NOT_GROUNDED,
        ),
        ([BANK], "10/hour.", BANK_QUERY, "QnA", Verdict.GROUNDED),
        ([BANK], "12/hour.", BANK_QUERY, "QnA", Verdict.NOT_GROUNDED),
        ([SUN], "The sun rises from the east.", SUN_QUERY, "QnA", Verdict.GROUNDED),
        ([SUN], "The sun rises from the west.", SUN_QUERY, "QnA", Verdict.NOT_GROUNDED),
    ],
)
def test_reference_examples(default_checker, context, answer, query, task, expected) -> None:
    result = default_checker.check(context, answer, query, task=task)
    assert result.verdict is expected, result.sentences
    if expected is Verdict.NOT_GROUNDED:
        assert result.ungrounded_details and result.ungrounded_details[0].reason


def test_deterministic_across_runs_and_instances(default_checker) -> None:
    answer = "Mauna Kea is the highest point in Hawaii. It is an active volcano."
    first = default_checker.check([MAUNA_KEA], answer)
    again = default_checker.check([MAUNA_KEA], answer)
    other = GroundednessChecker(CrossEncoderJudge(), cache_size=0).check([MAUNA_KEA], answer)
    assert first.score == again.score == other.score
    assert [s.score for s in first.sentences] == [s.score for s in other.sentences]


def test_pairs_run_as_the_stack_was_fitted(tmp_path) -> None:
    """int8 activations are quantised per run, so a pair's support depends on what it is
    batched with. The bundled stackers were fitted on padded batches, and the judge runs them
    so; a stack fitted on single pairs (``"batching": "pair"``) gets single pairs, each
    support its own whatever the rest of the answer."""
    paragraph = (MAUNA_KEA + " ") * 3, "Mauna Kea is 4,207 meters tall."
    line = "Its peak is 4,207.3 m above sea level.", "Mauna Kea is 4,207 meters tall."
    other = "The summit hosts observatories.", "Mauna Kea is in Hawaii."
    pairs = [line, paragraph, line, other]

    bundled = CrossEncoderJudge(threads=1)
    assert bundled.batching == "padded" and bundled.batch_size == 32
    alone = [bundled.support([p])[0] for p in pairs]
    padded = bundled.support(pairs)
    assert padded[0] == padded[2]  # answers come back in the pairs' order
    # the line moved by its batch mates (by 0.022 with the 7-bit model, 0.03 or more with uint8)
    assert padded[0] != pytest.approx(alone[0], abs=0.01)

    model = bundled_model()
    for name in ("model.onnx", "tokenizer.json", "stack.json"):
        (tmp_path / name).write_bytes((model / name).read_bytes())
    stack = json.loads((model / "stack.json").read_text())
    (tmp_path / "stack.json").write_text(json.dumps({**stack, "batching": "pair"}))
    single = CrossEncoderJudge(tmp_path, threads=1)
    assert single.batching == "pair" and single.batch_size == 1
    assert single.support(pairs) == alone
    assert single.cache_key() != bundled.cache_key()
    # several pairs per run, grouped by length: still in order, close to alone
    bucketed = CrossEncoderJudge(tmp_path, threads=1, batch_size=32).support(pairs)
    assert bucketed[0] == bucketed[2] and bucketed == pytest.approx(alone, abs=0.1)
    with pytest.raises(ConfigurationError, match="batching must be"):
        CrossEncoderJudge(tmp_path, batching="sorted")
