"""How the embedded judges read text: tokens, figures, the context index, sentence features.

Shared by :class:`~.heuristic.HeuristicJudge` and :class:`~.cross_encoder.CrossEncoderJudge`
(and the scripts that fit them). For each answer sentence it finds the best-supporting window
of context (up to three consecutive sentences of one passage, ranked by rarity-weighted word
overlap) and measures what the sentence says that the context does not (see
:data:`FEATURE_NAMES`), with the hard checks that cap a sentence's score whatever a fitted model
says: a figure the context contradicts, a word swapped for its opposite, and in the Medical
domain a changed dose, unit, frequency or route, or a flipped negation.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation, localcontext

from .._markers import mask_markers
from ..models import Domain
from ..text import Span, base_form, fold, split_sentences, stem, word_spans
from ._lexicon import (
    FIRST_PERSON,
    HEDGES,
    MEDICAL_CRITICAL,
    NEGATIONS,
    NUMBER_WORDS,
    OPPOSITE_PAIRS,
    STOPWORDS,
    UNITS,
)
from ._records import field_conflicts, is_record, record_units, yes_no_fields

__all__ = [
    "FEATURE_NAMES",
    "ContextIndex",
    "SentenceFeatures",
    "Tokens",
    "analyse",
    "answer_features",
    "answer_sentences",
    "answer_vector",
    "cap",
    "index_context",
    "is_question",
    "sentence_features",
]

#: Decimal arithmetic with room for any figure a text holds (IDs, account numbers).
_EXACT = Context(prec=1000)
_NUMBER = re.compile(r"^[+-]?\d+(?:[.,]\d+)*$")
_HAS_DIGIT = re.compile(r"\d")
_FEET_INCHES = re.compile(r"(\d)['\u2019\u2032](\d{1,2})")
#: The two halves of a compound number in words ("fifty-five"), read off NUMBER_WORDS.
_TENS = frozenset(w for w, v in NUMBER_WORDS.items() if v in {str(t) for t in range(20, 100, 10)})
_UNITS_WORDS = frozenset(w for w, v in NUMBER_WORDS.items() if v in {str(u) for u in range(1, 10)})


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


def canonical_number(token: str) -> str | None:
    """``"4,207.30"`` -> ``"4207.3"``; ``"ten"`` -> ``"10"``; not a number -> ``None``."""
    if token in NUMBER_WORDS:
        return NUMBER_WORDS[token]
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
    # exact: the default 28-digit context would round an account number and call two equal
    text = format(value.normalize(_EXACT), "f")
    return text


def figures_of(word: str, written: str) -> list[str]:
    """The figures one word states (``word`` folded, ``written`` as in the text):
    ``"4,207.3"`` -> ``["4207.3"]``, ``"fifty-five"`` -> ``["55"]``, a height ``"5'3"`` ->
    ``["5", "3"]`` (as "5 feet 3 inches" gives them); none for a word that is no number."""
    if m := _FEET_INCHES.fullmatch(written):
        return [m[1], m[2]]
    if (figure := canonical_number(word)) is not None:
        return [figure]
    tens, _, units = word.partition("-")
    if tens in _TENS and units in _UNITS_WORDS:
        return [str(int(NUMBER_WORDS[tens]) + int(NUMBER_WORDS[units]))]
    return []


def rounds_to(answer_figure: str, context_figure: str) -> bool:
    """``"4207"`` is supported by ``"4207.3"``: the answer gives the context's figure rounded."""
    if answer_figure == context_figure:
        return True
    if "." in context_figure and (
        "." not in answer_figure
        or len(answer_figure.split(".")[1]) < len(context_figure.split(".")[1])
    ):
        places = len(answer_figure.split(".")[1]) if "." in answer_figure else 0
        try:
            with localcontext(_EXACT):
                rounded = round(Decimal(context_figure), places)
        except InvalidOperation:  # pragma: no cover - both were parsed before
            return False
        return (
            format(rounded.normalize(_EXACT), "f") == answer_figure
            or str(int(Decimal(context_figure))) == answer_figure
        )
    return False


def approximates(answer_figure: str, context_figure: str, hedge: str) -> bool:
    """A round answer figure after a hedge stands for the context's figure rounded to the
    answer's last non-zero digit, on the hedged side: ``"1800"`` after "over" for ``"1821"``,
    ``"2000"`` after "nearly" for ``"1821"``, ``"50"`` after "about" for ``"48"``. ``hedge``
    is ``"over"`` (the context's figure may be higher), ``"under"`` (lower) or ``"about"``."""
    try:
        with localcontext(_EXACT):
            given, said = Decimal(context_figure), Decimal(answer_figure)
            if said <= 0 or said != said.to_integral_value():
                return False
            digits = str(int(said))
            zeros = len(digits) - len(digits.rstrip("0"))
            if zeros == 0:
                return False
            if (hedge == "over" and given < said) or (hedge == "under" and given > said):
                return False
            step = Decimal(10) ** zeros
            return (given / step).quantize(Decimal(1), rounding=ROUND_HALF_UP) * step == said
    except InvalidOperation:  # pragma: no cover - both were parsed before
        return False


