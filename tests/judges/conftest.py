from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from . import fake_services


@pytest.fixture
def service() -> Iterator[fake_services.FakeService]:
    svc = fake_services.start()
    yield svc
    svc.close()


LABELS = {0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}


def build_model(
    path: Path, bias: list[float] | None = None, labels: dict[int, str] = LABELS
) -> Path:
    """A tiny random BERT classifier saved under ``path`` (needs torch and transformers)."""
    import torch
    import transformers

    from ground_integrations.text import tokenize

    from ..conftest import BANK, MAUNA_KEA

    words = sorted({w for text in (MAUNA_KEA, BANK) for w in tokenize(text)})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(vocab), encoding="utf-8")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(path / "vocab.txt"))
    tokenizer.save_pretrained(path)
    config = transformers.BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
        num_labels=len(labels),
        id2label=labels,
        label2id={v: k for k, v in labels.items()},
    )
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(config)
    if bias is not None:  # make the classifier's answer known, whatever the input
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.copy_(torch.tensor(bias))
    model.save_pretrained(path)
    return path
