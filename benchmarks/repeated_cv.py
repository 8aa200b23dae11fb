"""The default judge's fit, cross-validated over several random fold assignments.

    python benchmarks/repeated_cv.py --seeds 5 -- FIT_DEFAULT_ARGS...

One 5-fold split of a few hundred records moves a group's balanced accuracy by a point or two
when the model's supports move a little (training/README.md), so one split cannot tell two
candidate judges apart by a point. This runs ``fit_default.py`` (never with ``--write``) with
``--fold-seed 0..N-1`` and prints, per group, the mean and standard deviation of the
out-of-fold balanced accuracy over the splits, and the mean span F1 and share of model runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

FIT = Path(__file__).resolve().parent / "fit_default.py"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument(
        "--runs-json",
        type=Path,
        default=None,
        help="also write every split's figures (fit_default.py's --summary-json) to this file",
    )
    ap.add_argument("fit_args", nargs=argparse.REMAINDER, help="after --: fit_default.py's")
    args = ap.parse_args()
    fit_args = [a for a in args.fit_args if a != "--"]
    if "--write" in fit_args:
        ap.error("repeated_cv.py measures; run fit_default.py itself to --write")
    runs: list[dict[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            out = Path(tmp) / f"{seed}.json"
            # the features and supports do not depend on the split: computed once, shared
            rows = ["--rows-cache", str(Path(tmp) / "rows.pickle")]
            cmd = [sys.executable, str(FIT), *fit_args, *rows, "--fold-seed", str(seed)]
            subprocess.run(
                [*cmd, "--summary-json", str(out)], check=True, stdout=subprocess.DEVNULL
            )
            runs.append(json.loads(out.read_text()))
            print(f"split {seed} done", file=sys.stderr, flush=True)
    if args.runs_json is not None:
        args.runs_json.write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
    print(f"{args.seeds} random grouped 5-fold splits: balanced accuracy mean ± sd over splits")
    print(
        f"{'group':34s} {'n':>5s} {'mean':>6s} {'sd':>6s} {'min':>6s} {'max':>6s} {'best cut':>9s} {'span F1':>8s}"
    )
    for g in runs[0]:
        if "balanced_accuracy" not in runs[0][g]:
            continue
        bas = [r[g]["balanced_accuracy"] for r in runs]
        f1s = [r[g]["span_f1"] for r in runs if r[g]["span_f1"] is not None]
        f1 = f"{statistics.fmean(f1s):8.3f}" if f1s else f"{'-':>8s}"
        sd = statistics.stdev(bas) if len(bas) > 1 else 0.0
        print(
            f"{g:34s} {runs[0][g]['n']:5d} {statistics.fmean(bas):6.3f} {sd:6.3f} "
            f"{min(bas):6.3f} {max(bas):6.3f} {runs[0][g]['baseline_best_cut']:9.3f} {f1}"
        )
    natural = [r["rag_dev:natural"] for r in runs if "rag_dev:natural" in r]
    if natural:
        print(
            "rag_dev natural mix, mean over splits: response-level F1 (hallucinated) "
            f"{statistics.fmean(n['f1'] for n in natural):.3f}, correct answers flagged "
            f"{statistics.fmean(n['flagged'] for n in natural):.1%}, hallucinated answers passed "
            f"{statistics.fmean(n['passed'] for n in natural):.1%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
