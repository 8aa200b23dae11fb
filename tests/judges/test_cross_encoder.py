"""CrossEncoderJudge's mechanics with a tiny random model exported to ONNX here, at test time."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from ground_integrations import (  # noqa: E402
    ConfigurationError,
    GroundednessChecker,
    MissingDependencyError,
    Verdict,
)
from ground_integrations.judges import load_judge  # noqa: E402
from ground_integrations.judges._features import LEXICAL_FEATURES  # noqa: E402
from ground_integrations.judges._revision import LEXICAL_CODE  # noqa: E402
from ground_integrations.judges.cross_encoder import (  # noqa: E402
    MODEL_FEATURES,
    STACK_FEATURES,
    CrossEncoderJudge,
)

from ..conftest import BANK, MAUNA_KEA  # noqa: E402
from .conftest import build_model  # noqa: E402


def export_onnx(src: Path, out: Path) -> Path:
    """The saved classifier at ``src`` as model.onnx and tokenizer.json in ``out``."""
    model = transformers.BertForSequenceClassification.from_pretrained(src)
    model.eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(src)
    out.mkdir(parents=True, exist_ok=True)
    sample = tokenizer(["a b"], ["c"], return_tensors="pt")
    torch.onnx.export(
        model,
        (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
        str(out / "model.onnx"),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={
            k: {0: "b", 1: "s"} for k in ("input_ids", "attention_mask", "token_type_ids")
        },
        opset_version=17,
        dynamo=False,
    )
    tokenizer.backend_tokenizer.save(str(out / "tokenizer.json"))
    return out


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    src = build_model(tmp_path_factory.mktemp("ce") / "hf", labels={0: "LABEL_0"})
    out = export_onnx(src, tmp_path_factory.mktemp("ce") / "onnx")
    # the lexical stage is always unsure (band 0-1), and the model stage leans on the model:
    # unsupported -> notGrounded
    lexical = {
        "features": list(LEXICAL_FEATURES),
        "bias": 0.0,
        "coef": [0.0] * len(LEXICAL_FEATURES),
    }
    model = {
        "features": list(STACK_FEATURES),
        "bias": -6.0,
        "coef": [0.0] * len(LEXICAL_FEATURES) + [12.0] + [0.0] * (len(MODEL_FEATURES) - 1),
    }
    profile = {"lexical": lexical, "model": model, "band": [0.0, 1.0], "sentences": 10}
    stack = {
        "version": "3",
        "profiles": {p: profile for p in ("QnA", "Summarization")},
        "thresholds": {"grounded": 0.5, "not_grounded": 0.45},
    }
    (out / "stack.json").write_text(json.dumps(stack), encoding="utf-8")
    return out


def test_scores_pairs_deterministically_in_batches(model_dir) -> None:
    one = CrossEncoderJudge(model_dir, batch_size=1)
    many = CrossEncoderJudge(model_dir, batch_size=32)
    pairs = [(MAUNA_KEA, "Mauna Kea is a volcano."), (BANK, "They pay me 10/hour."), ("x", "y")]
    a, b = one.support(pairs), many.support(pairs)
    assert all(0.0 <= p <= 1.0 for p in a)
    assert [round(p, 5) for p in a] == [round(p, 5) for p in b]


async def test_judges_end_to_end_sync_and_async(model_dir) -> None:
    judge = load_judge("cross-encoder", model_path=str(model_dir))
    answer = "Mauna Kea is an inactive volcano. They pay me 10/hour."
    sync = GroundednessChecker(judge, cache_size=0).check([MAUNA_KEA, BANK], answer)
    asyn = await GroundednessChecker(judge, cache_size=0).acheck([MAUNA_KEA, BANK], answer)
    assert sync.score == asyn.score and isinstance(sync.verdict, Verdict)
    assert len(sync.sentences) == 2 and sync.judge.version.startswith("2+stack.3+")


def test_heuristic_hard_checks_still_apply(model_dir) -> None:
    r = GroundednessChecker(CrossEncoderJudge(model_dir)).check(
        [MAUNA_KEA], "Its peak is 5,207.3 m above sea level."
    )
    assert r.verdict is Verdict.NOT_GROUNDED and "5,207.3" in r.sentences[0].reason


def test_missing_files_and_dependencies(model_dir, tmp_path, monkeypatch) -> None:
    with pytest.raises(ConfigurationError, match=r"model\.onnx"):
        CrossEncoderJudge(tmp_path)
    for name in ("model.onnx", "tokenizer.json"):
        (tmp_path / name).write_bytes((model_dir / name).read_bytes())
    with pytest.raises(ConfigurationError, match=r"stack\.json is missing"):
        GroundednessChecker(CrossEncoderJudge(tmp_path)).check(
            [MAUNA_KEA], "Mauna Kea is a volcano."
        )
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(MissingDependencyError, match=r"pip install onnxruntime tokenizers") as info:
        CrossEncoderJudge(model_dir).support([("a", "b")])
    assert "[model]" not in str(info.value)  # the core install carries them, no extra


def test_stack_names_its_model_in_the_version_and_refuses_another(model_dir, tmp_path) -> None:
    import hashlib

    from ground_integrations.judges.cross_encoder import model_digest

    for name in ("model.onnx", "tokenizer.json"):
        (tmp_path / name).write_bytes((model_dir / name).read_bytes())
    stack = json.loads((model_dir / "stack.json").read_text())
    digest = model_digest((model_dir / "model.onnx").read_bytes())
    (tmp_path / "stack.json").write_text(json.dumps({**stack, "model": digest}))
    judge = CrossEncoderJudge(tmp_path)
    # the version names the fit (the model's digest and every fitted number): results, caches
    # and calibrations of one fit are kept apart from another's
    fit = hashlib.sha256((tmp_path / "stack.json").read_bytes()).hexdigest()[:8]
    assert judge.version == f"2+stack.3+{fit}+lex.{LEXICAL_CODE}"
    assert judge.version != CrossEncoderJudge(model_dir).version
    assert judge.cache_key() != CrossEncoderJudge(model_dir).cache_key()
    assert 0.0 <= judge.support([("a b", "c")])[0] <= 1.0
    # the stackers were fitted for another model: a clear error, not silent nonsense
    (tmp_path / "stack.json").write_text(json.dumps({**stack, "model": "0" * 12}))
    with pytest.raises(ConfigurationError, match=r"fitted for model 0{12}.*refit"):
        CrossEncoderJudge(tmp_path).support([("a b", "c")])


def test_refitted_stackers_are_another_version(model_dir, tmp_path) -> None:
    """Same model, one fitted number changed: another judge for caches and calibrations."""
    for name in ("model.onnx", "tokenizer.json", "stack.json"):
        (tmp_path / name).write_bytes((model_dir / name).read_bytes())
    before = CrossEncoderJudge(tmp_path)
    stack = json.loads((tmp_path / "stack.json").read_text())
    stack["profiles"]["QnA"]["lexical"]["bias"] += 0.5
    (tmp_path / "stack.json").write_text(json.dumps(stack))
    after = CrossEncoderJudge(tmp_path)
    assert before.version != after.version and before.cache_key() != after.cache_key()
    assert before.version.startswith("2+stack.3+") and after.version.startswith("2+stack.3+")


def test_a_model_with_several_outputs_per_pair_is_refused(tmp_path) -> None:
    """A three-way NLI export is not a cross-encoder: one logit per pair or a clear error."""
    src = build_model(tmp_path / "hf")  # three labels
    out = export_onnx(src, tmp_path / "onnx")
    with pytest.raises(ConfigurationError, match=r"3 outputs per pair.*one logit"):
        CrossEncoderJudge(out).support([("a b", "c"), ("c", "a")])
