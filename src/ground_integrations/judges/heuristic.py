"""The embedded default judge: offline, deterministic, no model, no network.

For each answer sentence it finds the best-supporting window of context (up to three
consecutive sentences of one passage, ranked by rarity-weighted word overlap) and measures what
the sentence says that the context does not:

* content words with no counterpart (by Porter stem) anywhere in the context, and in the window;
* figures (numbers, amounts, dates) that differ from every figure in the context, after
  normalising separators and allowing a figure rounded from a more precise one;
* names (capitalised words inside the sentence) absent from the context;
* a negation that the window does not share, or vice versa;
* word pairs absent from the context (paraphrase is fine; recombination is suspicious).

These signals are combined by a logistic model whose few weights were fitted on sentence-level
features (see ``benchmarks/fit_heuristic.py``); the score of an answer is the score of its
weakest sentence. In ``QnA`` the query's words count as given. In the ``Medical`` domain every
figure, unit, dose frequency and route must appear in the supporting window itself, and any
miss caps the sentence's score well below the cut.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from ..errors import ConfigurationError
from ..models import Domain, Evidence, GroundednessRequest, SentenceJudgement, Task, Verdict
from ..text import Span, fold, split_sentences, stem, word_spans
from ._lexicon import OPPOSITE_PAIRS
from ._records import field_conflicts, is_record, record_units, yes_no_fields
from .base import Judge, Judgement, Thresholds

__all__ = [
    "DEFAULT_WEIGHTS",
    "FEATURE_NAMES",
    "HeuristicJudge",
    "HeuristicWeights",
    "answer_features",
    "answer_vector",
]

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can could did do does doing down during each either
    else even ever every few for from further get gets got had has have having he her here hers
    herself him himself his how however i if in into is it its itself just let like may me might
    more most much must my myself neither nor now of off on once one only or other others
    otherwise our ours ourselves out over own per quite rather really same shall she should
    since so some still such than that the their theirs them themselves then there therefore
    these they this those though through thus to too under until up upon us use used using very
    via was we well were what whatever when whenever where whereas wherever whether which while
    who whom whose why will with within would yes yet you your yours yourself yourselves
    s t d ll m re ve y o
    oh ok okay yeah yea hey hi hello um uh hmm wow lol sure thanks thank please
    """.split()
)
NEGATIONS = frozenset(
    """
    not no never none nobody nothing nowhere neither nor without cannot cant dont doesnt didnt
    isnt arent wasnt werent wont wouldnt shouldnt couldnt hasnt havent hadnt aint mustnt neednt
    n't unable fail fails failed lack lacks lacked
    """.split()
)
_NUMBER_WORDS = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "thirteen": "13",
    "fourteen": "14",
    "fifteen": "15",
    "sixteen": "16",
    "seventeen": "17",
    "eighteen": "18",
    "nineteen": "19",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "sixty": "60",
    "seventy": "70",
    "eighty": "80",
    "ninety": "90",
    "hundred": "100",
    "dozen": "12",
    "half": "0.5",
}
# Unit spellings that name the same thing; both sides are canonicalised before comparing.
_UNITS = {
    "meter": "m",
    "meters": "m",
    "metre": "m",
    "metres": "m",
    "kilometer": "km",
    "kilometers": "km",
    "kilometre": "km",
    "kilometres": "km",
    "centimeter": "cm",
    "centimeters": "cm",
    "millimeter": "mm",
    "millimeters": "mm",
    "feet": "ft",
    "foot": "ft",
    "inches": "in",
    "inch": "in",
    "miles": "mi",
    "mile": "mi",
    "kilogram": "kg",
    "kilograms": "kg",
    "gram": "g",
    "grams": "g",
    "milligram": "mg",
    "milligrams": "mg",
    "microgram": "mcg",
    "micrograms": "mcg",
    "µg": "mcg",
    "ug": "mcg",
    "milliliter": "ml",
    "milliliters": "ml",
    "millilitre": "ml",
    "millilitres": "ml",
    "liter": "l",
    "liters": "l",
    "litre": "l",
    "litres": "l",
    "pounds": "lb",
    "pound": "lb",
    "lbs": "lb",
    "percent": "%",
    "per cent": "%",
    "pct": "%",
    "hours": "hour",
    "hrs": "hour",
    "hr": "hour",
    "minutes": "minute",
    "mins": "minute",
    "min": "minute",
    "seconds": "second",
    "secs": "second",
    "sec": "second",
    "days": "day",
    "weeks": "week",
    "months": "month",
    "years": "year",
    "yrs": "year",
    "yr": "year",
    "units": "unit",
    "iu": "unit",
}
# Terms a Medical-domain sentence may not change: units, frequencies, routes.
_MEDICAL_CRITICAL = frozenset(
    """
    mg mcg g kg ml l unit % daily once twice thrice weekly monthly hourly nightly bid tid qid qd
    qhs prn oral orally iv intravenous intravenously im intramuscular subcutaneous topical
    inhaled sublingual rectal tablet tablets capsule capsules dose doses injection injections
    """.split()
)
_NUMBER = re.compile(r"^[+-]?\d+(?:[.,]\d+)*$")
_HAS_DIGIT = re.compile(r"\d")


