"""The opening-hours check on the data-to-text answers of rag_dev: where it fires, and what it
changes in the default judge's verdicts.

    python benchmarks/hours_check.py [--data FILE] [--out FILE]

Every record whose context holds a JSON record with ``"hours"`` is read sentence by sentence
(``judges/_hours.py``, :func:`hours_conflicts`). Printed:

- the answers it fires in, correct and hallucinated, and how many of the firing sentences
  overlap a labelled hallucinated span;
- the default judge's verdicts on the data-to-text answers at its shipped stack and cut, with
  the check and with it switched off (the two ``_analysis`` hooks replaced by no-ops in this
  process): hallucinated answers flagged, correct answers kept, balanced accuracy. In sample:
  the stack and the cut were fitted without the check.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from ground_integrations import GroundednessChecker
from ground_integrations.judges import _analysis, _spans
from ground_integrations.judges._hours import hours_conflicts, passage_hours
from ground_integrations.text import split_sentences

ROOT = Path(__file__).resolve().parents[1]


def fires(records: list[dict]) -> list[str]:
    answers: Counter[tuple[str, bool]] = Counter()
    sentences: Counter[str] = Counter()
    for r in records:
        hours = next((h for p in r["context"] if (h := passage_hours(p)) is not None), None)
        if hours is None:
            continue
        fired = False
        for s in split_sentences(r["answer"]):
            if not hours_conflicts(s.text, hours):
                continue
            fired = True
            inside = any(sp["start"] < s.end and sp["end"] > s.start for sp in r["spans"] or [])
            sentences["inside a labelled span" if inside else "outside every labelled span"] += 1
        answers[r["label"], fired] += 1
    out = ["answers with a record that gives hours: the check fires in"]
    for label in ("grounded", "notGrounded"):
        n = answers[label, True] + answers[label, False]
        out.append(f"  {label:12s} {answers[label, True]:4d} / {n}")
    out.append("firing sentences: " + ", ".join(f"{n} {k}" for k, n in sorted(sentences.items())))
    return out


def verdicts(records: list[dict], on: bool) -> tuple[int, int, int, int]:
    if not on:
        _analysis.hours_conflicts = lambda sentence, hours: []  # type: ignore[assignment]
        _analysis.mask_hours = lambda sentence, hours: sentence  # type: ignore[assignment]
        _spans.mask_hours = lambda sentence, hours: sentence  # type: ignore[assignment]
    checker = GroundednessChecker(cache_size=0)
    flagged = kept = hallucinated = correct = 0
    for r in records:
        result = checker.check(r["context"], r["answer"], None, task=r["task"])
        flag = result.verdict.value != "grounded"
        if r["label"] == "grounded":
            correct += 1
            kept += not flag
        else:
            hallucinated += 1
            flagged += flag
    return flagged, hallucinated, kept, correct


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "rag_dev.jsonl"))
    ap.add_argument("--out", help="also write the report here")
    args = ap.parse_args()
    with open(args.data, encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    d2t = [r for r in records if r.get("subtask") == "Data2txt"]
    lines = [f"$ python benchmarks/hours_check.py --data {Path(args.data).name}", ""]
    lines += fires(d2t)
    lines += ["", f"default judge on the {len(d2t)} data-to-text answers (in sample)"]
    for on in (True, False):  # "on" first: switching off patches this process
        flagged, hallucinated, kept, correct = verdicts(d2t, on)
        ba = (flagged / hallucinated + kept / correct) / 2
        lines.append(
            f"  hours check {'on ' if on else 'off'}: hallucinated flagged {flagged}/{hallucinated},"
            f" correct kept {kept}/{correct}, balanced accuracy {ba:.3f}"
        )
    report = "\n".join(lines)
    print(report)
    if args.out:
        Path(args.out).write_text(report + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
