"""How the cost of one check grows with the size of the context and of the answer.

    python benchmarks/bench_scaling.py [--quick] [--worst] [--context-limit CHARS]

Synthetic, seeded, figure-dense inputs: passages of company news (names, places, dates, money,
percentages, counts) and an answer whose sentences restate context sentences, some with a
figure or a name changed and some made up. One check per row, one thread, each a QnA check
(the default judge's model stage is fitted for QnA only):

* the context grows (10,000 to 500,000 characters) under a 2,000-character answer, each
  context new to the judge (its index cache emptied first), so the time includes indexing it;
* the answer grows (1,000 to 20,000 characters) over a 100,000-character context indexed
  before, so the time is the answer's own;
* both grow together (the answer a 25th of the context, up to 500,000 + 20,000 characters:
  the series run past the default context limit, with the checkers' limits raised), each
  context new: a cost that grows with their product shows here;
* the worst cases at the default limits (a context of ``DEFAULT_LIMITS.max_context_chars`` and
  an answer of ``max_answer_chars``): the synthetic news (also under a query of news of
  ``max_query_chars``; the rest under a one-line query), and crafted shapes where every answer
  sentence shares words with most context sentences (:func:`crafted`: one sentence repeated,
  tiny sentences of two kinds, a 40-word vocabulary), for HeuristicJudge, the default judge
  (CrossEncoderJudge with one onnxruntime thread), and the default judge with its model forced
  on its whole pair budget (:func:`full_budget`: ``always_run_model`` and as many sentences as
  ``max_model_pairs`` allows, where the fitted profiles run the model on one); the synthetic
  news also as ``GroundednessChecker()`` builds the judge (its defaults: one model thread);
* the model at its budget: ``max_model_pairs`` pairs each as long as ``max_length`` allows (the
  most a check's model stage can cost), and the bound it gives: the slowest of those checks
  without its model time, plus that. The issue asks for a bound within 2 s on one thread;
  ``DEFAULT_LIMITS.max_context_chars`` is set so that it holds.

Each row gives the time and the time per 1,000 characters of the input that grows (of the
context when both grow); ``ratio`` divides that by the smallest size's, so linear growth reads
about 1.0 down the column (the machine is shared: compare ratios within one run, not seconds
across runs). The default judge runs its model only on the checks its lexical stage is unsure
of; ``model`` says whether it ran. The context series also gives the memory of the context's
index (tracemalloc, bytes per context character: what ``index_bytes`` estimates the judges'
index cache with). ``--quick`` stops each series at a fifth of its largest size; ``--worst``
runs the worst cases only; ``--context-limit`` measures them at another context size (to choose
the default limit).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import random
import sys
import time
import tracemalloc
from collections.abc import Callable

from ground_integrations import DEFAULT_LIMITS, GroundednessChecker, HeuristicJudge
from ground_integrations.judges._analysis import index_context
from ground_integrations.judges._ranking import RANKED_SENTENCES
from ground_integrations.judges.cross_encoder import (
    MAX_MODEL_PAIRS,
    UNCONFIRMED_SENTENCES,
    CrossEncoderJudge,
)

SEED = 20261126
CONTEXT_SIZES = (10_000, 20_000, 50_000, 100_000, 200_000, 500_000)
ANSWER_SIZES = (1_000, 2_000, 5_000, 10_000, 20_000)
FIXED_ANSWER = 2_000
FIXED_CONTEXT = 100_000
#: Every check is a QnA check (the default judge's model runs only on QnA profiles).
QUERY = "What did the companies report, and where?"

FIRST = (
    "Anna Boris Chen Dalia Emeka Farah Goran Hana Ivan Jonas Kaito Leila Mateo Nadia Omar".split()
)
LAST = "Okafor Lindqvist Tanaka Moreau Haddad Novak Silva Kowalski Brennan Ito Rossi Varga".split()
PLACES = (
    "Lisbon Osaka Nairobi Denver Krakow Porto Lyon Austin Seoul Quito Tampere Gdansk Perth Accra"
).split()
COMPANIES = "Halvern Corvida Nexlo Pellam Trivant Ostrava Meridel Quentis Arbolt Zephra".split()
NOUNS = (
    "revenue profit margin shipments orders customers plants stores employees contracts "
    "turbines batteries vehicles patients trials loans deposits subscribers flights cargo "
    "tonnes megawatts units licences warehouses outlets routes bonds shares dividends"
).split()
VERBS = (
    "reported recorded posted delivered opened closed signed approved expanded reduced "
    "raised cut announced completed acquired sold hired shipped booked"
).split()
ADJECTIVES = (
    "quarterly annual regional national domestic foreign net gross operating adjusted "
    "preliminary audited seasonal record modest steady sharp"
).split()
MONTHS = (
    "January February March April May June July August September October November December"
).split()
FILLERS = (
    "according to the statement",
    "the company said",
    "analysts had expected less",
    "after a slow start to the year",
    "despite higher costs",
    "in line with guidance",
    "the board confirmed",
)


class Synth:
    """A deterministic source of figure-dense sentences."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def person(self) -> str:
        return f"{self.rng.choice(FIRST)} {self.rng.choice(LAST)}"

    def figure(self) -> str:
        r = self.rng
        kind = r.randrange(6)
        if kind == 0:
            return f"{r.randint(1, 999):,}.{r.randint(0, 9)} million"
        if kind == 1:
            return f"{r.uniform(0.1, 99):.1f}%"
        if kind == 2:
            return f"${r.randint(1_000, 9_999_999):,}"
        if kind == 3:
            return f"{r.randint(2, 90_000):,}"
        if kind == 4:
            return f"{r.uniform(1, 500):.2f}"
        return str(r.randint(12, 480))

    def date(self) -> str:
        r = self.rng
        return f"{r.choice(MONTHS)} {r.randint(1, 28)}, {r.randint(1990, 2025)}"

    def sentence(self) -> str:
        r = self.rng
        company, place = r.choice(COMPANIES), r.choice(PLACES)
        noun, verb, adj = r.choice(NOUNS), r.choice(VERBS), r.choice(ADJECTIVES)
        templates = (
            f"{company} {verb} {adj} {noun} of {self.figure()} in {place} on {self.date()}.",
            f"On {self.date()}, {self.person()} said {company} had {verb} {self.figure()} "
            f"{noun}, up {self.figure()} from {r.randint(1990, 2025)}.",
            f"In {place}, the {adj} {noun} rose to {self.figure()}, "
            f"{r.choice(FILLERS)}, while {r.choice(NOUNS)} fell by {self.figure()}.",
            f"{self.person()}, who joined {company} in {r.randint(1990, 2025)}, {verb} "
            f"{self.figure()} {noun} and {self.figure()} {r.choice(NOUNS)} across {place}.",
            f"The {adj} report lists {self.figure()} {noun} for {company}, "
            f"against {self.figure()} a year earlier.",
        )
        return r.choice(templates)

    def context(self, chars: int) -> list[str]:
        """Passages of 4 to 12 sentences, ``chars`` characters in all (give or take one)."""
        passages: list[str] = []
        used = 0
        while used < chars:
            sentences = [self.sentence() for _ in range(self.rng.randint(4, 12))]
            passage = " ".join(sentences)[: chars - used]
            passages.append(passage)
            used += len(passage) + 1
        return passages

    def answer(self, context: list[str], chars: int) -> str:
        """Sentences restating context sentences (half verbatim, a fifth with one figure
        changed, a tenth with the person changed) and a fifth made up."""
        pool = [s for p in context for s in p.split(". ") if len(s) > 40]
        out: list[str] = []
        used = 0
        while used < chars:
            roll = self.rng.random()
            base = self.rng.choice(pool).rstrip(".") + "."
            if roll < 0.5:
                sentence = base
            elif roll < 0.7:
                words = base.split()
                k = next((i for i, w in enumerate(words) if any(c.isdigit() for c in w)), 0)
                words[k] = str(self.rng.randint(2, 9_999))
                sentence = " ".join(words)
            elif roll < 0.8:
                sentence = f"{self.person()} confirmed this: {base}"
            else:
                sentence = self.sentence()
            out.append(sentence)
            used += len(sentence) + 1
        return " ".join(out)[:chars]