FEATURE_NAMES = (
    "missing_words",  # share of content words in neither the context nor the query
    "query_echo",  # share of content words found only in the query: a restated question
    "missing_stems",  # share of content stems absent from the context and the query
    "missing_local",  # share of content stems absent from the best-supporting window
    "figures",  # figures that match no figure of the context
    "names",  # capitalised names absent from the context
    "pairs",  # share of adjacent word pairs absent from the context
    "novel_trigrams",  # share of words not inside any word triple shared with the context
    "first_person",  # share of first-person words (opinions and chit-chat, not claims)
    "opens_with_question",  # the answer starts by asking instead of stating (whole answer)
)


@dataclass(frozen=True)
class HeuristicWeights:
    """A logistic model over :data:`FEATURE_NAMES` (badness: higher = less grounded)."""

    bias: float
    coef: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.coef) != len(FEATURE_NAMES):
            raise ValueError(f"need {len(FEATURE_NAMES)} coefficients, got {len(self.coef)}")


#: Fitted by ``benchmarks/fit_heuristic.py`` on ``shared/data/dev.jsonl`` (one model per task).
DEFAULT_WEIGHTS: dict[Task, HeuristicWeights] = {
    Task.QNA: HeuristicWeights(
        bias=-2.148,
        coef=(-0.286, 2.548, 3.796, -3.037, 0.388, 2.048, 3.929, -1.011, 5.594, 2.718),
    ),
    Task.SUMMARIZATION: HeuristicWeights(
        bias=-0.508,
        coef=(0.747, 0.000, -2.949, 2.691, 1.127, 1.190, -0.568, -0.107, 1.795, 2.812),
    ),
}
#: A figure that matches nothing in the context caps the sentence's score here (below the cut).
FIGURE_CAP = 0.3
#: A sentence that uses a word where its well-matched supporting window uses the opposite
#: ("west" / "east", "increased" / "decreased") is capped here, below the cut.
OPPOSITE_CAP = 0.3
#: Medical domain: a sentence whose negation the well-matched supporting window does not share.
#: (In the Generic domain a flip is only reported: capping there cost 1-4 points of balanced
#: accuracy on every development set, because unrelated negations in the window trigger it.)
NEGATION_CAP = 0.4
#: In the Medical domain, a figure, unit, frequency or route missing from the supporting window.
MEDICAL_CAP = 0.15
_FIRST_PERSON = frozenset("i me my mine myself im ive id ill".split())


