"""How the embedded judges (heuristic, cross-encoder, and the scripts that fit them) read an
answer: per sentence, its best-supporting window (:mod:`._window` over :mod:`._index`), what it
says that the context does not (:data:`FEATURE_NAMES`), and the hard checks that cap its score
whatever a model says (:func:`cap`; the ``*_CAP`` constants). Text is read by
:func:`~._tokens.analyse`, framing by :mod:`._framing`; the parts' names are re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import partial

from ..deadline import checkpoint
from ..models import Domain
from ..text import Span, base_form, reworded, split_sentences, stem, word_spans
from ._checks import approximates as approximates
from ._checks import as_context_writes, convertible, swapped_opposites
from ._checks import closest_figure as closest_figure
from ._checks import converted as converted
from ._checks import converts as converts
from ._checks import figure_problems as figure_problems
from ._checks import figure_reach as figure_reach
from ._checks import rounds_to as rounds_to
from ._checks import units_agree as units_agree
from ._checks import units_conflict as units_conflict
from ._dates import dates_as_context, numeric_months
from ._figures import Figure, Reading, is_year, read_figures
from ._figures import canonical_number as canonical_number
from ._figures import figure_in_brackets as figure_in_brackets
from ._figures import figures_of as figures_of
from ._figures import unit_kinds as unit_kinds
from ._framing import (
    is_about_the_text,
    is_citation_only,
    is_coverage_note,
    is_question,
    is_referral,
)
from ._framing import is_courtesy as is_courtesy
from ._framing import is_lead_in as is_lead_in
from ._framing import mask_attribution as mask_attribution
from ._hours import hours_conflicts, mask_hours
from ._index import ContextIndex, index_context, writes_in_a_row
from ._index import ContextSentence as ContextSentence
from ._initialisms import acronyms_in, spelt_out
from ._lexicon import (
    CALENDAR,
    FIRST_PERSON,
    FREQUENCY_PERIODS,
    MEDICAL_CRITICAL,
    NEGATIONS,
    STOPWORDS,
    TITLES,
    UNITS,
)
from ._name_forms import number_of, people_of
from ._records import empty_field_claims, field_readings, in_a_denied_clause
from ._search import FigureValues
from ._structure import (
    TITLE_SENTENCES,
    Conflict,
    conflicts,
    dropped_negation,
    once,
    reading_once,
    reversed_comparison,
    unconfirmed,
)
from ._tokens import Tokens, analyse, as_written, changed_codes, figure_runs, read_as
from ._window import Window as Window
from ._window import best_window as best_window

__all__ = [
    "FEATURE_NAMES",
    "ContextIndex",
    "Figure",
    "Reading",
    "SentenceFeatures",
    "Tokens",
    "analyse",
    "answer_features",
    "answer_sentences",
    "answer_vector",
    "cap",
    "index_context",
    "is_question",
    "read_figures",
    "sentence_features",
]

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
#: A sentence that uses a word where its well-matched window uses the opposite ("west" / "east"),
#: or states a JSON record's yes/no field the other way round ("takes reservations" for
#: ``"RestaurantsReservations": false``), is capped here, below the cut.
OPPOSITE_CAP = 0.3
#: Medical domain: a negation the well-matched window does not share (in the Generic domain only
#: reported: capping cost 1-4 points on every development set, unrelated negations trigger it).
NEGATION_CAP = 0.4
#: In the Medical domain, a figure, unit, frequency or route missing from the supporting window.
MEDICAL_CAP = 0.15


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
    #: opposites that state the window's fact all the same: under a negation the window does
    #: not make, or in a comparison turned round ("B is smaller than A" for "A is larger")
    turned: list[tuple[str, str]] = field(default_factory=list)
    #: what it states differently from its window about the words they share: who did what,
    #: titles, ranks, modality, quantity (see :mod:`._structure`)
    conflicts: list[Conflict] = field(default_factory=list)
    #: negations the window may contradict that word order cannot confirm: the model decides
    #: (see :func:`._structure.unconfirmed` and ``CrossEncoderJudge``)
    unconfirmed: list[Conflict] = field(default_factory=list)
    #: yes/no fields of a JSON record that the sentence states the opposite of
    field_conflicts: list[str] = field(default_factory=list)
    #: fields a JSON record leaves empty that the sentence says something of (unsupported)
    empty_fields: list[str] = field(default_factory=list)
    #: (the sentence's time or day, what the record's opening hours give instead)
    hours_conflicts: list[tuple[str, str]] = field(default_factory=list)
    #: (the sentence's figure, as the context writes it): what the model reads instead, once
    #: the figure check has matched them ("55" -> "fifty-five"; see ``as_context_writes``)
    as_context: list[tuple[str, str]] = field(default_factory=list)
    #: the sentence only introduces what follows ("Here is a summary in 80 words:")
    lead_in: bool = False
    #: the sentence is a courtesy to the reader ("I hope this helps!")
    courtesy: bool = False
    #: the sentence says what the passages do not cover ("The passages do not mention X.")
    coverage_note: bool = False
    #: the sentence speaks only of the passages and the question ("Passage 3 has the answer.")
    about_the_text: bool = False
    #: the sentence only sends the reader to a professional ("Consult your doctor.")
    referral: bool = False
    #: the sentence only names the passages it draws on ("(Ref: Passage 1)")
    citation: bool = False

    def vector(self) -> list[float]:
        return [self.values[name] for name in FEATURE_NAMES]


def _per_period(index: ContextIndex, window: Window, word: str) -> bool:
    """The window says the frequency ``word`` in other words: "a day" for "daily"."""
    period = FREQUENCY_PERIODS.get(word)
    if period is None:
        return False
    text = " ".join(s.text for s in index.sentences[window.first : window.last + 1])
    return re.search(rf"\b(?:a|per|each|every|once|twice)\s+{period}\b", text, re.I) is not None


def measured_unit_words(tokens: Tokens, index: ContextIndex, given: Tokens | None) -> set[int]:
    """Where ``tokens`` writes a figure's unit as the context (or query) measures ("per cent" for
    "%", "a kilometre" where it writes metres): part of the figure, no content word. So is a
    frequency said otherwise ("daily" / "a day") and a word written joined ("Wi-Fi" / "WiFi")."""
    out = {
        k
        for k, w in enumerate(tokens.words)
        if (w in FREQUENCY_PERIODS and FREQUENCY_PERIODS[w] in index.words)
        or ("-" in w and w.replace("-", "") in index.words)
    }
    if tokens.unit_words:
        written = index.quantities.unit_set | (given.quantities.unit_set if given else frozenset())
        out.update(
            k
            for k, unit in tokens.unit_words.items()
            if unit in written or any(convertible(unit, other) for other in written)
        )
    return out


def initialism_words(sentence: str, tokens: Tokens, index: ContextIndex) -> set[int]:
    """Where ``tokens`` (of ``sentence``) writes a name the context writes as initials or spelt
    out ("US" / "United States", "NYC" / "New York City": :mod:`._initialisms`): no missing name.
    The context's initials are read only when the sentence has a word the context lacks."""
    out: set[int] = set()
    written = acronyms_in(sentence)
    if written:
        out.update(
            k
            for k, w in enumerate(tokens.words)
            if w.replace(".", "") in written
            and w not in index.words
            and w.replace(".", "") in index.initials
        )
    names = set(tokens.names)
    if len(names) >= 1 and any(n not in index.words for n in names):
        capitalised = [k == 0 or w in names for k, w in enumerate(tokens.words)]
        out |= spelt_out(tokens.words, capitalised, index.acronyms)
    # the country in any case ("usa" / "united states"): the spelling rests on no capitals
    words = tokens.words
    if "u.s" in words and "u.s" not in index.words and ("united", "states") in index.pairs:
        out.update(k for k, w in enumerate(words) if w == "u.s")
    if "u.s" in index.words:
        for k in range(len(words) - 1):
            if (words[k], words[k + 1]) == ("united", "states"):
                out.update((k, k + 1))
    return out


