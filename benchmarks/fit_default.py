"""Fit the default judge's stackers and measure them in grouped cross-validation.

    python benchmarks/fit_default.py --model MODEL_DIR [--fold-models DIR0 DIR1] [--write]

Data: ``../shared/data/dev.jsonl`` and ``../shared/data/rag_dev.jsonl``. The judge picks one
*profile* per request (``cross_encoder.profile_of``): ``QnA:passages`` (several retrieved
passages), ``QnA``, ``Summarization``, ``Summarization:brief`` or ``Summarization:record`` (the
context is a JSON record, as in data-to-text). ``--general QnA`` fits the ``QnA`` profile on every
QnA record, since it judges every QnA shape without a profile of its own. Each profile has two
stackers (:class:`Stacker`):

1. ``lexical``, over :data:`LEXICAL_FEATURES` (no model run, about a millisecond);
2. ``model``, over the lexical features and :data:`MODEL_FEATURES` from the cross-encoder run on
   the ``sentences`` lexically weakest answer sentences; used only when the lexical score falls
   inside the profile's ``band``, which keeps most checks free of model runs.

Every figure printed is out-of-fold: 5-fold cross-validation grouped by context (records that
share a context, e.g. six LLM answers to one article, stay in one fold), balanced accuracy per
group with notSure counted as notGrounded. Where the model was fine-tuned on ``rag_dev.jsonl``
(``--fold-models``: the model that left fold k out scores fold k's records, see
``training/run_in_domain.sh``) the rag_dev figures stay out-of-sample for the model too; with
``--fold-dev`` so do dev.jsonl's RAGTruth records, for fold models that trained on them.
The band and the number of sentences are chosen per profile on the cross-validated figures,
among settings whose share of model runs stays under ``--max-model-share``.
``--write`` puts the stackers, fitted on all records, into MODEL_DIR/stack.json.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from sklearn.model_selection import GroupKFold

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import context_key, group_of, load, model_supports
from ground_integrations import GroundednessChecker
from ground_integrations.judges._analysis import cap
from ground_integrations.judges._features import (
    LEXICAL_FEATURES,
    MODEL_FEATURES,
    Stacker,
    lexical_vector,
    model_vector,
    plain_missing,
)
from ground_integrations.judges.cross_encoder import (
    UNCONFIRMED_SENTENCES,
    UNCONFIRMED_VETO,
    context_words,
    given_tokens,
    model_digest,
    profile_of,
)
from ground_integrations.judges.heuristic import HeuristicJudge

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SENTENCES = (1, 2, 3, 100)
WINDOW_SETS = [("3x1",), ("1x3",), ("3x1", "1x3")]
#: Features whose direction is not known in advance; every other one may only add badness.
FREE_SIGN = frozenset({"context_words", "meta"})
#: A clean answer's P(notGrounded) after the cut is moved to 0.5 (see ``clean_shift``).
CLEAN_MAX = 0.3
#: A group with fewer records in a profile does not take part in choosing its settings.
MIN_GROUP = 30
CUTS = [c / 100 for c in range(20, 81, 2)]
BANDS = [(0.0, 0.0), (0.3, 0.7), (0.2, 0.8), (0.1, 0.9), (0.0, 1.0)]


def features(records: list[dict]) -> list[dict]:
    heuristic = HeuristicJudge()
    checker = GroundednessChecker(heuristic)
    out = []
    for r in records:
        request = checker.build_request(r["context"], r["answer"], r.get("query"), task=r["task"])
        _, spans, feats = heuristic.analyse(request)
        words = context_words(request)
        scores = [heuristic.sentence_score(f, request.task) for f in feats if f.checkable]
        given = given_tokens(request)
        plain = plain_missing([s.text for s, f in zip(spans, feats) if f.checkable], given)
        out.append(
            {
                "lexical": lexical_vector(feats, request.answer, words, plain),
                # checked sentences, weakest (by the heuristic) first
                "order": sorted(range(len(scores)), key=lambda i: (scores[i], i)),
                "profile": profile_of(request, feats),
                # a hard check caps the judge's score below the cut whatever the stackers say
                "hard": any(f.checkable and cap(1.0, f) < 0.45 for f in feats),
                "opposites": any(f.checkable and f.opposites for f in feats),
                # per checked sentence: a negation for the model to confirm (see veto())
                "unconfirmed": [bool(f.unconfirmed) for f in feats if f.checkable],
                # per checked sentence: its own lexical vector, offsets and hard check
                "sentences": [
                    (
                        lexical_vector([f], sp.text, words, plain_missing([sp.text], given)),
                        sp.start,
                        sp.end,
                        cap(1.0, f) < 0.45,
                    )
                    for sp, f in zip(spans, feats)
                    if f.checkable
                ],
            }
        )
    return out


def brief_records(datasets: list[str]) -> list[dict]:
    """The records of ``datasets`` in rag_train that the judge reads as brief summaries."""
    import gzip

    heuristic = HeuristicJudge()
    checker = GroundednessChecker(heuristic)
    wanted = set(datasets)
    out = []
    with gzip.open(DATA / "rag_train" / "rag_train.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["dataset"] not in wanted or r["task"] != "Summarization":
                continue
            request = checker.build_request(r["context"], r["answer"], None, task=r["task"])
            _, _, feats = heuristic.analyse(request)
            if profile_of(request, feats) == "Summarization:brief":
                out.append(r)
    return out


def veto(rows: list[dict], support: list[list[dict]]) -> int:
    """What ``CrossEncoderJudge`` does with the negations word order cannot confirm: a sentence
    whose model support against its 3-sentence window is below ``UNCONFIRMED_VETO`` gets a hard
    check (in each row, for at most ``UNCONFIRMED_SENTENCES`` such sentences). Returns how many
    sentences it vetoed."""
    vetoed = 0
    for row, supports in zip(rows, support):
        pending = [i for i, u in enumerate(row["unconfirmed"]) if u][:UNCONFIRMED_SENTENCES]
        for i in pending:
            if supports[i].get("3x1", 1.0) < UNCONFIRMED_VETO:
                harden(row, i)
                vetoed += 1
    return vetoed


def harden(row: dict, i: int) -> None:
    """Give the row's ``i``-th checked sentence, and so the row, a hard check."""
    vec, start, end, _ = row["sentences"][i]
    row["sentences"][i] = (vec, start, end, True)
    row["hard"] = True