@dataclass
class Tokens:
    """A piece of text reduced to what the judge compares."""

    words: list[str] = field(default_factory=list)  # folded, in order (units canonicalised)
    stems: list[str] = field(default_factory=list)  # content stems, in order
    figures: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # folded capitalised words, not first
    negated: bool = False
    surface: dict[str, str] = field(default_factory=dict)  # canonical figure -> as written
    hedged: dict[str, str] = field(default_factory=dict)  # figure -> "over", "under", "about"


def _hedge(before: list[str]) -> str | None:
    """How the words ``before`` a figure hedge it ("more than" -> ``"over"``), if they do."""
    if not before:
        return None
    if before[-1] == "than" and len(before) > 1:
        return HEDGES.get(before[-2] + " than")
    return HEDGES.get(before[-1])


def analyse(text: str) -> Tokens:
    """The words, stems, figures and names of ``text``; citation markers ("[1]", "[Source 2]")
    are masked first: they point at a source and are no figure the context must hold."""
    out = Tokens()
    spans = word_spans(mask_markers(text))
    for i, span in enumerate(spans):
        word = fold(span.text)
        word = UNITS.get(word, word)
        out.words.append(word)
        if word in NEGATIONS:
            out.negated = not out.negated
            continue
        figures = figures_of(word, span.text)
        # a sentence's first word in letters is a word ("One of the...", "Three reviews...")
        if figures and (_HAS_DIGIT.search(word) or i > 0):
            for figure in figures:
                out.figures.append(figure)
                out.surface.setdefault(figure, span.text)
                if hedge := _hedge(out.words[max(0, i - 2) : i]):
                    out.hedged[figure] = hedge
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
class ContextSentence:
    passage: int
    start: int
    end: int
    text: str
    stems: frozenset[str]
    figures: frozenset[str]
    words: frozenset[str]
    negated: bool


@dataclass
class ContextIndex:
    sentences: list[ContextSentence]
    stems: frozenset[str]
    words: frozenset[str]
    figures: frozenset[str]
    pairs: frozenset[tuple[str, str]]
    triples: frozenset[tuple[str, str, str]]
    idf: dict[str, float]
    surface: dict[str, str]
    #: yes/no fields of JSON-record passages (see ``_records.yes_no_fields``)
    fields: list[tuple[tuple[str, ...], bool]] = field(default_factory=list)


