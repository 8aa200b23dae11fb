"""Fit the default judge's span ranker and narrowers (``spans.json``) and measure their
character span F1.

A flagged answer's doubted sentences (those flagged, and those passing with a score below
``_ranking.DOUBTED_BELOW``) are reread (``judges/_ranking.py``): a logistic model over the
model's support and the sentence's lexical evidence says which of them hold the invention; the
flagged others are cleared and the passing ones it keeps are flagged. This script runs the default judge over the span-labelled RAGTruth
answers (``rag_dev.jsonl`` and the RAGTruth records of ``dev.jsonl``), each record read by the
cross-encoder that did not train on it (the fold models of ``training/run_in_domain.sh``, as in
``fit_default.py``), and collects every ranked sentence's features, whether it overlaps an
annotated span, and the judge's narrowed spans for it.

The narrower (``judges/_narrowing.py``) then chooses, word by word, which words of each kept
sentence carry the invention: a logistic model over ``WORD_FEATURES`` (the judge's marks, the
clause they sit in, what the context lacks), fitted on the words of the flagged and doubted
sentences, each labelled by whether it lies in an annotated span.

A profile's margin (``_ranking.outranked``, ``--margin``) then clears the flagged sentences of
a flagged answer that score more than it above the weakest flagged one: the margin with the best
span F1 after the ranker and narrowers, or none.

It prints, per group, the character-level span F1 of the judge's spans without the ranker and
narrower, with the ranker, with the narrower, with both, and as shipped (both and the
margins), over ``--seeds`` random grouped 5-fold splits (a source's answers stay on one side;
the narrowers, the ranker, the margins and their cuts are fitted on the other four folds, the
narrowers first, the margins last). The answer verdicts are the shipped stack's (fitted on
these records: read the cross-validated balanced accuracies in ``repeated_cv_default.txt``);
only the choice of sentences and words is held out. ``--write`` fits all three on every record
and writes ``spans.json`` into ``--out``.

    python benchmarks/fit_spans.py --fold-models src/ground_integrations/_model \\
        training/fold_models/e3-lr1-fold1 --seeds 20 --write
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "training"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from fit_default import MonotoneLogistic  # noqa: E402
from ground_integrations.judges import _ranking  # noqa: E402
from ground_integrations.judges._narrowing import (  # noqa: E402
    Narrower,
    chosen_spans,
    kept_words,
    word_vectors,
)
from ground_integrations.judges._ranking import (  # noqa: E402
    RANK_FEATURES,
    Ranker,
    is_pinned,
    keep,
    margin_kept,
)
from ground_integrations.judges.cross_encoder import (  # noqa: E402
    BUNDLED_MODEL,
    CrossEncoderJudge,
)
from ground_integrations.models import GroundednessRequest, Verdict  # noqa: E402

#: The features that say a sentence lacks support: their coefficients are kept >= 0.
BADNESS = ("unsupported", "weak", "hard", "missing_words", "missing_stems", "plain_missing")
CUTS = np.round(np.arange(0.05, 0.81, 0.05), 2)
#: rag_dev's three subtasks, whose characters are also pooled into one figure
RAG_DEV = (
    "ragtruth:QnA:QA",
    "ragtruth:Summarization:Data2txt",
    "ragtruth:Summarization:Summary",
)
POOLED = "rag_dev (the three pooled)"
#: the margins tried (``_ranking.outranked``)
MARGINS = (0.02, 0.05, 0.08, 0.1, 0.15, 0.2, 0.3)
#: the narrowers' cuts tried
WORD_CUTS = np.round(np.arange(0.05, 0.76, 0.05), 2)


class _Collecting(CrossEncoderJudge):
    """The judge, ranking nothing, that keeps what its ranker would have read."""

    def __init__(self, model_path: Path, session_from: Path | None) -> None:
        super().__init__(model_path)
        if session_from is not None:  # the shipped stack on a fold model
            self._session, self._tokenizer = CrossEncoderJudge(session_from)._load()
        n = len(RANK_FEATURES)
        dummy = Ranker(0.0, (0.0,) * n, (0.0,) * n, (1.0,) * n, 1.0)
        self.rankers = {name: dummy for name in self.profiles or {}}
        self.narrowers = {}  # the words as the judge marks them
        self.margins = {}  # every flagged sentence stays flagged
        self.seen: tuple[str, dict[int, list[float]], set[int], set[int]] = ("", {}, set(), set())

    def _rank(self, name, ranker, index, spans, feats, scores, support, given, budget):  # type: ignore[no-untyped-def]
        vectors = self._rank_vectors(index, spans, feats, scores, support, given, budget)
        cut = self.default_thresholds
        # the passing sentences read beside the flagged ones are flagged here, so that the
        # judgement gives them the spans they would have if the ranker kept them
        doubted = {i for i in vectors if cut.verdict(scores[i]) is Verdict.GROUNDED}
        self.seen = (name, vectors, {i for i in vectors if is_pinned(feats[i])}, doubted)
        out = [min(s, cut.not_grounded) if i in doubted else s for i, s in enumerate(scores)]
        return out, {}, {}


def collect(records: list[dict], judge: _Collecting) -> list[dict]:
    rows = []
    for r in records:
        judge.seen = ("", {}, set(), set())
        request = GroundednessRequest(
            context=r["context"],
            answer=r["answer"],
            query=r.get("query"),
            task=r.get("task", "Summarization"),
            domain=r.get("domain") or "Generic",
        )
        j = judge.judge(request)
        flagged = judge.default_thresholds.verdict(j.score) is not Verdict.GROUNDED
        gold = {c for sp in r.get("spans", []) for c in range(sp["start"], sp["end"])}
        name, vectors, hard, doubted = judge.seen
        index, given = judge.heuristic.analyse(request)[0], judge.heuristic.given(request)
        sentences = {}
        words = {}
        for s in j.sentences:
            if judge.default_thresholds.verdict(s.score) is Verdict.GROUNDED:
                continue
            chars = {
                c
                for d in s.ungrounded_details
                for c in range(d.offset.code_point, d.offset.code_point + d.length.code_point)
            } or set(range(s.start, s.end))
            sentences[s.index] = chars
            marked = [
                (
                    d.offset.code_point - s.start,
                    d.offset.code_point - s.start + d.length.code_point,
                    d.kind,
                )
                for d in s.ungrounded_details
            ]
            if marked:
                at, X = word_vectors(s.text, marked, s.score, index, given)
                labels = [any(s.start + c in gold for c in range(a, b)) for a, b in at]
                words[s.index] = (s.start, at, X, labels, marked, s.kind)
        rows.append(
            {
                "group": ":".join(
                    x for x in (r.get("dataset"), r.get("task"), r.get("subtask")) if x
                ),
                "context": json.dumps(r["context"]),
                "profile": name,
                "flagged": flagged,
                "gold": gold,
                "sentences": sentences,  # flagged sentence -> its span characters
                "words": words,  # flagged sentence -> its words, their vectors and labels
                "vectors": vectors,
                "hard": hard,
                "doubted": doubted,  # passing sentences the ranker reads (flagged only if kept)
                "labels": {i: float(_overlaps(r, j.sentences[i])) for i in vectors},
                "scores": {s.index: s.score for s in j.sentences},
            }
        )
    return rows


def _overlaps(record: dict, sentence) -> bool:  # type: ignore[no-untyped-def]
    return any(
        sp["start"] < sentence.end and sp["end"] > sentence.start for sp in record.get("spans", [])
    )


def predicted(
    row: dict,
    ranker: tuple | str | None,
    narrower: tuple | None = None,
    margin: float | None = None,
) -> set[int]:
    if not row["flagged"]:
        return set()
    kept = set(row["sentences"])
    if not isinstance(ranker, tuple) and ranker != "oracle":
        kept -= row["doubted"]  # without a ranker, no passing sentence is flagged
    if ranker == "oracle" and row["vectors"]:
        # the best choice a ranker could make: exactly the ranked sentences holding a span
        # (all of them when none does)
        holding = {i for i, y in row["labels"].items() if y}
        kept -= set(row["vectors"]) - (holding or set(row["vectors"]) - row["doubted"])
    elif isinstance(ranker, tuple) and row["vectors"]:
        model, cut, mu, sd = ranker
        order = sorted(row["vectors"])
        X = (np.array([row["vectors"][i] for i in order]) - mu) / sd
        probs = model.predict_proba(X)[:, 1]
        chosen = keep(dict(zip(order, map(float, probs))), row["hard"], cut)
        kept -= set(order) - chosen
    if margin is not None:  # as _ranking.outranked: well above the weakest, cleared
        kept = margin_kept({i: row["scores"][i] for i in kept}, row["hard"], margin)
    chars = narrowed(row, narrower) if narrower is not None else row["sentences"]
    return {c for i in kept for c in chars[i]}


def narrowed(row: dict, narrower: tuple) -> dict[int, set[int]]:
    """Each flagged or doubted sentence's span characters once ``narrower`` (trees, cut) chose
    its words (``_narrowing.chosen_spans``, as the judge does)."""
    model, cut = narrower
    cached = row.get("_probabilities")
    if cached is None or cached[0] is not model:  # one model at a time: a fold's
        cached = row["_probabilities"] = (
            model,
            {
                i: model.predict_proba(np.asarray(X))[:, 1] if X else np.zeros(0)
                for i, (_, _, X, _, _, _) in row["words"].items()
            },
        )
    probabilities = cached[1]
    out = dict(row["sentences"])
    for i, (start, at, X, _, marked, kind) in row["words"].items():
        spans = chosen_spans(at, kept_words(probabilities[i], X, cut), marked, kind)
        out[i] = {start + c for a, b, _ in spans for c in range(a, b)}
    return out


def counts(
    rows: list[dict],
    rankers: dict,
    narrowers: dict | None = None,
    margins: dict | None = None,
) -> dict[str, list[int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for row in rows:
        p = row["profile"]
        pred = predicted(row, rankers.get(p), (narrowers or {}).get(p), (margins or {}).get(p))
        c = out[row["group"]]
        c[0] += len(pred & row["gold"])
        c[1] += len(pred - row["gold"])
        c[2] += len(row["gold"] - pred)
    return out


def pool(per_group: dict[str, list[int]]) -> list[int]:
    """rag_dev's three subtasks' counts added up."""
    return np.sum([per_group[g] for g in RAG_DEV], 0).tolist()


def f1(c: list[int]) -> float:
    return 2 * c[0] / (2 * c[0] + c[1] + c[2]) if c[0] + c[1] + c[2] else float("nan")


def fit_narrowers(rows: list[dict], profiles: list[str], C: float = 1.0) -> dict:
    """Per profile: a logistic model over the words of its flagged and doubted sentences (does
    a word lie in an annotated span?), the features' means and deviations, and the cut with
    the best span F1 on ``rows`` (no ranker)."""
    out = {}
    for profile in profiles:
        mine = [r for r in rows if r["profile"] == profile and r["flagged"]]
        X = np.array([x for r in mine for w in r["words"].values() for x in w[2]])
        y = np.array([label for r in mine for w in r["words"].values() for label in w[3]])
        if len(set(y)) < 2:
            continue
        mu, sd = X.mean(0), X.std(0)
        sd[sd < 1e-9] = 1.0
        model = _Scaled(LogisticRegression(C=C, max_iter=3000).fit((X - mu) / sd, y), mu, sd)
        best = max(
            WORD_CUTS,
            key=lambda cut: (
                f1(np.sum(list(counts(mine, {}, {profile: (model, cut)}).values()), 0).tolist()),
                -cut,
            ),
        )
        out[profile] = (model, float(best))
    return out


def fit_margins(rows: list[dict], profiles: list[str], rankers: dict, narrowers: dict) -> dict:
    """Per profile: the margin (``_ranking.outranked``) with the best span F1 on ``rows``
    after ``rankers`` and ``narrowers``, the smaller the better on a tie; none where keeping
    every flagged sentence does as well."""
    out = {}
    for profile in profiles:
        mine = [r for r in rows if r["profile"] == profile and r["flagged"]]

        def score(m: float | None, mine: list[dict] = mine, profile: str = profile) -> tuple:
            c = counts(mine, rankers, narrowers, {profile: m})
            return (round(f1(np.sum(list(c.values()), 0).tolist()), 6), m is None, -(m or 0))

        best = max([None, *MARGINS], key=score)
        if best is not None:
            out[profile] = float(best)
    return out


class _Scaled:
    """A logistic model over standardised features, read on raw ones."""

    def __init__(self, model: LogisticRegression, mu: np.ndarray, sd: np.ndarray) -> None:
        self.model, self.mu, self.sd = model, mu, sd

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        return self.model.predict_proba((X - self.mu) / self.sd)


def to_narrower(model: _Scaled, cut: float) -> Narrower:
    return Narrower(
        float(model.model.intercept_[0]),
        tuple(map(float, model.model.coef_[0])),
        tuple(map(float, model.mu)),
        tuple(map(float, model.sd)),
        cut,
    )


def fit(
    rows: list[dict],
    C: float,
    profiles: list[str],
    monotone: bool = True,
    narrowers: dict | None = None,
) -> dict:
    """Per profile: the logistic model, the cut with the best span F1 on ``rows`` (the words
    chosen by ``narrowers``) and the features' means and deviations."""
    out = {}
    for profile in sorted({r["profile"] for r in rows if r["vectors"]}):
        if profile not in profiles and profiles != ["all"]:
            continue
        mine = [r for r in rows if r["profile"] == profile]
        X = np.array([v for r in mine for v in r["vectors"].values()])
        y = np.array([r["labels"][i] for r in mine for i in r["vectors"]])
        if len(set(y)) < 2:
            continue
        mu, sd = X.mean(0), X.std(0)
        sd[sd < 1e-9] = 1.0
        if monotone:
            # a badness feature may only push towards "invents" (as in fit_default.py)
            nonneg = np.array([name in BADNESS for name in RANK_FEATURES])
            model = MonotoneLogistic(C, nonneg).fit((X - mu) / sd, y, np.ones(len(y)))
        else:
            model = LogisticRegression(C=C, max_iter=2000).fit((X - mu) / sd, y)
        best = max(
            CUTS,
            key=lambda cut: (
                f1(
                    np.sum(
                        list(counts(mine, {profile: (model, cut, mu, sd)}, narrowers).values()), 0
                    ).tolist()
                ),
                -cut,
            ),
        )
        out[profile] = (model, float(best), mu, sd)
    return out