#: The task a crafted shape is checked in (QnA unless named here): data-to-text is a summary of
#: records, where the span ranker rereads the flagged sentences.
SHAPE_TASKS = {"JSON records, loose answer": "Summarization"}


def crafted(context_chars: int, answer_chars: int) -> dict[str, tuple[list[str], str]]:
    """Inputs that defeat an inverted index: every answer sentence shares words with most
    context sentences (names say how)."""
    r = random.Random(SEED)

    def fill(make: Callable[[], str], chars: int) -> str:
        parts: list[str] = []
        used = 0
        while used < chars:
            parts.append(make())
            used += len(parts[-1]) + 1
        return " ".join(parts)[: chars - 1].rstrip() + "."

    repeated = "Halvern reported revenue of 4.5 million in Lisbon."
    words = [*NOUNS, *VERBS][:40]

    def record(i: int) -> str:
        return json.dumps(
            {
                "name": f"{r.choice(NOUNS).title()} House {i}",
                "city": "Lisbon",
                "hours": {day: "11:0-21:0" for day in ("Monday", "Friday", "Sunday")},
                "attributes": {"OutdoorSeating": bool(i % 2), "WiFi": "free"},
                "review_info": [{"review_stars": 4.0, "review_text": "Good food, kind staff."}],
            }
        )

    def records(chars: int) -> list[str]:
        out: list[str] = []
        used = 0
        while used + 400 < chars:
            out.append(record(len(out)))
            used += len(out[-1]) + 1
        return out

    return {
        "one sentence repeated": (
            [fill(lambda: repeated, context_chars)],
            fill(lambda: repeated, answer_chars),
        ),
        "tiny sentences, two kinds": (
            [
                fill(
                    lambda: f"Revenue rose {r.randint(1, 99)}%. Sales fell {r.randint(1, 99)}%.",
                    context_chars,
                )
            ],
            fill(lambda: f"Revenue rose and sales fell by {r.randint(1, 99)}%.", answer_chars),
        ),
        "40-word vocabulary": (
            [fill(lambda: " ".join(r.sample(words, 8)).capitalize() + ".", context_chars)],
            fill(lambda: " ".join(r.sample(words, 5)).capitalize() + ".", answer_chars),
        ),
        # data-to-text: every passage a JSON record, every answer sentence half made of words
        # the records lack, so most are flagged and the span ranker rereads them
        "JSON records, loose answer": (
            records(context_chars),
            fill(
                lambda: (
                    f"The {r.choice(NOUNS)} house in Lisbon has a cozy terrace and lovely ambience."
                ),
                answer_chars,
            ),
        ),
        # a page with no full stop: its "sentences" are the splitter's longest pieces, and
        # every answer sentence negates one of them (the negation check reads the window)
        "unpunctuated page, negated answer": (
            [fill(lambda: "the river bank report was alpha beta in the city", context_chars)],
            fill(lambda: "The river bank report was not alpha beta in the city.", answer_chars),
        ),
    }