def sentence_features(
    index: ContextIndex, sentence: str, given: Tokens | None, domain: Domain, width: int = 3
) -> SentenceFeatures:
    """Compute the features of one answer sentence against an indexed context (an opening
    attribution, :func:`._framing.mask_attribution`, is left out)."""
    sentence = mask_attribution(sentence)
    # opening hours against the record's "hours": a time on none of the days named conflicts
    timed: list[tuple[str, str]] = []
    if index.hours is not None:
        timed = hours_conflicts(sentence, index.hours)
        if not timed:
            sentence = mask_hours(sentence, index.hours)
    # a bracketed number cites a passage only if there is one of that number
    cited = max((s.passage for s in index.sentences), default=-1) + 1 if "[" in sentence else None
    tokens = analyse(sentence, cited)
    given_stems = given.stem_set if given else frozenset()
    given_words = given.word_set if given else frozenset()
    stems = [s for s in dict.fromkeys(tokens.stems) if s not in given_stems]
    feats = SentenceFeatures()
    v = feats.values
    # a figure's scale words ("million" in "4 million"), and its unit words when the context
    # measures in that unit ("per cent" for "18%"), are the figure's: the figure check compares
    units = measured_unit_words(tokens, index, given)
    initialisms = initialism_words(sentence, tokens, index)
    units |= initialisms
    if units:
        unit_stems = {stem(tokens.words[k]) for k in units}
        stems = [s for s in stems if s not in unit_stems]
    content = [
        w
        for k, w in enumerate(tokens.words)
        if w not in STOPWORDS and w not in NEGATIONS and k not in tokens.parts and k not in units
    ]
    if not content:
        feats.checkable = False
        return feats
    v["first_person"] = sum(w in FIRST_PERSON for w in tokens.words) / len(tokens.words)
    # a figure with its hedge, scale and unit is one "#" to the pairs and triples ("has about 4
    # million residents" reads as "has 4,012,550 residents"); the figure check compares them
    words = figure_runs(tokens)
    covered = [False] * len(words)
    for k in range(len(words) - 2):
        if (words[k], words[k + 1], words[k + 2]) in index.triples:
            covered[k] = covered[k + 1] = covered[k + 2] = True
    v["novel_trigrams"] = 1.0 - sum(covered) / len(words)
    pairs = [
        (words[k], words[k + 1])
        for k in range(len(words) - 1)
        if not (words[k] in STOPWORDS and words[k + 1] in STOPWORDS)
    ]
    if pairs:
        v["pairs"] = sum(p not in index.pairs for p in pairs) / len(pairs)

    # Evidence is where the sentence's content is found, query words included; a hyphenated
    # word the context writes joined is looked for as it writes it ("Wi-Fi" for "WiFi")
    sought = set(tokens.stems)
    sought.update(
        stem(j) for w in tokens.words if "-" in w and (j := w.replace("-", "")) in index.words
    )
    window = best_window(index, sought, width)
    feats.window = window
    missing = [s for s in stems if s not in index.stems]
    if stems:
        v["missing_stems"] = len(missing) / len(stems)
        local = window.stems if window else frozenset()
        v["missing_local"] = sum(1 for s in stems if s not in local) / len(stems)
    # Report the surface forms of missing words, as they appear in the sentence.
    missing_set = set(missing)
    seen: set[str] = set()
    months = numeric_months(sentence)
    for span in word_spans(sentence):
        w = read_as(span.text)  # ("Fri" is read as "friday", the "11" of "2019-11-22" "november")
        w = months.get(span.start, w)
        st = stem(UNITS.get(w, CALENDAR.get(w, w) if span.text[:1].isupper() else w))
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
    # only the figures near each figure can support it (figure_reach): found by bisection
    pool = FigureValues(window.figures) if (medical and window) else index.figure_values
    matched: list[tuple[Figure, Reading, str]] = []
    bad_figures = figure_problems(
        tokens.stated, tokens.hedged, pool, given, index.quantities, exact=medical, found=matched
    )
    if medical and window:
        # a year dates the passage and may stand in another sentence ("rose by 7% over the same
        # period" after "from 2022 to 2023"): only amounts must match the supporting passage
        bad_figures = [
            (f, near)
            for f, near in bad_figures
            if not (is_year(f) and index.figure_values.within(f.readings[0].value, Decimal(0)))
        ]
    surface = given.surface if given is not None else {}  # and dates as it writes them
    feats.as_context = dates_as_context(sentence, index.dates) + as_context_writes(
        sentence, matched, lambda key: index.surface.get(key) or surface.get(key)
    )
    # an irregular form counts as present when its base is ("written" for "wrote"), a verb of
    # the same change when another of its group is ("rose" for "increased")
    absent = [
        w
        for w in content
        if w not in index.words
        and not (
            (base_form(w) != w or reworded(w))
            and (stem(w) in index.stems or stem(w) in given_stems)
        )
    ]
    echoed = [w for w in absent if w in given_words]
    v["missing_words"] = (len(absent) - len(echoed)) / len(content)
    v["query_echo"] = len(echoed) / len(content)
    if bad_figures:
        feats.figure_mismatch = True
        v["figures"] = min(1.0, len(bad_figures) / 2 + 0.5)
        where = "in the supporting passage" if medical else "in the context"
        given_surface = given.surface if given is not None else {}
        for figure, near in bad_figures:
            instead = index.surface.get(near) or given_surface.get(near) or near if near else None
            hint = f" (it gives {instead})" if instead is not None else ""
            feats.reasons.append(f"the figure {figure.written} does not appear {where}{hint}")
            feats.unsupported.append(figure.written)
    if medical:
        local_words = window.words if window else frozenset()
        critical = [w for w in dict.fromkeys(tokens.words) if w in MEDICAL_CRITICAL]
        bad_terms = [
            w
            for w in critical
            if w not in local_words
            and w not in given_words
            and not (window is not None and _per_period(index, window, w))
        ]
        if bad_terms:
            feats.reasons.append(
                "medical domain: "
                + ", ".join(f"'{w}'" for w in bad_terms)
                + " must match the supporting passage exactly"
            )
        feats.medical_violation = bool(bad_figures or bad_terms)

    names = [
        n
        for n in dict.fromkeys(tokens.names)
        if n not in index.words
        and n not in given_words
        and n.replace("-", "") not in index.words
        and not people_of(n, index.words)
        and not number_of(n, index.words, given_words)
        and not any(tokens.words[k] == n for k in initialisms)
    ]
    if names:
        v["names"] = min(len(names), 2) / 2
        shown = ", ".join(f"'{as_written(sentence, n)}'" for n in names)
        feats.reasons.append(f"it names {shown}, absent from the context")
    if window is not None and window.coverage >= 0.5:
        window_texts = [s.text for s in index.sentences[window.first : window.last + 1]]
        window_text = " ".join(window_texts)
        for said, instead in swapped_opposites(
            tokens.words,
            once(("window", window.first, window.last), lambda: analyse(window_text).words),
            index.word_stems,
            feats.turned,
        ):
            # "B is smaller than A" for "A is larger than B" states the same fact
            if reversed_comparison(sentence, said, window_text, instead):
                feats.turned.append((said, instead))
            else:
                feats.opposites.append((said, instead))
        for said, instead in feats.opposites:
            shown, theirs = as_written(sentence, said), as_written(window_text, instead)
            feats.reasons.append(f"it says '{shown}' where the context says '{theirs}'")
            feats.unsupported.append(said)
        feats.conflicts = conflicts(
            sentence,
            window_texts,
            _naming(index, tokens, window),
            lambda key: key in index.stems or key in given_stems,
            written := partial(writes_in_a_row, index),
        )
        for found in feats.conflicts:
            feats.reasons.append(found.reason)
            feats.unsupported.append(found.said.split(" / ")[-1])
        feats.unconfirmed = unconfirmed(sentence, window_texts, feats.conflicts, written)
        # a negation one side makes and the other does not, about the same words (not merely
        # somewhere in the window: "do not exceed 4 doses" beside the dose a sentence gives)
        said_negation = any(c.check == "negation" for c in feats.conflicts)
        # ("more likely if you do not rinse" for "less likely if you rinse" turns it back)
        if (
            tokens.negated != window.negated
            and not feats.turned
            and (said_negation or dropped_negation(sentence, window_texts))
        ):
            feats.negation_flip = domain is Domain.MEDICAL
            if not said_negation:
                feats.reasons.append("the context states the opposite (it is negated there)")
        # a word the window states turned round ("narrower than", "not active") is the context's
        credited = {stem(said) for said, _ in feats.turned}
        if credited & missing_set:
            missing = [s for s in missing if s not in credited]
            v["missing_stems"] = len(missing) / len(stems)
            lacking = [s for s in stems if s not in window.stems and s not in credited]
            v["missing_local"] = len(lacking) / len(stems)
            feats.unsupported = [
                w
                for w in feats.unsupported
                if stem(UNITS.get(read_as(w), read_as(w))) not in credited
            ]
            feats.reasons = [
                r for r in feats.reasons if not r.startswith("the context does not mention")
            ]
            still = set(missing)
            named = [
                w for w in feats.unsupported if stem(UNITS.get(read_as(w), read_as(w))) in still
            ]
            if named:
                shown = ", ".join(f"'{w}'" for w in named[:6])
                feats.reasons.insert(0, f"the context does not mention {shown}")
        if credited:
            absent = [w for w in absent if stem(w) not in credited]
            echoed = [w for w in absent if w in given_words]
            v["missing_words"] = (len(absent) - len(echoed)) / len(content)
        for said, instead in feats.turned:
            # the model reads a denial as the context writes it ("not active" -> "inactive")
            denial = re.search(rf"(?i)\bnot\s+{re.escape(said)}\b", sentence)
            if denial is not None:
                feats.as_context.append((denial.group(0), instead))
    for said, instead in changed_codes(names, index.codes):  # "2.4.2" for the context's "2.4.1"
        feats.opposites.append((said, instead))
        feats.reasons.append(f"it says '{said}' where the context says '{instead}'")
    if index.fields:
        feats.field_conflicts, denied = field_readings(
            index.fields, tokens.words, NEGATIONS, tokens.gaps
        )
        if denied and not feats.field_conflicts:
            # the record denies it too: the negation in that field's clause is confirmed
            feats.unconfirmed = [
                c for c in feats.unconfirmed if not in_a_denied_clause(sentence, c.said, denied)
            ]
        for name in feats.field_conflicts:
            feats.reasons.append(f"the record's field '{name}' says the opposite")
    if index.empty:
        feats.empty_fields = empty_field_claims(index.empty, tokens.words, tokens.gaps)
        feats.reasons.extend(f"the record leaves '{n}' empty" for n in feats.empty_fields)
    if timed:
        feats.hours_conflicts = timed
        for said, instead in feats.hours_conflicts:
            feats.reasons.append(f"it says '{said}' where the record's hours give {instead}")
    if v["first_person"] > 0 and not feats.reasons:
        feats.reasons.append(
            "it states a personal opinion or experience, not a fact from the context"
        )
    return feats


