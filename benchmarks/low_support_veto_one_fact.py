"""The hand-written one-fact set under a low-support veto of brief summaries. A probe.

    python benchmarks/low_support_veto_one_fact.py

Every item of ``benchmarks/data/one_fact_edits.jsonl`` is checked as ``Summarization`` by the
default judge, as ``one_fact_edits.py`` checks it. For each ``t``, an answer also counts as
flagged when its profile is ``Summarization:brief`` and the bundled model supports one of its
checked sentences below ``t`` against its 3-sentence window: what ``fit_default.py
--low-support-veto Summarization:brief=T`` measures on the labelled data, read on the set the
issue's one-fact requirement is measured on. ``t`` = 0 is the shipped judge.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ground_integrations import GroundednessChecker
from ground_integrations.judges._profiles import profile_of
from ground_integrations.judges.cross_encoder import CrossEncoderJudge, window_pairs

DATA = Path(__file__).resolve().parent / "data" / "one_fact_edits.jsonl"
CUTS = (0.0, 0.02, 0.05, 0.1)


def main() -> int:
    judge = CrossEncoderJudge(threads=1)
    checker = GroundednessChecker(judge, cache_size=0)
    with open(DATA, encoding="utf-8") as fh:
        items = [json.loads(line) for line in fh if line.strip()]
    counts: Counter = Counter()
    for item in items:
        domain = item.get("domain", "Generic")
        result = checker.check(item["context"], item["answer"], task="Summarization", domain=domain)
        request = checker.build_request(
            item["context"], item["answer"], None, task="Summarization", domain=domain
        )
        index, spans, feats = judge.heuristic.analyse(request)
        brief = profile_of(request, feats) == "Summarization:brief"
        checked = [i for i, f in enumerate(feats) if f.checkable]
        pairs = window_pairs(index, spans, feats, checked) if checked else []
        lowest = min(judge.support(pairs), default=1.0)
        kind = item["kind"]
        counts[kind, "n"] += 1
        counts[kind, "brief"] += brief
        for t in CUTS:
            counts[kind, t] += result.verdict.value != "grounded" or (brief and lowest < t)
    print(f"judge: {judge.name} {judge.version}; Summarization; flagged = notGrounded or notSure")
    for kind, verb in (("edit", "flagged"), ("rewording", "kept")):
        n = counts[kind, "n"]
        print(f"{kind}s: {n} ({counts[kind, 'brief']} judged as brief summaries)")
        for t in CUTS:
            k = counts[kind, t] if kind == "edit" else n - counts[kind, t]
            print(f"  t = {t:.2f}: {verb} {k}/{n} ({k / n:.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
