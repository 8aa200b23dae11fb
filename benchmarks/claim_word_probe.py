"""Tried for issue 31, not shipped: the model asked about a summary sentence only where a claim
word differs from its window (a probe within the latency budget), as a veto.

    python benchmarks/claim_word_probe.py --fold-models training/runs/export-rag-fold0 \\
        training/runs/export-rag-fold1 [--out FILE]

For every checked sentence of the Summarization records of ``dev.jsonl`` (scored by the first
fold model, which never trained on dev.jsonl) and ``rag_dev.jsonl`` (each record by the fold model
that did not train on its fold): its claim words that the judge's best three-sentence window
lacks (negation, modal, universal quantifier, cause, comparison; "dropped": a negation of the
window the sentence leaves out) and the model's best support over the windows the QnA profile
reads (one of three sentences, three of one). Printed per group and gate: how many sentences a
check would probe (mean, 95th percentile), and how many hallucinated and grounded answers a
veto at support < 0.1 or < 0.2 would flag.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import load
from ground_integrations import GroundednessChecker
from ground_integrations.judges._checks import written_as_context
from ground_integrations.judges._lexicon import NEGATIONS, UNIVERSALS
from ground_integrations.judges._structure._words import words_of
from ground_integrations.judges.cross_encoder import CrossEncoderJudge, top_windows

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
CLAIM_WORDS = {
    "negation": NEGATIONS,
    "modal": frozenset("must will shall may might could".split()),
    "quantifier": UNIVERSALS | {"only", "never"},
    "cause": frozenset("because due caused causes cause led result thanks".split()),
    "comparison": frozenset({"than"}),
}
GATES = {
    "every checked sentence": None,
    "any claim word, or a dropped negation": (tuple(CLAIM_WORDS), True),
    "any claim word": (tuple(CLAIM_WORDS), False),
    "negation, or a dropped negation": (("negation",), True),
    "negation, modal, quantifier": (("negation", "modal", "quantifier"), False),
}


def changed(sentence: str, window: str, kinds: tuple[str, ...], dropped: bool) -> bool:
    said, given = {t.low for t in words_of(sentence)}, {t.low for t in words_of(window)}
    for kind in kinds:
        words = CLAIM_WORDS[kind]
        if (said & words) - given:
            return True
        if dropped and kind == "negation" and given & words and not said & words:
            return True
    return False


def judge_for(model: Path) -> CrossEncoderJudge:
    bare = Path(tempfile.mkdtemp(prefix="probe-"))
    for name in ("model.onnx", "tokenizer.json"):
        (bare / name).symlink_to((model / name).resolve())
    return CrossEncoderJudge(bare, threads=1, batching="pair")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fold-models", type=Path, nargs=2, required=True)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))
    from rag_data import fold_of

    judges = [judge_for(m) for m in args.fold_models]
    records = [(r, judges[0]) for r in load(DATA / "dev.jsonl") if r["task"] == "Summarization"]
    records += [
        (r, judges[fold_of(r, 2)])
        for r in load(DATA / "rag_dev.jsonl")
        if r["task"] == "Summarization"
    ]
    by_group: dict[str, list[tuple[bool, list[tuple[str, str, float]]]]] = defaultdict(list)
    for r, judge in records:
        checker = GroundednessChecker(judge)
        request = checker.build_request(r["context"], r["answer"], None, task="Summarization")
        index, spans, feats = judge.heuristic.analyse(request)
        sentences = []
        for span, f in zip(spans, feats):
            if not f.checkable:
                continue
            claim = written_as_context(span.text, f.as_context)
            wide = top_windows(index, span.text, 1, 3) or [""]
            narrow = top_windows(index, span.text, 3, 1) or [""]
            support = max(judge.support([(w, claim) for w in wide + narrow]))
            sentences.append((span.text, wide[0], support))
        group = r["dataset"] + ":" + (r.get("subtask") or r["task"])
        by_group[group].append((r["label"] != "grounded", sentences))
    lines = [
        f"{len(records)} Summarization records; supports of the fold model that did not train on each"
    ]
    for gate, spec in GATES.items():
        lines.append(f"\n== probe: {gate}")
        for group, rows in sorted(by_group.items()):

            def probed(text: str, window: str, spec=spec) -> bool:
                return spec is None or changed(text, window, *spec)

            counts = sorted(sum(probed(t, w) for t, w, _ in s) for _, s in rows)
            line = (
                f"  {group:26s} probed sentences per check: mean {statistics.mean(counts):.2f}"
                f", p95 {counts[int(0.95 * len(counts))]}"
            )
            bad = sum(y for y, _ in rows)
            for tau in (0.1, 0.2):
                veto = [any(probed(t, w) and p < tau for t, w, p in s) for _, s in rows]
                tp = sum(v and y for v, (y, _) in zip(veto, rows))
                fp = sum(v and not y for v, (y, _) in zip(veto, rows))
                line += f" | <{tau}: hallucinated {tp}/{bad}, grounded {fp}/{len(rows) - bad}"
            lines.append(line)
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