def _naming(index: ContextIndex, tokens: Tokens, window: Window) -> list[str]:
    """The context sentences outside ``window`` that mention a name of a sentence which gives
    a title (at most :data:`._structure.TITLE_SENTENCES`): where the context gives its titles."""
    if not tokens.names or not any(w in TITLES for w in tokens.words):
        return []
    ids: dict[int, None] = {}
    for name in tokens.names:
        for i in index.postings.get(stem(name), ()):
            if not window.first <= i <= window.last:
                ids[i] = None
            if len(ids) >= TITLE_SENTENCES:
                break
    return [index.sentences[i].text for i in sorted(ids)[:TITLE_SENTENCES]]


def confirmed(feats: SentenceFeatures) -> SentenceFeatures:
    """``feats`` (a copy) with its unconfirmed negations taken as conflicts, as the model read
    them: contradicted when every word is the context's, else ("an office in *Madrid*") not
    supported."""
    found = [
        c
        if all(w.lower() in c.said.lower() for w in feats.unsupported)
        else replace(c, contradicted=False)
        for c in feats.unconfirmed
    ]
    return replace(
        feats,
        conflicts=[*feats.conflicts, *found],
        unconfirmed=[],
        reasons=[*feats.reasons, *(c.reason for c in found)],
        unsupported=[*feats.unsupported, *(c.said for c in found)],
    )


