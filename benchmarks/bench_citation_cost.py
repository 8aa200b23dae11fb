"""What a citation check costs when every sentence cites its own set of passages.

    python benchmarks/bench_citation_cost.py [--sentences 300] [--judge cross-encoder]

An answer of N sentences, sentence i citing passages i + 1 and i + 2 of N + 1 (so N distinct
cited sets); with ``--wrong-every K`` every K-th sentence cites a pair that does not hold its
figure (miscited: its support is searched in the other passages). Printed: the time of one
plain check of the same answer without markers, the time of ``check_citations``, the core
checks it ran and the statuses it found (the best of ``--repeat`` runs each).
"""

from __future__ import annotations

import argparse
import time

from ground_integrations import GroundednessChecker
from ground_integrations.judges import load_judge


def case(n: int, wrong_every: int) -> tuple[list[str], str, str]:
    passages = [
        f"Station {i} recorded {i * 3 + 7} millimetres of rain on day {i % 28 + 1} of the survey."
        for i in range(n + 1)
    ]
    claims = [f"Station {i} recorded {i * 3 + 7} millimetres of rain" for i in range(n)]
    cited = []
    for i, claim in enumerate(claims):
        first = (i + 5) % n + 1 if wrong_every and i % wrong_every == 0 else i + 1
        cited.append(f"{claim} [{first}, {i + 2}].")
    return passages, " ".join(cited), " ".join(f"{c}." for c in claims)


def best(fn, repeat: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=300)
    parser.add_argument("--wrong-every", type=int, default=0)
    parser.add_argument("--judge", default=None, help="a judge name (default: the default judge)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    judge = load_judge(args.judge) if args.judge else None
    checker = GroundednessChecker(judge, cache_size=0)
    passages, cited, plain = case(args.sentences, args.wrong_every)
    checker.check(passages[:2], "Station 0 recorded 7 millimetres of rain.")  # load the model
    t_plain, _ = best(lambda: checker.check(passages, plain), args.repeat)
    t_cite, result = best(lambda: checker.check_citations(passages, cited), args.repeat)
    counts = {k: v for k, v in result.counts().items() if v}  # type: ignore[attr-defined]
    print(
        f"{checker.judge.name}, {args.sentences} sentences citing {args.sentences} distinct "
        f"pairs (every {args.wrong_every or '-'}th miscited):\n"
        f"  plain check      {t_plain:7.2f} s\n"
        f"  check_citations  {t_cite:7.2f} s  ({t_cite / t_plain:.1f}x), "
        f"{result.checks} core checks, {counts}"  # type: ignore[attr-defined]
    )


if __name__ == "__main__":
    main()