def index_context(context: Sequence[str]) -> ContextIndex:
    sentences: list[ContextSentence] = []
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
            tokens = analyse(span.text)
            stems = frozenset(tokens.stems)
            df.update(stems)
            sentence = ContextSentence(
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
    return ContextIndex(
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
class Window:
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
    window: Window | None = None
    medical_violation: bool = False
    figure_mismatch: bool = False
    negation_flip: bool = False
    #: (the sentence's word, the opposite its supporting window says instead)
    opposites: list[tuple[str, str]] = field(default_factory=list)
    #: yes/no fields of a JSON record that the sentence states the opposite of
    field_conflicts: list[str] = field(default_factory=list)
    #: the sentence only introduces what follows ("Here is a summary in 80 words:")
    lead_in: bool = False
    #: the sentence is a courtesy to the reader ("I hope this helps!")
    courtesy: bool = False

    def vector(self) -> list[float]:
        return [self.values[name] for name in FEATURE_NAMES]


def best_window(index: ContextIndex, stems: set[str], width: int = 3) -> Window | None:
    if not index.sentences or not stems:
        return None
    weights = {s: index.idf.get(s, 0.0) for s in stems}
    total = math.fsum(weights.values()) or 1.0
    hits = [stems & s.stems for s in index.sentences]
    best: tuple[float, int, int] = (-1.0, 0, 0)
    for i in range(len(index.sentences)):
        covered: set[str] = set()
        for j in range(i, min(len(index.sentences), i + width)):
            if index.sentences[j].passage != index.sentences[i].passage:
                break
            covered |= hits[j]
            # Prefer the shortest window reaching a given coverage.
            score = math.fsum(weights[s] for s in covered) / total - 0.01 * (j - i)
            if score > best[0]:
                best = (score, i, j)
    _, i, j = best
    chosen = index.sentences[i : j + 1]
    stems_w = frozenset().union(*(s.stems for s in chosen))
    return Window(
        first=i,
        last=j,
        stems=stems_w,
        figures=frozenset().union(*(s.figures for s in chosen)),
        words=frozenset().union(*(s.words for s in chosen)),
        negated=any(s.negated for s in chosen),
        coverage=math.fsum(weights[s] for s in stems & stems_w) / total,
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


def closest_figure(figure: str, candidates: Iterable[str]) -> str | None:
    target = Decimal(figure)
    ranked = sorted(candidates, key=lambda c: (abs(Decimal(c) - target), c))
    return ranked[0] if ranked else None


#: An opening that says where the sentence's claim comes from ("Based on the given passages,",
#: "According to passage 2,", "As stated in the article,"): it names the context, not a fact.
_ATTRIBUTION = re.compile(
    r"^\W*(?:(?:based|drawing) (?:solely |only )?on|according to|as (?:stated|mentioned|described|"
    r"noted|shown|explained|reported) (?:in|by)|from|in)\s+"
    r"(?:(?:the|this|these|those|my|our)\s+)?"
    r"(?:(?:given|provided|above|following|available|retrieved|supplied|information|"
    r"structured|json|search|news|two|three|four|five|both|all)\s+)*"
    r"(?:passages?|context|information|text|articles?|news|documents?|sources?|data|"
    r"results?|excerpts?|records?|snippets?|paragraphs?)"
    r"(?:\s+(?:\[?\d+\]?(?:\s*(?:,|and|&)\s*\[?\d+\]?)*|in json format|provided|given|above))*"
    r"\s*,\s*",
    re.IGNORECASE,
)


#: What follows a reference to a passage: a reporting verb ("Passage 2 briefly mentions that")
#: or the end of a clause ("(Passage 3)", "as found in passage 1."); not "a passage 3 km long".
_REPORTED = (
    r"(?:\s+(?:(?:also|further|then|\w+ly)\s+)?(?:states?|stated|suggests?|suggested|"
    r"mentions?|mentioned|recommends?|discusses|discussed|describes?|described|notes?|noted|"
    r"explains?|explained|says|said|indicates?|adds?|provides?|lists?|gives?|reports?|"
    r"advises?|confirms?|shows?|highlights?|emphasi[sz]es|specifies|clarifies|talks about)"
    r"\b(?:\s+that\b)?|(?=\s*(?:[.,;:)\]!?]|$)))"
)
#: A reference to the retrieved text inside a sentence: a numbered or ordinal passage ("Passage 2
#: suggests", "(passages 1 and 3)", "as mentioned in document 2", "the first passage
#: discusses"), or an attribution to the passages as a whole ("..., according to the given
#: passages"). Like an opening attribution it names the context, not a fact; a figure in it
#: counts passages, not things.
_REFERENCE = re.compile(
    r"(?:\b(?:according to|as (?:stated|mentioned|described|noted|shown|explained|suggested|"
    r"reported|discussed|indicated|outlined) (?:in|by)|(?:stated|mentioned|described|noted|"
    r"explained|discussed|found|outlined) in|based on|from|in|see|per)\s+)?"
    r"(?:(?:\bthe|\bthis|\bthat|\bboth)\s+)?"
    r"(?:\b(?:passages?|documents?|excerpts?|snippets?)\s*\[?\d+\]?"
    r"(?:\s*(?:,|and|&|or|-|\u2013)\s*\[?\d+\]?)*"
    r"|\b(?:first|second|third|fourth|fifth|last|final|other|previous|next)\s+"
    r"(?:passages?|documents?|excerpts?|snippets?)\b"
    r"|(?<=\s)(?:given|provided|above|retrieved)\s+(?:passages?|context|documents?)\b)" + _REPORTED,
    re.IGNORECASE,
)
#: A sentence that is a courtesy and claims nothing ("I hope this helps!", "Let me know if you
#: have any other questions.", "Sure, I can help you with that!").
_COURTESY = re.compile(
    r"^\W*(?:(?:i\s+)?hope (?:this|that|it|my answer) (?:helps|is helpful|answers|clarifies)"
    r"|let me know if|(?:please\s+)?feel free to (?:ask|reach|let)|glad to help"
    r"|(?:sure|certainly|of course|absolutely|great question|good question)\b"
    r"(?:[,!.]?\s*(?:i can help|i'd be happy|i would be happy|happy to help|here you go)|\W*$))",
    re.IGNORECASE,
)


def is_courtesy(sentence: str) -> bool:
    """``sentence`` is a courtesy to the reader ("I hope this helps!"), not a claim."""
    return bool(_COURTESY.match(sentence))


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group())


def mask_attribution(sentence: str) -> str:
    """``sentence`` with an opening attribution (see :data:`_ATTRIBUTION`) and its references to
    the retrieved passages (:data:`_REFERENCE`) replaced by spaces of the same length: "Based on
    the given passages, X" and "X (Passage 2)" are checked as "X". A sentence that would be left
    with no word at all is kept as it is."""
    m = _ATTRIBUTION.match(sentence)
    masked = sentence
    if m and m.end() < len(sentence):
        masked = " " * m.end() + sentence[m.end() :]
    masked = _REFERENCE.sub(_blank, masked)
    return masked if any(c.isalnum() for c in masked) else sentence


def sentence_features(
    index: ContextIndex, sentence: str, given: Tokens | None, domain: Domain, width: int = 3
) -> SentenceFeatures:
    """Compute the features of one answer sentence against an indexed context (an opening
    attribution, :func:`mask_attribution`, is left out)."""
    sentence = mask_attribution(sentence)
    tokens = analyse(sentence)
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
    # an irregular form counts as present when its base is ("written" for "wrote")
    absent = [
        w
        for w in content
        if w not in index.words
        and not (base_form(w) != w and stem(w) in index.stems)
        and not (base_form(w) != w and stem(w) in given_stems)
    ]
    echoed = [w for w in absent if w in given_words]
    v["missing_words"] = (len(absent) - len(echoed)) / len(content)
    v["query_echo"] = len(echoed) / len(content)
    v["first_person"] = sum(w in FIRST_PERSON for w in tokens.words) / len(tokens.words)
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
    window = best_window(index, set(tokens.stems), width)
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
        f
        for f in dict.fromkeys(tokens.figures)
        if not any(
            rounds_to(f, c)
            or (not medical and f in tokens.hedged and approximates(f, c, tokens.hedged[f]))
            for c in figure_pool
        )
    ]
    if bad_figures:
        feats.figure_mismatch = True
        v["figures"] = min(1.0, len(bad_figures) / 2 + 0.5)
        where = "in the supporting passage" if medical else "in the context"
        for f in bad_figures:
            near = closest_figure(f, figure_pool)
            hint = f" (it gives {index.surface.get(near, near)})" if near is not None else ""
            written = tokens.surface.get(f, f)
            feats.reasons.append(f"the figure {written} does not appear {where}{hint}")
            feats.unsupported.append(written)
    if medical:
        local_words = (window.words if window else frozenset()) | given_words
        critical = [w for w in dict.fromkeys(tokens.words) if w in MEDICAL_CRITICAL]
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
        feats.opposites = _opposites(tokens.words, analyse(window_text).words, index.words)
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


def cap(score: float, feats: SentenceFeatures) -> float:
    """A sentence's (or answer's) score after its hard checks: below the cut on any failure."""
    if feats.medical_violation:
        return min(score, MEDICAL_CAP)
    if feats.figure_mismatch:
        return min(score, FIGURE_CAP)
    if feats.opposites:
        return min(score, OPPOSITE_CAP)
    if feats.negation_flip:
        return min(score, NEGATION_CAP)
    return score


def is_question(sentence: str) -> bool:
    return sentence.rstrip("\"'”’)] ").endswith(("?", "？"))


def is_lead_in(sentence: str) -> bool:
    """A sentence that ends in a colon introduces what follows it ("Here is a summary of the
    article in 89 words:", "Based on the passages, the benefits are:"): it states nothing
    on its own, and the list or text after it is checked instead."""
    return sentence.rstrip().endswith((":", "："))


def answer_features(
    index: ContextIndex,
    sentences: Sequence[str],
    given: Tokens | None,
    domain: Domain,
    width: int = 3,
) -> list[SentenceFeatures]:
    """Features of every answer sentence. A question after the first sentence ("Would you like
    to know more?") asserts nothing and is not checked, nor is a lead-in followed by more text
    (:func:`is_lead_in`); an answer that opens with a question is marked on its first
    sentence."""
    out = []
    for i, text in enumerate(sentences):
        if i > 0 and is_question(text):
            out.append(SentenceFeatures(checkable=False))
            continue
        if i < len(sentences) - 1 and is_lead_in(text):
            out.append(SentenceFeatures(checkable=False, lead_in=True))
            continue
        if is_courtesy(text):
            out.append(SentenceFeatures(checkable=False, courtesy=True))
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


def answer_sentences(answer: str) -> list[Span]:
    spans = split_sentences(answer)
    return spans or [Span(0, len(answer), answer)]