def cap(score: float, feats: SentenceFeatures) -> float:
    """A sentence's (or answer's) score after its hard checks: below the cut on any failure."""
    if feats.medical_violation:
        return min(score, MEDICAL_CAP)
    if feats.figure_mismatch:
        return min(score, FIGURE_CAP)
    if feats.opposites or feats.conflicts or feats.hours_conflicts or feats.field_conflicts:
        return min(score, OPPOSITE_CAP)
    if feats.empty_fields:
        return min(score, FIGURE_CAP)  # unsupported, as a figure the context lacks
    if feats.negation_flip:
        return min(score, NEGATION_CAP)
    return score


def answer_features(
    index: ContextIndex,
    sentences: Sequence[str],
    given: Tokens | None,
    domain: Domain,
    width: int = 3,
) -> list[SentenceFeatures]:
    """Features of every answer sentence; what frames the answer (a later question, a lead-in,
    :data:`_FRAMINGS`) is not checked, and an opening question marks the first sentence."""
    with reading_once():  # a window several sentences share is read once
        return _answer_features(index, sentences, given, domain, width)


#: Sentences that frame an answer and claim nothing, with the mark each leaves, in order.
_FRAMINGS: tuple[tuple[Callable[[str], bool], str], ...] = (
    (is_courtesy, "courtesy"),
    (is_coverage_note, "coverage_note"),
    (is_citation_only, "citation"),
    (is_about_the_text, "about_the_text"),
    (is_referral, "referral"),
)


def _answer_features(
    index: ContextIndex,
    sentences: Sequence[str],
    given: Tokens | None,
    domain: Domain,
    width: int,
) -> list[SentenceFeatures]:
    out = []
    for i, text in enumerate(sentences):
        checkpoint()
        if i > 0 and is_question(text):
            out.append(SentenceFeatures(checkable=False))
            continue
        if i < len(sentences) - 1 and is_lead_in(text):
            out.append(SentenceFeatures(checkable=False, lead_in=True))
            continue
        mark = next((name for test, name in _FRAMINGS if test(text)), None)
        if mark is not None:
            framing = SentenceFeatures(checkable=False)
            setattr(framing, mark, True)
            out.append(framing)
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