def to_ranker(model: LogisticRegression, cut: float, mu: np.ndarray, sd: np.ndarray) -> Ranker:
    return Ranker(
        float(model.intercept_[0]),
        tuple(map(float, model.coef_[0])),
        tuple(map(float, mu)),
        tuple(map(float, sd)),
        cut,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fold-models", type=Path, nargs=2, required=True)
    ap.add_argument("--model", type=Path, default=BUNDLED_MODEL, help="the shipped stack")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument(
        "--profiles",
        nargs="+",
        default=["QnA:passages", "Summarization:record"],
        help="rank in these profiles only (the default: multi-passage QnA and data-to-text, "
        "where the ranker helps; on plain summaries it moves rag_dev's within noise and costs "
        "the model time of their checks, --profiles all to see)",
    )
    ap.add_argument(
        "--narrow",
        nargs="*",
        default=["Summarization", "Summarization:record"],
        help="fit a narrower in these profiles only (the default: summaries and data-to-text, "
        "where it helps; in multi-passage QnA the words as marked do better)",
    )
    ap.add_argument(
        "--free-signs",
        action="store_true",
        help="let a badness feature's coefficient go negative (by default it may only push "
        "towards 'invents', so no sentence is cleared for lacking more of the context)",
    )
    ap.add_argument(
        "--ranked-sentences",
        type=int,
        default=None,
        help="measure another cap on the sentences reread a check (the judge reads "
        "judges/_ranking.RANKED_SENTENCES); not with --write",
    )
    ap.add_argument(
        "--doubted-below",
        type=float,
        default=None,
        help="measure another bound on the passing sentences the ranker reads beside the "
        "flagged ones (the judge reads judges/_ranking.DOUBTED_BELOW; 0: flagged ones only); "
        "not with --write",
    )
    ap.add_argument(
        "--margin",
        nargs="*",
        default=["Summarization"],
        help="fit a margin in these profiles only (the default: plain summaries, where it "
        "helps; in data-to-text and multi-passage QnA it moved span F1 within noise)",
    )
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--out", type=Path, default=BUNDLED_MODEL)
    args = ap.parse_args()

    from rag_data import fold_of, load_records, span_labelled

    if args.ranked_sentences is not None:
        if args.write:
            ap.error("--ranked-sentences measures; the shipped cap is _ranking.RANKED_SENTENCES")
        _ranking.RANKED_SENTENCES = args.ranked_sentences
    if args.doubted_below is not None:
        if args.write:
            ap.error("--doubted-below measures; the shipped bound is _ranking.DOUBTED_BELOW")
        _ranking.DOUBTED_BELOW = args.doubted_below

    rag = load_records(args.data / "rag_dev.jsonl")
    dev = span_labelled(load_records(args.data / "dev.jsonl"))
    rows = collect(dev, _Collecting(args.model, None))  # dev: the shipped model never saw it
    for k, fold_model in enumerate(args.fold_models):
        part = [r for r in rag if fold_of(r, 2) == k]
        rows += collect(part, _Collecting(args.model, fold_model))
    groups = sorted({r["group"] for r in rows})
    contexts = np.array([r["context"] for r in rows])
    print(f"$ python benchmarks/fit_spans.py {' '.join(sys.argv[1:])}")
    print(
        f"{len(rows)} span-labelled answers; {sum(bool(r['vectors']) for r in rows)} flagged "
        f"with two or more doubted sentences, {sum(len(r['vectors']) for r in rows)} sentences "
        f"ranked, {sum(len(r['doubted']) for r in rows)} of them passing (below "
        f"{_ranking.DOUBTED_BELOW})"
    )
    base = counts(rows, {})
    oracle = counts(rows, {p: "oracle" for p in {r["profile"] for r in rows}})
    ways = ("ranked", "narrowed", "both", "shipped")
    scores: dict[str, dict[str, list[float]]] = {w: defaultdict(list) for w in ways}
    chosen: dict[str, list[float]] = defaultdict(list)
    word_cuts: dict[str, list[float]] = defaultdict(list)
    margins_chosen: dict[str, list[float | None]] = defaultdict(list)
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        names = sorted(set(contexts))
        fold = dict(zip(names, rng.permutation(len(names)) % 5))
        total = {w: defaultdict(lambda: [0, 0, 0]) for w in ways}
        for k in range(5):
            train = [r for r in rows if fold[r["context"]] != k]
            test = [r for r in rows if fold[r["context"]] == k]
            narrowers = fit_narrowers(train, args.narrow, args.C)
            rankers = fit(train, args.C, args.profiles, not args.free_signs)
            both = fit(train, args.C, args.profiles, not args.free_signs, narrowers)
            for p, (_, cut, _, _) in both.items():
                chosen[p].append(cut)
            for p, (_, cut) in narrowers.items():
                word_cuts[p].append(cut)
            margins = fit_margins(train, args.margin, both, narrowers)
            for p in args.margin:
                margins_chosen[p].append(margins.get(p))
            for way, (r_, n_, m_) in {
                "ranked": (rankers, {}, {}),
                "narrowed": ({}, narrowers, {}),
                "both": (both, narrowers, {}),
                "shipped": (both, narrowers, margins),
            }.items():
                for g, c in counts(test, r_, n_, m_).items():
                    total[way][g] = [a + b for a, b in zip(total[way][g], c)]
        for way in ways:
            for g in groups:
                scores[way][g].append(f1(total[way][g]))
            scores[way][POOLED].append(f1(pool(total[way])))
    print(
        f"{'group':36s} {'n':>5s} {'without':>8s} {'ranked':>8s} {'narrowed':>9s} {'both':>8s}"
        f" {'shipped':>8s} {'sd':>6s} {'best':>6s}"
    )
    for g in groups:
        n = sum(r["group"] == g for r in rows)
        print(
            f"{g:36s} {n:5d} {f1(base[g]):8.3f} {np.mean(scores['ranked'][g]):8.3f}"
            f" {np.mean(scores['narrowed'][g]):9.3f} {np.mean(scores['both'][g]):8.3f}"
            f" {np.mean(scores['shipped'][g]):8.3f} {np.std(scores['shipped'][g]):6.3f}"
            f" {f1(oracle[g]):6.3f}"
        )
    n = sum(r["group"] in RAG_DEV for r in rows)
    print(
        f"{POOLED:36s} {n:5d} {f1(pool(base)):8.3f} {np.mean(scores['ranked'][POOLED]):8.3f}"
        f" {np.mean(scores['narrowed'][POOLED]):9.3f} {np.mean(scores['both'][POOLED]):8.3f}"
        f" {np.mean(scores['shipped'][POOLED]):8.3f} {np.std(scores['shipped'][POOLED]):6.3f}"
        f" {f1(pool(oracle)):6.3f}"
    )
    print(
        "ranked: the span ranker alone; narrowed: the narrowers alone; both: the two; shipped: "
        "both and the margins (sd is its spread over splits); best: the ranked sentences that hold an annotated span kept, "
        "the others cleared, in every profile, words as the judge marks them (what a perfect "
        "ranker would give without the narrowers)"
    )
    for p, cuts in sorted(chosen.items()):
        print(f"cut chosen for {p}: median {np.median(cuts):.2f} (range {min(cuts)}-{max(cuts)})")
    for p, cuts in sorted(word_cuts.items()):
        print(
            f"word cut chosen for {p}: median {np.median(cuts):.2f} (range {min(cuts)}-{max(cuts)})"
        )
    for p, chosen_margins in sorted(margins_chosen.items()):
        shown = ", ".join(
            f"{m}: {chosen_margins.count(m)}"
            for m in sorted(set(chosen_margins), key=lambda m: -1 if m is None else m)
        )
        print(f"margin chosen for {p} (times each; None: no margin): {shown}")
    narrowers = fit_narrowers(rows, args.narrow, args.C)
    final = fit(rows, args.C, args.profiles, not args.free_signs, narrowers)
    margins = fit_margins(rows, args.margin, final, narrowers)
    insample = counts(rows, final, narrowers, margins)
    print(
        "in-sample, fitted on every record: "
        + ", ".join(f"{g} {f1(insample[g]):.3f}" for g in groups)
    )
    for p, (model, cut) in sorted(narrowers.items()):
        whole = [0, 0, 0]  # flagged sentences; whole as marked; whole once narrowed
        for r in rows:
            if r["profile"] != p or not r["flagged"]:
                continue
            for i, (_, at, X, _, marked, kind) in r["words"].items():
                if i in r["doubted"] or not at:
                    continue
                probabilities = model.predict_proba(np.asarray(X))[:, 1]
                spans = chosen_spans(at, kept_words(probabilities, X, cut), marked, kind)
                whole[0] += 1
                for k, s in ((1, marked), (2, spans)):
                    covered = sum(any(a < e and b > w for a, b, _ in s) for w, e in at)
                    whole[k] += covered >= 0.9 * len(at)
        print(
            f"{p}: of {whole[0]} flagged sentences of flagged answers, spans cover 90% or more of "
            f"the words in {whole[1] / whole[0]:.0%} as marked, {whole[2] / whole[0]:.0%} narrowed"
        )
    if args.write:
        spec = {
            "version": 1,
            "fitted_on": "rag_dev.jsonl and dev.jsonl's RAGTruth records (benchmarks/fit_spans.py)",
            "profiles": {p: to_ranker(*fitted).to_json() for p, fitted in final.items()},
            "narrowers": {p: to_narrower(*fitted).to_json() for p, fitted in narrowers.items()},
            "margins": margins,
        }
        path = args.out / "spans.json"
        path.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