def _canonical_number(token: str) -> str | None:
    """``"4,207.30"`` -> ``"4207.3"``; ``"ten"`` -> ``"10"``; not a number -> ``None``."""
    if token in _NUMBER_WORDS:
        return _NUMBER_WORDS[token]
    if not _NUMBER.match(token):
        return None
    body = token.lstrip("+")
    # "1,234" and "1,234.5" use commas as thousands separators; "3,5" reads as a decimal comma.
    if re.fullmatch(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?", body):
        body = body.replace(",", "")
    elif "," in body and "." not in body:
        body = body.replace(",", ".")
    else:
        body = body.replace(",", "")
    try:
        value = Decimal(body)
    except InvalidOperation:
        return None
    text = format(value.normalize(), "f")
    return text


def _rounds_to(answer_figure: str, context_figure: str) -> bool:
    """``"4207"`` is supported by ``"4207.3"``: the answer gives the context's figure rounded."""
    if answer_figure == context_figure:
        return True
    if "." in context_figure and (
        "." not in answer_figure
        or len(answer_figure.split(".")[1]) < len(context_figure.split(".")[1])
    ):
        places = len(answer_figure.split(".")[1]) if "." in answer_figure else 0
        try:
            rounded = round(Decimal(context_figure), places)
        except InvalidOperation:  # pragma: no cover - both were parsed before
            return False
        return (
            format(rounded.normalize(), "f") == answer_figure
            or str(int(Decimal(context_figure))) == answer_figure
        )
    return False


@dataclass
class _Tokens:
    """A piece of text reduced to what the judge compares."""

    words: list[str] = field(default_factory=list)  # folded, in order (units canonicalised)
    stems: list[str] = field(default_factory=list)  # content stems, in order
    figures: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # folded capitalised words, not first
    negated: bool = False
    surface: dict[str, str] = field(default_factory=dict)  # canonical figure -> as written


def _analyse(text: str) -> _Tokens:
    out = _Tokens()
    spans = word_spans(text)
    for i, span in enumerate(spans):
        word = fold(span.text)
        word = _UNITS.get(word, word)
        out.words.append(word)
        if word in NEGATIONS:
            out.negated = not out.negated
            continue
        figure = _canonical_number(word)
        if figure is not None and (_HAS_DIGIT.search(word) or i > 0):
            out.figures.append(figure)
            out.surface.setdefault(figure, span.text)
            continue
        if _HAS_DIGIT.search(word):
            # "3rd", "covid-19", "a4": treat as an exact-match token.
            out.stems.append(word)
            continue
        if word in STOPWORDS or (len(word) < 2 and not word.isalpha()):
            continue
        out.stems.append(stem(word))
        if i > 0 and span.text[:1].isupper() and word not in STOPWORDS:
            out.names.append(word)
    return out


@dataclass
class _ContextSentence:
    passage: int
    start: int
    end: int
    text: str
    stems: frozenset[str]
    figures: frozenset[str]
    words: frozenset[str]
    negated: bool


@dataclass
class _ContextIndex:
    sentences: list[_ContextSentence]
    stems: frozenset[str]
    words: frozenset[str]
    figures: frozenset[str]
    pairs: frozenset[tuple[str, str]]
    triples: frozenset[tuple[str, str, str]]
    idf: dict[str, float]
    surface: dict[str, str]
    #: yes/no fields of JSON-record passages (see ``_records.yes_no_fields``)
    fields: list[tuple[tuple[str, ...], bool]] = field(default_factory=list)


def _index_context(context: Sequence[str]) -> _ContextIndex:
    sentences: list[_ContextSentence] = []
    pairs: set[tuple[str, str]] = set()
    triples: set[tuple[str, str, str]] = set()
    words: set[str] = set()
    figures: set[str] = set()
    df: Counter[str] = Counter()
    surface: dict[str, str] = {}
    fields: list[tuple[tuple[str, ...], bool]] = []
    for p, passage in enumerate(context):
        record = is_record(passage)
        if record:
            fields.extend(yes_no_fields(passage))
        units = record_units(passage) if record else split_sentences(passage)
        for span in units:
            tokens = _analyse(span.text)
            stems = frozenset(tokens.stems)
            df.update(stems)
            sentence = _ContextSentence(
                passage=p,
                start=span.start,
                end=span.end,
                text=span.text,
                stems=stems,
                figures=frozenset(tokens.figures),
                words=frozenset(tokens.words),
                negated=tokens.negated,
            )
            sentences.append(sentence)
            for canonical, written in tokens.surface.items():
                surface.setdefault(canonical, written)
            words |= sentence.words
            figures |= sentence.figures
            w = tokens.words
            pairs.update(zip(w, w[1:]))
            triples.update(zip(w, w[1:], w[2:]))
    n = max(1, len(sentences))
    return _ContextIndex(
        sentences=sentences,
        stems=frozenset(df),
        words=frozenset(words),
        figures=frozenset(figures),
        pairs=frozenset(pairs),
        triples=frozenset(triples),
        idf={s: math.log(1 + n / c) for s, c in df.items()},
        surface=surface,
        fields=fields,
    )


@dataclass
class _Window:
    first: int
    last: int
    stems: frozenset[str]
    figures: frozenset[str]
    words: frozenset[str]
    negated: bool
    coverage: float


@dataclass
class SentenceFeatures:
    """Features of one answer sentence (see :data:`FEATURE_NAMES`) and what explains them."""

    values: dict[str, float] = field(default_factory=lambda: dict.fromkeys(FEATURE_NAMES, 0.0))
    checkable: bool = True
    unsupported: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    window: _Window | None = None
    medical_violation: bool = False
    figure_mismatch: bool = False
    negation_flip: bool = False
    #: (the sentence's word, the opposite its supporting window says instead)
    opposites: list[tuple[str, str]] = field(default_factory=list)
    #: yes/no fields of a JSON record that the sentence states the opposite of
    field_conflicts: list[str] = field(default_factory=list)

    def vector(self) -> list[float]:
        return [self.values[name] for name in FEATURE_NAMES]


def _best_window(index: _ContextIndex, stems: set[str], width: int = 3) -> _Window | None:
    if not index.sentences or not stems:
        return None
    weights = {s: index.idf.get(s, 0.0) for s in stems}
    total = sum(weights.values()) or 1.0
    hits = [stems & s.stems for s in index.sentences]
    best: tuple[float, int, int] = (-1.0, 0, 0)
    for i in range(len(index.sentences)):
        covered: set[str] = set()
        for j in range(i, min(len(index.sentences), i + width)):
            if index.sentences[j].passage != index.sentences[i].passage:
                break
            covered |= hits[j]
            # Prefer the shortest window reaching a given coverage.
            score = sum(weights[s] for s in covered) / total - 0.01 * (j - i)
            if score > best[0]:
                best = (score, i, j)
    _, i, j = best
    chosen = index.sentences[i : j + 1]
    stems_w = frozenset().union(*(s.stems for s in chosen))
    return _Window(
        first=i,
        last=j,
        stems=stems_w,
        figures=frozenset().union(*(s.figures for s in chosen)),
        words=frozenset().union(*(s.words for s in chosen)),
        negated=any(s.negated for s in chosen),
        coverage=sum(weights[s] for s in stems & stems_w) / total,
    )


def _opposite_index() -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for a, b in OPPOSITE_PAIRS:
        out.setdefault(stem(a), set()).add(stem(b))
        out.setdefault(stem(b), set()).add(stem(a))
    return {k: frozenset(v) for k, v in out.items()}


_OPPOSITES: dict[str, frozenset[str]] | None = None
#: How many words either side of an opposite must share a content word with the window's.
_OPPOSITE_REACH = 3


def _near(words: Sequence[str], i: int) -> set[str]:
    """Content stems within :data:`_OPPOSITE_REACH` words of position ``i``."""
    lo, hi = max(0, i - _OPPOSITE_REACH), i + _OPPOSITE_REACH + 1
    return {
        stem(w)
        for j, w in enumerate(words[lo:hi], lo)
        if j != i and w not in STOPWORDS and w not in NEGATIONS and len(w) > 1
    }


def _opposites(
    words: Sequence[str], window_words: Sequence[str], context_words: frozenset[str]
) -> list[tuple[str, str]]:
    """Words of a sentence that its supporting window contradicts with their opposite.

    The word is nowhere in the context, its opposite is in the window but not in the sentence,
    and both stand next to a shared content word ("sales *decreased*" / "sales *increased*"),
    so that an opposite used about something else does not count.
    """
    global _OPPOSITES
    if _OPPOSITES is None:
        _OPPOSITES = _opposite_index()
    sentence_stems = [stem(w) for w in words]
    window_stems = [stem(w) for w in window_words]
    context_stems = {stem(w) for w in context_words}
    out = []
    seen: set[str] = set()
    for i, s in enumerate(sentence_stems):
        opposite = _OPPOSITES.get(s)
        if not opposite or s in context_stems or s in seen:
            continue
        seen.add(s)
        if opposite & set(sentence_stems):
            continue  # "rocks are larger, stones smaller": both sides are stated
        near = _near(words, i)
        for j, o in enumerate(window_stems):
            if o in opposite and near & _near(window_words, j):
                out.append((words[i], window_words[j]))
                break
    return out


def _closest_figure(figure: str, candidates: Iterable[str]) -> str | None:
    target = Decimal(figure)
    ranked = sorted(candidates, key=lambda c: (abs(Decimal(c) - target), c))
    return ranked[0] if ranked else None


def sentence_features(
    index: _ContextIndex, sentence: str, given: _Tokens | None, domain: Domain, width: int = 3
) -> SentenceFeatures:
    """Compute the features of one answer sentence against an indexed context."""
    tokens = _analyse(sentence)
    given_stems = set(given.stems) if given else set()
    given_words = set(given.words) if given else set()
    given_figures = set(given.figures) if given else set()
    stems = [s for s in dict.fromkeys(tokens.stems) if s not in given_stems]
    feats = SentenceFeatures()
    v = feats.values
    content = [w for w in tokens.words if w not in STOPWORDS and w not in NEGATIONS]
    if not content:
        feats.checkable = False
        return feats
    absent = [w for w in content if w not in index.words]
    echoed = [w for w in absent if w in given_words]
    v["missing_words"] = (len(absent) - len(echoed)) / len(content)
    v["query_echo"] = len(echoed) / len(content)
    v["first_person"] = sum(w in _FIRST_PERSON for w in tokens.words) / len(tokens.words)
    words = tokens.words
    covered = [False] * len(words)
    for k in range(len(words) - 2):
        if (words[k], words[k + 1], words[k + 2]) in index.triples:
            covered[k] = covered[k + 1] = covered[k + 2] = True
    v["novel_trigrams"] = 1.0 - sum(covered) / len(words)
    pairs = [(a, b) for a, b in zip(words, words[1:]) if not (a in STOPWORDS and b in STOPWORDS)]
    if pairs:
        v["pairs"] = sum(p not in index.pairs for p in pairs) / len(pairs)

    # Evidence is where the sentence's content is found, query words included.
    window = _best_window(index, set(tokens.stems), width)
    feats.window = window
    missing = [s for s in stems if s not in index.stems]
    if stems:
        v["missing_stems"] = len(missing) / len(stems)
        local = window.stems if window else frozenset()
        v["missing_local"] = sum(1 for s in stems if s not in local) / len(stems)
    # Report the surface forms of missing words, as they appear in the sentence.
    missing_set = set(missing)
    seen: set[str] = set()
    for span in word_spans(sentence):
        w = fold(span.text)
        st = stem(w)
        if w not in STOPWORDS and st in missing_set and st not in seen:
            seen.add(st)
            feats.unsupported.append(span.text)
    if missing:
        shown = ", ".join(f"'{w}'" for w in feats.unsupported[:6])
        feats.reasons.append(f"the context does not mention {shown}")
    elif v["missing_local"] > 0.34 and window is not None:
        feats.reasons.append(
            "its parts appear in different places of the context, "
            "but no passage states them together"
        )

    medical = domain is Domain.MEDICAL
    figure_pool = (window.figures if (medical and window) else index.figures) | given_figures
    bad_figures = [
        f for f in dict.fromkeys(tokens.figures) if not any(_rounds_to(f, c) for c in figure_pool)
    ]
    if bad_figures:
        feats.figure_mismatch = True
        v["figures"] = min(1.0, len(bad_figures) / 2 + 0.5)
        where = "in the supporting passage" if medical else "in the context"
        for f in bad_figures:
            near = _closest_figure(f, figure_pool)
            hint = f" (it gives {index.surface.get(near, near)})" if near is not None else ""
            written = tokens.surface.get(f, f)
            feats.reasons.append(f"the figure {written} does not appear {where}{hint}")
            feats.unsupported.append(written)
    if medical:
        local_words = (window.words if window else frozenset()) | given_words
        critical = [w for w in dict.fromkeys(tokens.words) if w in _MEDICAL_CRITICAL]
        bad_terms = [w for w in critical if w not in local_words]
        if bad_terms:
            feats.reasons.append(
                "medical domain: "
                + ", ".join(f"'{w}'" for w in bad_terms)
                + " must match the supporting passage exactly"
            )
        feats.medical_violation = bool(bad_figures or bad_terms)

    names = [
        n for n in dict.fromkeys(tokens.names) if n not in index.words and n not in given_words
    ]
    if names:
        v["names"] = min(len(names), 2) / 2
        feats.reasons.append(
            "it names " + ", ".join(f"'{n}'" for n in names) + ", absent from the context"
        )
    if window is not None and window.coverage >= 0.5 and tokens.negated != window.negated:
        feats.negation_flip = domain is Domain.MEDICAL
        feats.reasons.append(
            "it negates what the context states"
            if tokens.negated
            else "the context states the opposite (it is negated there)"
        )
    if window is not None and window.coverage >= 0.5:
        window_text = " ".join(s.text for s in index.sentences[window.first : window.last + 1])
        feats.opposites = _opposites(tokens.words, _analyse(window_text).words, index.words)
        for said, instead in feats.opposites:
            feats.reasons.append(f"it says '{said}' where the context says '{instead}'")
            feats.unsupported.append(said)
    if index.fields:
        feats.field_conflicts = field_conflicts(index.fields, tokens.words, NEGATIONS)
        for name in feats.field_conflicts:
            feats.reasons.append(f"the record's field '{name}' says the opposite")
    if v["first_person"] > 0 and not feats.reasons:
        feats.reasons.append(
            "it states a personal opinion or experience, not a fact from the context"
        )
    return feats


class HeuristicJudge(Judge):
    """The embedded offline judge. Deterministic; about a millisecond per short check.

    Args:
        weights: one logistic model per task (defaults: :data:`DEFAULT_WEIGHTS`).
        window: how many consecutive context sentences may jointly support one sentence.
        index_cache_size: contexts indexed recently are kept (regenerate loops reuse them).
    """

    name = "heuristic"
    version = "1.0"
    default_thresholds = Thresholds(grounded=0.5, not_grounded=0.45)

    def __init__(
        self,
        *,
        weights: dict[Task, HeuristicWeights] | None = None,
        window: int = 3,
        index_cache_size: int = 32,
    ) -> None:
        if window < 1:
            raise ConfigurationError(f"window must be at least 1 sentence, got {window}")
        self.weights = {**DEFAULT_WEIGHTS, **(weights or {})}
        # Load NLTK's tokenizer and stemmer now (about a second, once per process) rather than
        # inside the first check, where it would show up as that check's latency.
        split_sentences("Warm up. Done.")
        stem("warming")
        self.window = window
        self._index_cache: OrderedDict[tuple[str, ...], _ContextIndex] = OrderedDict()
        self._index_cache_size = index_cache_size
        self._lock = threading.Lock()

    def cache_key(self) -> str:
        return f"{self.name}:{self.version}:{sorted(self.weights.items())}:{self.window}"

    def config(self) -> dict[str, Any]:
        return {"window": self.window, "index_cache_size": self._index_cache_size}

    def __repr__(self) -> str:
        return f"HeuristicJudge(window={self.window})"

    def _index(self, context: tuple[str, ...]) -> _ContextIndex:
        with self._lock:
            hit = self._index_cache.get(context)
            if hit is not None:
                self._index_cache.move_to_end(context)
                return hit
        index = _index_context(context)
        with self._lock:
            self._index_cache[context] = index
            while len(self._index_cache) > self._index_cache_size:
                self._index_cache.popitem(last=False)
        return index

    def _score(self, vector: Sequence[float], task: Task) -> float:
        w = self.weights[task]
        z = w.bias + sum(c * x for c, x in zip(w.coef, vector))
        return 1.0 / (1.0 + math.exp(min(50.0, max(-50.0, z))))

    @staticmethod
    def _cap(score: float, feats: SentenceFeatures) -> float:
        if feats.medical_violation:
            return min(score, MEDICAL_CAP)
        if feats.figure_mismatch:
            return min(score, FIGURE_CAP)
        if feats.opposites:
            return min(score, OPPOSITE_CAP)
        if feats.negation_flip:
            return min(score, NEGATION_CAP)
        return score

    def sentence_score(self, feats: SentenceFeatures, task: Task) -> float:
        """Groundedness of one sentence in [0, 1] from its features."""
        if not feats.checkable and not feats.values["opens_with_question"]:
            return 1.0
        return self._cap(self._score(feats.vector(), task), feats)

    def answer_score(self, feats: Sequence[SentenceFeatures], task: Task) -> float:
        """Groundedness of the answer: the model applied to :func:`answer_vector` (what the
        weights were fitted on), capped by any sentence's hard failure."""
        if not any(f.checkable or f.values["opens_with_question"] for f in feats):
            return 1.0
        score = self._score(answer_vector(feats), task)
        for f in feats:
            if f.checkable:
                score = self._cap(score, f)
        return score

    def judge(self, request: GroundednessRequest) -> Judgement:
        index, spans, all_feats = self.analyse(request)
        overall = self.answer_score(all_feats, request.task)
        scores = [self.sentence_score(f, request.task) for f in all_feats]
        return self.judgement(request, index, spans, all_feats, overall, scores)

    def analyse(
        self, request: GroundednessRequest
    ) -> tuple[_ContextIndex, list[Span], list[SentenceFeatures]]:
        """The context index, the answer's sentences and their features."""
        index = self._index(request.context)
        given = _analyse(request.query) if request.task is Task.QNA and request.query else None
        spans = _answer_sentences(request.answer)
        all_feats = answer_features(
            index, [span.text for span in spans], given, request.domain, self.window
        )
        return index, spans, all_feats

    def judgement(
        self,
        request: GroundednessRequest,
        index: _ContextIndex,
        spans: Sequence[Span],
        all_feats: Sequence[SentenceFeatures],
        overall: float,
        scores: list[float],
        notes: Sequence[str] | None = None,
    ) -> Judgement:
        """A Judgement from an answer score and per-sentence scores, with evidence and reasons.

        ``notes`` (one per sentence, may be empty) is appended to a flagged sentence's reason.
        """
        cut = self.default_thresholds
        scores = list(scores)
        if cut.verdict(overall) is Verdict.GROUNDED:
            # The answer as a whole is cleared; no sentence is flagged below it.
            scores = [max(s, overall) for s in scores]
        elif all(cut.verdict(s) is Verdict.GROUNDED for s in scores):
            # The answer as a whole falls short: pin that on its weakest sentence.
            weakest = min(range(len(scores)), key=scores.__getitem__)
            scores[weakest] = min(scores[weakest], overall)
        sentences: list[SentenceJudgement] = []
        for i, (span, feats, score) in enumerate(zip(spans, all_feats, scores)):
            verdict = cut.verdict(score)
            evidence = []
            if feats.window is not None and feats.window.coverage > 0:
                first = index.sentences[feats.window.first]
                last = index.sentences[feats.window.last]
                passage = request.context[first.passage]
                evidence.append(
                    Evidence(
                        passage=first.passage,
                        start=first.start,
                        end=last.end,
                        text=passage[first.start : last.end],
                        score=round(min(1.0, feats.window.coverage), 4),
                    )
                )
            if verdict is not Verdict.GROUNDED and feats.values["opens_with_question"]:
                reason = "it asks a question instead of stating what the context supports"
            elif not feats.checkable:
                reason = "nothing to check: no content words or figures"
            elif verdict is Verdict.GROUNDED:
                reason = "supported by the context" + (
                    f" (passage {evidence[0].passage})" if evidence else ""
                )
            else:
                reason = (
                    "; ".join(feats.reasons) or "weakly supported: little overlap with the context"
                )
                if notes and notes[i]:
                    reason = f"{reason} ({notes[i]})"
            sentences.append(
                SentenceJudgement(
                    index=i,
                    text=span.text,
                    start=span.start,
                    end=span.end,
                    score=round(score, 6),
                    verdict=verdict,
                    evidence=evidence,
                    reason=reason[:1].upper() + reason[1:],
                    unsupported=feats.unsupported if verdict is not Verdict.GROUNDED else [],
                )
            )
        return Judgement(score=overall, sentences=sentences)


def is_question(sentence: str) -> bool:
    return sentence.rstrip("\"'”’)] ").endswith(("?", "？"))


def answer_features(
    index: _ContextIndex,
    sentences: Sequence[str],
    given: _Tokens | None,
    domain: Domain,
    width: int = 3,
) -> list[SentenceFeatures]:
    """Features of every answer sentence. A question after the first sentence ("Would you like
    to know more?") asserts nothing and is not checked; an answer that opens with a question is
    marked on its first sentence."""
    out = []
    for i, text in enumerate(sentences):
        if i > 0 and is_question(text):
            out.append(SentenceFeatures(checkable=False))
            continue
        feats = sentence_features(index, text, given, domain, width)
        if i == 0 and is_question(text):
            feats.values["opens_with_question"] = 1.0
        out.append(feats)
    return out


def answer_vector(feats: Sequence[SentenceFeatures]) -> list[float]:
    """An answer's features: per feature the maximum over its sentences (the weakest decides;
    an unchecked sentence contributes only its answer-level marks)."""
    return [max((f.values[name] for f in feats), default=0.0) for name in FEATURE_NAMES]


def _answer_sentences(answer: str) -> list[Span]:
    spans = split_sentences(answer)
    return spans or [Span(0, len(answer), answer)]