def timed(check: Callable[[], object]) -> float:
    start = time.perf_counter()
    check()
    return time.perf_counter() - start


def index_memory(context: list[str]) -> float:
    """Bytes per context character that the context's index holds (tracemalloc)."""
    index_context(context)  # warm the stemmer's and the folder's caches first
    gc.collect()
    tracemalloc.start()
    index = index_context(context)
    for lazy in ("arrays", "figure_values", "word_stems"):  # parts built at first need
        getattr(index, lazy, None)
    used = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return used / sum(len(p) for p in context)


def count_model_runs(judge: CrossEncoderJudge) -> None:
    """Record on ``judge`` how many pairs its model runs on (``_pairs``) and in what time
    (``_model_seconds``)."""
    original = judge.support

    def support(pairs):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        out = original(pairs)
        judge._model_seconds += time.perf_counter() - start  # type: ignore[attr-defined]
        judge._pairs += len(pairs)  # type: ignore[attr-defined]
        return out

    judge._pairs = 0  # type: ignore[attr-defined]
    judge._model_seconds = 0.0  # type: ignore[attr-defined]
    judge.support = support  # type: ignore[method-assign]


def full_budget(judge: CrossEncoderJudge) -> CrossEncoderJudge:
    """``judge`` with its model run on every check and on its whole pair budget: each profile
    with a model runs it on as many sentences as ``max_model_pairs`` allows (premises per
    sentence times sentences), not on the one sentence the fitted profiles choose."""
    judge.always_run_model = True
    assert judge.profiles is not None
    for name, profile in judge.profiles.items():
        if profile.model is not None:
            per_sentence = sum(count for _, count in profile.windows)
            sentences = judge.max_model_pairs // per_sentence
            judge.profiles[name] = dataclasses.replace(profile, sentences=sentences)
    return judge


def model_budget(judge: CrossEncoderJudge, pairs_per_check: int | None = None) -> float:
    """Seconds the model takes on ``pairs_per_check`` pairs (default ``max_model_pairs``) each
    cut at ``max_length`` tokens: the most a check's model stage can cost when it runs that
    many (the best of three runs)."""
    long = " ".join(Synth(SEED).sentence() for _ in range(12))
    pairs = [(long, long)] * (pairs_per_check or judge.max_model_pairs)
    return min(timed(lambda: judge.support(pairs)) for _ in range(3))