class MonotoneLogistic:
    """Weighted L2 logistic regression whose coefficients have a fixed sign where asked.

    A "badness" feature (a share of missing words, a contradicted figure...) may only push
    towards notGrounded: its coefficient is kept >= 0, so that no data set can teach the judge
    that an answer becomes more grounded as more of it is missing from the context (SummEdits
    would: its edits keep every word). Features of unknown direction (sizes) are free.
    """

    def __init__(self, C: float, nonneg: np.ndarray) -> None:
        self.C, self.nonneg = C, nonneg

    def fit(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> MonotoneLogistic:
        n, d = X.shape
        w = sample_weight / sample_weight.sum() * n

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            z = X @ theta[:d] + theta[d]
            p = 1 / (1 + np.exp(-z))
            ll = np.sum(w * (np.logaddexp(0, z) - y * z))
            g = w * (p - y)
            reg = 0.5 / self.C * float(theta[:d] @ theta[:d])
            grad = np.concatenate([X.T @ g + theta[:d] / self.C, [g.sum()]])
            return ll + reg, grad

        bounds = [(0.0, None) if m else (None, None) for m in self.nonneg] + [(None, None)]
        res = minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B", bounds=bounds)
        self.coef_, self.intercept_ = res.x[None, :d], res.x[d:]
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        p = 1 / (1 + np.exp(-(X @ self.coef_[0] + self.intercept_[0])))
        return np.stack([1 - p, p], axis=1)


def balanced_accuracy(y: np.ndarray, flagged: np.ndarray) -> float:
    """Mean recall of the two classes; nan when the records hold only one class."""
    if (y == 1).sum() == 0 or (y == 0).sum() == 0:
        return float("nan")
    return float(0.5 * (flagged[y == 1].mean() + (~flagged[y == 0]).mean()))


def _rows_and_supports(
    args: argparse.Namespace, records: list[dict], dev: list[dict], rag: list[dict], specs
) -> tuple[list[dict], list]:
    """Every record's features (:func:`features`) and the model's supports for its sentences,
    each record scored by the model that did not train on it."""
    from rag_data import fold_of, span_labelled

    rows = features(records)
    legacy = args.legacy_batching
    # dev.jsonl's span-labelled records (RAGTruth), when the fold models trained on them too
    in_folds = {id(r) for r in span_labelled(dev)} if args.fold_dev else set()
    by_record: dict[int, list] = {}
    rest = [r for r in dev if id(r) not in in_folds]
    by_record.update(zip(map(id, rest), model_supports(rest, args.model, "dev", legacy, specs)))
    if args.fold_models:
        # each record is scored by the model that did not train on its fold
        scored = [r for r in records if id(r) not in by_record]
        for k, m in enumerate(args.fold_models):
            part = [r for r in scored if fold_of(r, 2) == k]
            if part:
                by_record.update(
                    zip(map(id, part), model_supports(part, m, f"rag-fold{k}", legacy, specs))
                )
    else:
        by_record.update(zip(map(id, rag), model_supports(rag, args.model, "rag", legacy, specs)))
    return rows, [by_record[id(r)] for r in records]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--fold-models", type=Path, nargs=2, default=None)
    ap.add_argument(
        "--fold-dev",
        action="store_true",
        help="the fold models also trained on dev.jsonl's span-labelled records "
        '(run_in_domain.sh with DATA="rag_dev.jsonl dev.jsonl"): those are scored by the fold '
        "model that left their fold out too",
    )
    ap.add_argument(
        "--select",
        choices=("mean", "margin"),
        default="mean",
        help="how a profile's band, sentences and windows are chosen among the allowed: the "
        "best mean balanced accuracy over its groups, or (margin) the least shortfall of any "
        "group below its bar (the lexical baseline's best in-sample cut), then the best mean",
    )
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--C-grid", type=float, nargs="+", default=[0.03, 0.1, 0.3, 1.0])
    ap.add_argument(
        "--max-model-share",
        type=float,
        default=0.45,
        help="at most this share of checks may run the model (keeps the median check fast)",
    )
    ap.add_argument(
        "--max-pairs",
        type=int,
        default=8,
        help="at most this many (window, sentence) pairs per model run (keeps p95 down)",
    )
    ap.add_argument(
        "--group-weight",
        action="append",
        default=[],
        metavar="GROUP=W",
        help="weight of a group in fitting (default 1 each; e.g. summedits:Summarization=0.3)",
    )
    ap.add_argument(
        "--no-cut",
        action="store_true",
        help="keep the cut at P=0.5 instead of choosing it on each fold's training records",
    )
    ap.add_argument(
        "--false-flag-cost",
        action="append",
        default=[],
        metavar="[PROFILE=]K",
        help="choose a profile's cut by the mean over its groups of (share of wrong answers "
        "flagged) - K x (share of correct answers flagged); 1 (the default) is balanced "
        "accuracy, more than 1 counts a correct answer flagged as worse than a wrong one passed. "
        "PROFILE=K sets one profile's (e.g. Summarization:record=2), K alone every other's",
    )
    ap.add_argument(
        "--clean-grounded",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="a clean answer (nothing missing, no check tripped) is always grounded",
    )
    ap.add_argument(
        "--features",
        action="append",
        default=[],
        metavar="PROFILE=NAME,NAME",
        help="fit this profile's stackers on these lexical features only (the others get "
        "coefficient 0; the model features are always used)",
    )
    ap.add_argument(
        "--pin",
        action="append",
        default=[],
        metavar="PROFILE=K:WINDOWS:LO-HI",
        help="fix a profile's settings instead of choosing them on the cross-validated figures "
        "(e.g. QnA=1:3x1+1x3:0.3-0.7, the shipped QnA settings), to compare two analyses "
        "without the choice of settings moving between them",
    )
    ap.add_argument(
        "--soft-hard",
        action="append",
        default=[],
        metavar="PROFILE",
        help="in this profile a hard check (a figure or word the context contradicts) does not "
        "force notGrounded: the stackers weigh it with the other features",
    )
    ap.add_argument(
        "--extra-data",
        nargs="+",
        default=[],
        metavar="DATASET",
        help="also fit on the records of these rag_train datasets (e.g. xsumfaith fib_xsum) "
        "that the judge reads as brief summaries (Summarization:brief), each dataset a group "
        "of its own, scored by --model: a probe of what labelled one-line summaries teach the "
        "brief profile",
    )
    ap.add_argument(
        "--low-support-veto",
        action="append",
        default=[],
        metavar="PROFILE=T",
        help="in this profile a checked sentence whose model support against its 3-sentence "
        "window is below T gets a hard check (the model reads every checked sentence): a probe "
        "of what the judge would gain, measured as the negation veto is; stack.json does not "
        "carry it",
    )
    ap.add_argument(
        "--general",
        action="append",
        default=[],
        metavar="TASK",
        help="fit and choose this task's own profile (e.g. QnA) on every record of the task, "
        "as the judge's fallback for any request of that task whose shape has no profile of "
        "its own; records of the task's other profiles (e.g. QnA:passages) are still judged, "
        "and figured, by their own",
    )
    ap.add_argument("--only-fold", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--verbose", action="store_true", help="print every band tried")
    ap.add_argument("--write", action="store_true")
    ap.add_argument(
        "--fold-seed",
        type=int,
        default=None,
        help="deal contexts to the 5 folds at random with this seed (default: GroupKFold's "
        "own deterministic split); benchmarks/repeated_cv.py runs several",
    )
    ap.add_argument(
        "--summary-json", type=Path, default=None, help="also write the per-group figures here"
    )
    ap.add_argument(
        "--rows-cache",
        type=Path,
        default=None,
        help="keep every record's features and model supports in this file, and read them from "
        "it when it exists (benchmarks/repeated_cv.py shares one between its splits: only the "
        "fold seed differs); a file written by other code or arguments gives wrong figures",
    )
    ap.add_argument(
        "--predictions",
        type=Path,
        default=None,
        help="also write each record's out-of-fold P(notGrounded) here (JSONL: id, group, "
        "profile, label, p, model run), for error analysis",
    )
    ap.add_argument(
        "--legacy-batching",
        action="store_true",
        help="score each sentence's windows in one padded batch, as the judge did until one "
        "pair per run became the default (to measure that behaviour)",
    )
    ap.add_argument(
        "--specs",
        default="3x1,1x3",
        help="the window specs the model scores (comma-separated, e.g. 3x1 alone: one pair "
        "per sentence, a quarter of the model runs when every sentence is scored)",
    )
    args = ap.parse_args()
    from rag_data import fold_of

    if args.write and args.extra_data:
        ap.error("--extra-data is a probe: fit what ships without it (drop --write)")
    if args.write and args.low_support_veto:
        ap.error("--low-support-veto is a probe: stack.json does not carry it (drop --write)")
    specs = tuple(tuple(int(x) for x in spec.split("x")) for spec in args.specs.split(","))
    window_sets = [ws for ws in WINDOW_SETS if all(w in args.specs.split(",") for w in ws)]

    dev, rag = load(DATA / "dev.jsonl"), load(DATA / "rag_dev.jsonl")
    if args.extra_data:
        dev = dev + brief_records(args.extra_data)
    if args.only_fold is not None:  # a preview while the other fold's model trains
        rag = [r for r in rag if fold_of(r, 2) == args.only_fold]
    records = dev + rag
    if args.fold_dev and not args.fold_models:
        ap.error("--fold-dev needs --fold-models")
    start = time.perf_counter()
    if args.rows_cache is not None and args.rows_cache.exists():
        with open(args.rows_cache, "rb") as fh:
            rows, support = pickle.load(fh)
    else:
        rows, support = _rows_and_supports(args, records, dev, rag, specs)
        if args.rows_cache is not None:
            with open(args.rows_cache, "wb") as fh:
                pickle.dump((rows, support), fh)
    print(f"features for {len(records)} records in {time.perf_counter() - start:.0f} s")
    print(f"negations the model confirmed (hard checks): {veto(rows, support)} sentences")
    for spec in args.low_support_veto:
        prof_name, _, below = spec.partition("=")
        vetoed = 0
        for row, supports in zip(rows, support):
            if row["profile"] == prof_name:
                for i, found in enumerate(supports):
                    if found.get("3x1", 1.0) < float(below):
                        harden(row, i)
                        vetoed += 1
        print(f"--low-support-veto {spec}: {vetoed} sentences vetoed")
    y = np.array([int(r["label"] == "notGrounded") for r in records])
    group = np.array([group_of(r) for r in records])
    ctx = np.array([context_key(r) for r in records])
    profile = np.array([row["profile"] for row in rows])
    # --features: a profile's unused lexical features are set to 0 on its records (a constant
    # feature gets coefficient 0, and fit() writes it as mean 0, scale 1)
    for spec in args.features:
        prof_name, _, names = spec.partition("=")
        if prof_name not in {row["profile"] for row in rows}:
            ap.error(f"--features {spec}: no record has the profile {prof_name!r}")
        keep = set(names.split(","))
        if unknown := keep - set(LEXICAL_FEATURES):
            ap.error(f"--features {spec}: unknown features {sorted(unknown)}")
        drop = [j for j, n in enumerate(LEXICAL_FEATURES) if n not in keep]
        for row in rows:
            if row["profile"] == prof_name:
                for vec in [row["lexical"], *(s[0] for s in row["sentences"])]:
                    for j in drop:
                        vec[j] = 0.0
    L = np.array([row["lexical"] for row in rows])
    hard = np.array([row["hard"] and row["profile"] not in args.soft_hard for row in rows])
    opposite = np.array([row["opposites"] for row in rows])

    def model_part(k: int, ws: tuple[str, ...]) -> np.ndarray:
        """Model features from the ``k`` lexically weakest sentences, each sentence's support
        the best over the window specs ``ws``."""
        return np.array(
            [
                model_vector([max(s[i][spec] for spec in ws) for i in row["order"][:k]])
                for row, s in zip(rows, support)
            ]
        )

    # weights: each group counts the same, each class half of its group
    w = np.ones(len(y))
    weights = {k: float(v) for k, v in (gw.split("=") for gw in args.group_weight)}
    for g in set(group):
        for c in (0, 1):
            m = (group == g) & (y == c)
            w[m] = weights.get(g, 1.0) / max(1, m.sum())
    w *= len(y) / w.sum()

    C = args.C

    def nonneg_for(X: np.ndarray) -> np.ndarray:
        names = (*LEXICAL_FEATURES, *MODEL_FEATURES)[: X.shape[1]]
        return np.array([n not in FREE_SIGN for n in names])

    tune_cut = not args.no_cut
    # --false-flag-cost per profile ("" for every other); the profile being fitted chooses
    costs = {name: float(k) for name, _, k in (s.rpartition("=") for s in args.false_flag_cost)}
    current = {"profile": ""}

    def selection_groups(idx: np.ndarray) -> list[str]:
        """The groups whose mean balanced accuracy chooses a profile's settings: those with at
        least MIN_GROUP records in it (a handful of long SummEdits summaries must not outvote
        348 RAGTruth ones)."""
        counts = {g: int((group[idx] == g).sum()) for g in set(group[idx])}
        return sorted(g for g, n in counts.items() if n >= MIN_GROUP) or sorted(counts)

    def best_cut(p: np.ndarray, idx: np.ndarray) -> float:
        """The cut on P(notGrounded) with the best mean balanced accuracy over the groups of
        ``idx`` (chosen on training records only), or with ``--false-flag-cost`` K, the best
        mean of (wrong answers flagged) - K x (correct answers flagged)."""
        gs = selection_groups(idx)
        cost = costs.get(current["profile"], costs.get("", 1.0))

        def gain(yy: np.ndarray, flagged: np.ndarray) -> float:
            if cost == 1.0:
                return balanced_accuracy(yy, flagged)
            if (yy == 1).sum() == 0 or (yy == 0).sum() == 0:
                return float("nan")
            return float(flagged[yy == 1].mean() - cost * flagged[yy == 0].mean())

        def mean_ba(c: float) -> float:
            return float(
                np.nanmean(
                    [gain(y[idx][group[idx] == g], (p[idx] >= c)[group[idx] == g]) for g in gs]
                )
            )

        return max(CUTS, key=lambda c: (round(mean_ba(c), 4), -abs(c - 0.5)))

    def shift(p: np.ndarray, cut: float) -> np.ndarray:
        """Move the cut to 0.5 (the same as lowering the model's intercept by logit(cut))."""
        z = np.log(np.clip(p, 1e-9, 1 - 1e-9) / np.clip(1 - p, 1e-9, 1))
        return 1 / (1 + np.exp(-(z - np.log(cut / (1 - cut)))))

    def clean_shift(m: MonotoneLogistic, mu: np.ndarray, sd: np.ndarray, cut: float) -> float:
        """The cut, moved up if needed so that a clean answer (no badness at all: every word in
        the context, no check tripped, full model support; sizes at their mean) is grounded
        with P(notGrounded) at most CLEAN_MAX after the cut is moved to 0.5."""
        nonneg = m_nonneg(mu)
        clean = np.where(nonneg, 0.0, mu)
        p = float(m.predict_proba(((clean - mu) / sd)[None, :])[0, 1])
        p_shifted = float(shift(np.array([p]), cut)[0])
        if p_shifted <= CLEAN_MAX:
            return cut
        # find the cut c with shift(p, c) == CLEAN_MAX: logit(p) - logit(c) = logit(CLEAN_MAX)
        z = np.log(p / (1 - p)) - np.log(CLEAN_MAX / (1 - CLEAN_MAX))
        return float(1 / (1 + np.exp(-z)))

    def m_nonneg(mu: np.ndarray) -> np.ndarray:
        names = (*LEXICAL_FEATURES, *MODEL_FEATURES)[: len(mu)]
        return np.array([n not in FREE_SIGN for n in names])

    def fit_on(
        X: np.ndarray, train: np.ndarray
    ) -> tuple[MonotoneLogistic, np.ndarray, np.ndarray, float]:
        """A stacker fitted on the records ``train``: (model, mean, scale, cut), the cut chosen
        on those records and moved up if a clean answer would not be grounded."""
        mu, sd = X[train].mean(0), X[train].std(0) + 1e-9
        m = MonotoneLogistic(C, nonneg_for(X)).fit(
            (X[train] - mu) / sd, y[train], sample_weight=w[train]
        )
        inside = np.zeros(len(y))
        inside[train] = m.predict_proba((X[train] - mu) / sd)[:, 1]
        cut = best_cut(inside, train) if tune_cut else 0.5
        cut = clean_shift(m, mu, sd, cut) if args.clean_grounded else cut
        return m, mu, sd, cut

    def folds() -> GroupKFold:
        """5 folds grouped by context; ``--fold-seed`` deals the contexts to folds at random."""
        if args.fold_seed is None:
            return GroupKFold(n_splits=5)
        return GroupKFold(n_splits=5, shuffle=True, random_state=args.fold_seed)

    def oof(X: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Out-of-fold P(notGrounded) for the records ``idx``, grouped by context, each fold's
        cut (chosen on its training records) moved to 0.5."""
        p = np.zeros(len(y))
        for tr, te in folds().split(idx, groups=ctx[idx]):
            m, mu, sd, cut = fit_on(X, idx[tr])
            p[idx[te]] = shift(m.predict_proba((X[idx[te]] - mu) / sd)[:, 1], cut)
        return p

    def oof_with(X: np.ndarray, idx: np.ndarray, c: float) -> np.ndarray:
        nonlocal C
        saved, C = C, c
        try:
            return oof(X, idx)
        finally:
            C = saved

    def fit(X: np.ndarray, idx: np.ndarray, names: tuple[str, ...]) -> Stacker:
        m, mu, sd, cut = fit_on(X, idx)
        bias = float(m.intercept_[0]) - float(np.log(cut / (1 - cut)))
        coef = m.coef_[0].copy()
        constant = X[idx].std(0) < 1e-12  # unused here (--features): no say in the score
        coef[constant], mu, sd = 0.0, np.where(constant, 0.0, mu), np.where(constant, 1.0, sd)
        return Stacker(
            names, bias, tuple(map(float, coef)), tuple(map(float, mu)), tuple(map(float, sd))
        )

    def span_f1(idx: np.ndarray, k: int, ws: tuple[str, ...], lo: float, hi: float) -> dict:
        """Character-level F1 of the flagged sentences against the annotated spans, per group,
        out-of-fold with the chosen configuration (as the judge flags: nothing when the answer
        is grounded, else every sentence below the cut, at least the weakest)."""
        X_lex, X_full = L, np.hstack([L, model_part(k, ws)])
        counts: dict[str, list[int]] = {}
        for tr, te in folds().split(idx, groups=ctx[idx]):
            models = [fit_on(X, idx[tr]) for X in (X_lex, X_full)]

            def prob(vec: list[float], which: int, models: list = models) -> float:
                m, mu, sd, cut = models[which]
                p = m.predict_proba(((np.array(vec) - mu) / sd)[None, :])[:, 1]
                return float(shift(p, cut)[0])

            for i in idx[te]:
                r, row = records[i], rows[i]
                p = prob(list(L[i]), 0)
                scored = lo <= p <= hi and hi > lo
                if scored:
                    p = prob(list(X_full[i]), 1)
                if hard[i]:
                    p = max(p, 0.7)
                flagged: list[tuple[int, int]] = []
                if p >= 0.5:
                    chosen = set(row["order"][:k]) if scored else set()
                    sent_p = []
                    for j, (vec, _, _, hard_j) in enumerate(row["sentences"]):
                        if j in chosen:
                            sup = max(support[i][j][spec] for spec in ws)
                            q = prob([*vec, *model_vector([sup])], 1)
                        else:
                            q = prob(vec, 0)
                        soft = row["profile"] in args.soft_hard
                        sent_p.append(max(q, 0.7) if hard_j and not soft else q)
                    flagged = [
                        (st, en)
                        for (vec, st, en, _), q in zip(row["sentences"], sent_p)
                        if q >= 0.5
                    ]
                    if not flagged and row["sentences"]:
                        j = int(np.argmax(sent_p))
                        flagged = [(row["sentences"][j][1], row["sentences"][j][2])]
                pred = {c for st, en in flagged for c in range(st, en)}
                gold = {c for sp in r.get("spans", []) for c in range(sp["start"], sp["end"])}
                c = counts.setdefault(group[i], [0, 0, 0])
                c[0] += len(pred & gold)
                c[1] += len(pred - gold)
                c[2] += len(gold - pred)
        return {
            g: (2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else float("nan"))
            for g, (tp, fp, fn) in counts.items()
        }

    # the bar: ../shared/tools/lexical_baseline.py, its fixed cut and its best in-sample cut
    sys.path.insert(0, str(DATA.parent / "tools"))
    import lexical_baseline

    base = np.array([lexical_baseline.score(r) for r in records])

    def baseline(sel: np.ndarray) -> tuple[float, float]:
        fixed = balanced_accuracy(y[sel], base[sel] >= 0.43)
        best = max(balanced_accuracy(y[sel], base[sel] >= c / 100) for c in range(101))
        return fixed, best

    bar = {g: baseline(group == g)[1] for g in set(group)}

    spans_f1: dict[str, float] = {}
    final_pred = np.zeros(len(y), bool)
    final_p = np.zeros(len(y))
    runs = np.zeros(len(y), int)
    stack: dict[str, dict] = {}
    task_of = np.array([name.split(":")[0] for name in profile])
    if unknown := set(args.general) - set(profile):
        ap.error(f"--general {sorted(unknown)}: no record has such a profile (e.g. QnA)")
    # a general profile first: the profiles of its task's other shapes overwrite its figures
    # for their own records
    for prof in sorted(set(profile), key=lambda name: (name not in args.general, name)):
        current["profile"] = prof
        idx = np.where((task_of == prof) if prof in args.general else (profile == prof))[0]
        groups = selection_groups(idx)

        def mean_ba(p: np.ndarray, idx: np.ndarray = idx, groups: list = groups) -> float:
            return float(
                np.nanmean(
                    [
                        balanced_accuracy(y[idx][group[idx] == g], (p[idx] >= 0.5)[group[idx] == g])
                        for g in groups
                    ]
                )
            )

        # regularisation per profile, chosen on the lexical stage's cross-validated figures
        C = max(args.C_grid, key=lambda c: (round(mean_ba(oof_with(L, idx, c)), 3), -c))
        print(f"\n== profile {prof}: C={C}")
        lex = oof(L, idx)
        print(f"\n== profile {prof}: {len(idx)} records, groups {', '.join(groups)}")
        table = {}
        for k, ws in ((k, ws) for k in SENTENCES for ws in window_sets):
            M = model_part(k, ws)
            full = oof(np.hstack([L, M]), idx)
            for lo, hi in BANDS:
                use = (lex >= lo) & (lex <= hi) if hi > lo else np.zeros(len(y), bool)
                p = np.where(
                    hard, np.maximum(np.where(use, full, lex), 0.7), np.where(use, full, lex)
                )
                bas = {
                    g: balanced_accuracy(y[idx][group[idx] == g], (p[idx] >= 0.5)[group[idx] == g])
                    for g in groups
                }
                share = float(use[idx].mean())
                pairs = float(np.mean([min(k, len(rows[i]["order"])) * use[i] for i in idx]))
                pairs *= sum(int(spec.split("x")[1]) for spec in ws)
                table[(k, ws, lo, hi)] = (
                    float(np.nanmean(list(bas.values()))),
                    share,
                    pairs,
                    bas,
                    p,
                    use,
                )
                if args.verbose or (lo, hi) in ((0.0, 0.0), (0.0, 1.0)):
                    print(
                        f"  k={k:3d} {'+'.join(ws):7s} band {lo:.1f}-{hi:.1f}: mean {table[(k, ws, lo, hi)][0]:.3f} "
                        f"model share {share:.2f} pairs/check {pairs:4.1f}  "
                        + "  ".join(f"{g} {v:.3f}" for g, v in bas.items())
                    )
        allowed = {
            key: v
            for key, v in table.items()
            if v[1] <= args.max_model_share
            and key[0] * sum(int(spec.split("x")[1]) for spec in key[1]) <= args.max_pairs
        }
        for spec in args.pin:
            name, _, setting = spec.partition("=")
            if name == prof:
                k_, ws_, band_ = setting.split(":")
                lo_, hi_ = (float(x) for x in band_.split("-"))
                key_ = (int(k_), tuple(ws_.split("+")), lo_, hi_)
                if key_ not in table:
                    ap.error(f"--pin {spec}: not a setting this script tries")
                allowed = {key_: table[key_]}

        def rank(key: tuple, allowed: dict = allowed) -> tuple[float, ...]:
            mean, _, pairs, bas, _, _ = allowed[key]
            if args.select == "margin":  # the worst group's margin over its bar first
                worst = min(bas[g] - bar[g] for g in bas if not np.isnan(bas[g]))
                return (round(min(worst, 0.0), 3), round(mean, 3), -pairs)
            return (round(mean, 3), -pairs)

        best_key = max(allowed, key=rank)
        k, ws, lo, hi = best_key
        mean, share, pairs, bas, p, use = allowed[best_key]
        print(
            f"  chosen: k={k} windows {'+'.join(ws)} band {lo}-{hi} (mean {mean:.3f}, "
            f"model share {share:.2f}, model pairs per check {pairs:.1f}): "
            + "  ".join(f"{g} {v:.3f}" for g, v in bas.items())
        )
        final_pred[idx] = p[idx] >= 0.5
        final_p[idx] = p[idx]
        runs[idx] = use[idx]
        if any(g.startswith("ragtruth") for g in groups):
            spans_f1.update(
                {g: v for g, v in span_f1(idx, k, ws, lo, hi).items() if g.startswith("ragtruth")}
            )
        entry: dict = {"lexical": fit(L, idx, LEXICAL_FEATURES).to_json()}
        if hi > lo:
            entry["model"] = fit(
                np.hstack([L, model_part(k, ws)]), idx, (*LEXICAL_FEATURES, *MODEL_FEATURES)
            ).to_json()
            entry["band"] = [lo, hi]
            entry["sentences"] = k
            entry["windows"] = [[int(x) for x in spec.split("x")] for spec in ws]
        stack[prof] = entry

    print("\n== the opposite-word check alone (records it flags, and their labels)")
    for g in sorted(set(group)):
        sel = (group == g) & opposite
        print(f"{g:34s} flagged {sel.sum():4d}  of which notGrounded {y[sel].sum():4d}")
    print("\n== the default judge, out-of-fold, per group (notSure counted as notGrounded)")
    print(
        f"{'group':34s} {'n':>5s} {'default':>8s} {'baseline':>9s} {'baseline':>9s} "
        f"{'margin':>7s} {'span F1':>8s} {'model':>6s}"
    )
    print(
        f"{'':34s} {'':5s} {'(CV)':>8s} {'cut 0.43':>9s} {'best cut':>9s} {'':>7s} {'':>8s} {'runs':>6s}"
    )
    summary: dict[str, dict] = {}
    for g in sorted(set(group)):
        sel = group == g
        ba = balanced_accuracy(y[sel], final_pred[sel])
        fixed, best = baseline(sel)
        summary[g] = {
            "n": int(sel.sum()),
            "balanced_accuracy": ba,
            "baseline_best_cut": best,
            "span_f1": spans_f1.get(g),
            "model_runs": float(runs[sel].mean()),
        }
        f1 = f"{spans_f1[g]:8.3f}" if g in spans_f1 else f"{'-':>8s}"
        print(
            f"{g:34s} {sel.sum():5d} {ba:8.3f} {fixed:9.3f} {best:9.3f} {ba - best:+7.3f} "
            f"{f1} {runs[sel].mean():6.2f}"
        )
    # the natural label mix of rag_dev (RAGTruth as its LLMs answered): what a user sees
    in_rag = {id(r) for r in rag}
    sel = np.array([id(r) in in_rag for r in records])
    if sel.any():
        tp = int((final_pred & (y == 1) & sel).sum())
        fp = int((final_pred & (y == 0) & sel).sum())
        fn = int((~final_pred & (y == 1) & sel).sum())
        f1 = 2 * tp / max(1, 2 * tp + fp + fn)
        flagged = fp / max(1, int(((y == 0) & sel).sum()))
        passed = fn / max(1, int(((y == 1) & sel).sum()))
        print(
            f"\nrag_dev natural mix ({int(sel.sum())} answers, {int((y[sel] == 1).sum())} "
            f"hallucinated): response-level F1 (hallucinated) {f1:.3f}, correct answers flagged "
            f"{flagged:.1%}, hallucinated answers passed {passed:.1%}"
        )
        summary["rag_dev:natural"] = {"f1": f1, "flagged": flagged, "passed": passed}
    if args.summary_json:
        args.summary_json.write_text(json.dumps(summary, indent=1) + "\n")
    if args.predictions:
        with args.predictions.open("w", encoding="utf-8") as f:
            for i, r in enumerate(records):
                row = {"id": r["id"], "group": str(group[i]), "profile": str(profile[i])}
                row |= {"label": r["label"], "p": round(float(final_p[i]), 4)}
                f.write(json.dumps(row | {"model_run": bool(runs[i])}) + "\n")
    if args.write:
        out = args.model / "stack.json"
        meta = {
            "version": "3",
            "model": model_digest((args.model / "model.onnx").read_bytes()),
            # how the judge must run the model to reproduce the supports fitted on
            "batching": "padded" if args.legacy_batching else "pair",
            "lexical_features": list(LEXICAL_FEATURES),
            "model_features": list(MODEL_FEATURES),
            "profiles": stack,
            "thresholds": {"grounded": 0.5, "not_grounded": 0.45},
        }
        out.write_text(json.dumps(meta, indent=1) + "\n")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