def most_pairs(judge: CrossEncoderJudge) -> int:
    """The most model pairs one check of ``judge`` can run with its fitted profiles: a profile
    whose band lets the model run reads its ``sentences`` weakest sentences (capped by
    ``max_model_pairs``), each with at most one pair per window its ``windows`` name, and then
    one pair for each of at most ``UNCONFIRMED_SENTENCES`` negations it confirms, and in a
    profile with a span ranker (``spans.json``) one pair for each of at most
    ``RANKED_SENTENCES`` flagged sentences, within ``max_model_pairs`` in all."""
    assert judge.profiles is not None
    most = 0
    for name, profile in judge.profiles.items():
        lo, hi = profile.band
        pairs = 0
        if (
            profile.model is not None
            and profile.sentences >= 1
            and (hi > lo or judge.always_run_model)
        ):
            per_sentence = sum(count for _, count in profile.windows)
            sentences = min(
                profile.sentences, max(1, judge.max_model_pairs // max(1, per_sentence))
            )
            pairs = sentences * per_sentence
        pairs += UNCONFIRMED_SENTENCES
        if name in judge.rankers:
            pairs += RANKED_SENTENCES
        most = max(most, pairs)
    return min(judge.max_model_pairs, most)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--worst", action="store_true", help="the worst cases only")
    parser.add_argument(
        "--context-limit",
        type=int,
        default=DEFAULT_LIMITS.max_context_chars,
        help="context size of the worst cases (default: the default limit)",
    )
    args = parser.parse_args()
    scale = 5 if args.quick else 1
    context_sizes = [s for s in CONTEXT_SIZES if s <= CONTEXT_SIZES[-1] // scale]
    answer_sizes = [s for s in ANSWER_SIZES if s <= ANSWER_SIZES[-1] // scale]

    # the series run past the default context limit (they show how cost grows), and so may
    # the worst cases (--context-limit): every checker takes the largest size
    limits = dataclasses.replace(
        DEFAULT_LIMITS, max_context_chars=max(CONTEXT_SIZES[-1], args.context_limit)
    )
    heuristic_judge = HeuristicJudge()
    default_judge = CrossEncoderJudge(threads=1)
    forced_judge = full_budget(CrossEncoderJudge(threads=1))
    model_judges = {"default/1t": default_judge, "default/1t, full budget": forced_judge}
    for judge in model_judges.values():
        count_model_runs(judge)
    judges: dict[str, tuple[GroundednessChecker, HeuristicJudge]] = {
        "heuristic": (
            GroundednessChecker(heuristic_judge, cache_size=0, limits=limits),
            heuristic_judge,
        ),
        **{
            name: (GroundednessChecker(judge, cache_size=0, limits=limits), judge.heuristic)
            for name, judge in model_judges.items()
        },
    }
    synth = Synth(SEED)
    warm = synth.context(5_000)
    for checker, _ in judges.values():  # warm up: stemmer, tokenizer, ONNX session
        checker.check(warm, synth.answer(warm, 1_000), QUERY, task="QnA")
    for judge in model_judges.values():
        judge.support([("Warm up.", "Warm up.")])

    lexical_seconds: list[float] = []  # of every check run: its time outside the model

    def run(
        name: str,
        context: list[str],
        answer: str,
        cold: bool = True,
        query: str = QUERY,
        task: str = "QnA",
    ) -> tuple[float, str]:
        """Seconds for one check, and for a judge with a model whether it ran ("yes" or "no";
        the pairs it ran on where it was forced on its budget)."""
        checker, heuristic = judges[name]
        if cold:
            heuristic._index_cache.clear()
        else:
            checker.check(context, "Warm up.", QUERY, task="QnA")  # index it
        judge = model_judges.get(name)
        if judge is not None:
            judge._pairs = 0  # type: ignore[attr-defined]
            judge._model_seconds = 0.0  # type: ignore[attr-defined]
        seconds = timed(lambda: checker.check(context, answer, query, task=task))
        if judge is None:
            lexical_seconds.append(seconds)
            return seconds, ""
        lexical_seconds.append(seconds - judge._model_seconds)  # type: ignore[attr-defined]
        pairs: int = judge._pairs  # type: ignore[attr-defined]
        if judge is forced_judge:
            return seconds, f"{pairs} pairs"
        return seconds, "yes" if pairs else "no"

    print(f"one check per row, QnA ({QUERY!r}) unless a row says otherwise, one thread\n")
    series = (
        ("context grows, each context new", [(c, FIXED_ANSWER) for c in context_sizes], 0, True),
        (
            "answer grows, the context indexed before",
            [(FIXED_CONTEXT // scale, a) for a in answer_sizes],
            1,
            False,
        ),
        ("both grow, each context new", [(c, c // 25) for c in context_sizes], 0, True),
    )
    for title, sizes, grows, cold in () if args.worst else series:
        print(f"{title}:")
        memory = title.startswith("context")
        print(
            f"{'judge':11s} {'context':>8s} {'answer':>7s} {'seconds':>8s} {'s/1k chars':>10s}"
            f" {'ratio':>6s} model" + ("  index B/char" if memory else "")
        )
        cases = []
        for context_chars, answer_chars in sizes:
            context = synth.context(context_chars)
            cases.append(
                (context_chars, answer_chars, context, synth.answer(context, answer_chars))
            )
        for name in ("heuristic", "default/1t"):
            first: float | None = None
            for context_chars, answer_chars, context, answer in cases:
                seconds, ran = run(name, context, answer, cold)
                size = (context_chars, answer_chars)[grows]
                per_k = seconds / size * 1_000
                first = first or per_k
                extra = f"  {index_memory(context):13.0f}" if memory and name == "heuristic" else ""
                print(
                    f"{name:11s} {context_chars:8,d} {answer_chars:7,d} {seconds:8.3f} "
                    f"{per_k:10.4f} {per_k / first:6.2f} {ran:5s}{extra}"
                )
        print()

    assert args.context_limit and DEFAULT_LIMITS.max_answer_chars
    assert DEFAULT_LIMITS.max_query_chars
    limit_context = args.context_limit // scale
    limit_answer = DEFAULT_LIMITS.max_answer_chars // scale
    print(f"worst cases at the limits ({limit_context:,} + {limit_answer:,} characters):")
    print(f"{'shape':42s} " + " ".join(f"{name:>23s}" for name in judges) + "  model")
    context = synth.context(limit_context)
    answer = synth.answer(context, limit_answer)
    shapes = {"company news (synthetic)": (context, answer, QUERY)}
    # the longest query, of news like the context's: its figures and words count as given
    query = " ".join(synth.sentence() for _ in range(200))[: DEFAULT_LIMITS.max_query_chars]
    shapes["company news, longest query"] = (context, answer, query)
    shapes.update({k: (c, a, QUERY) for k, (c, a) in crafted(limit_context, limit_answer).items()})
    lexical_seconds.clear()
    for shape, (context, answer, query) in shapes.items():
        row: list[float] = []
        models: list[str] = []
        for name in judges:
            seconds, ran = run(
                name, context, answer, query=query, task=SHAPE_TASKS.get(shape, "QnA")
            )
            row.append(seconds)
            models.append(ran)
        label = shape if shape not in SHAPE_TASKS else f"{shape} ({SHAPE_TASKS[shape]})"
        print(
            f"{label:42s} " + " ".join(f"{t:21.2f} s" for t in row) + "  " + ", ".join(models[1:])
        )
    default = GroundednessChecker(cache_size=0, limits=limits)
    assert isinstance(default.judge, CrossEncoderJudge)
    default.check(warm, synth.answer(warm, 1_000), QUERY, task="QnA")
    default.judge.support([("Warm up.", "Warm up.")])
    context, answer, _ = shapes["company news (synthetic)"]
    seconds = timed(lambda: default.check(context, answer, QUERY, task="QnA"))
    print(f"company news, GroundednessChecker() (its defaults): {seconds:.2f} s")
    budget = model_budget(default_judge)
    shipped_pairs = most_pairs(default.judge)
    shipped = model_budget(default_judge, shipped_pairs) if shipped_pairs else 0.0
    slowest_lexical = max(lexical_seconds)
    print(
        f"\nthe model at its budget ({MAX_MODEL_PAIRS} pairs of {default_judge.max_length} tokens,"
        f" one thread): {budget:.2f} s"
    )
    print(
        f"the model on the most pairs a check of GroundednessChecker() runs ({shipped_pairs} pairs"
        f" of {default_judge.max_length} tokens: its fitted profiles, one thread): {shipped:.2f} s"
    )
    print(
        f"bound, GroundednessChecker() as shipped: the slowest check above without its model time"
        f" ({slowest_lexical:.2f} s) + the model on {shipped_pairs} pairs ="
        f" {slowest_lexical + shipped:.2f} s"
    )
    print(
        f"bound, the model on its whole pair budget (full_budget): {slowest_lexical:.2f} s + the model at its"
        f" budget = {slowest_lexical + budget:.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
