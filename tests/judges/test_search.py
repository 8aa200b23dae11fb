"""The searches of ``judges._search`` give exactly what a scan of the whole context gives.

The scans below are the window searches, the closest-figure sort and the figure check's search
for a conversion as they were written before the inverted index, the sorted figures and the
sorted quantities replaced them: they are the specification. Random contexts are drawn from a
few stems so that windows tie often (equal idf, duplicate sentences), and each search runs both
ways it can (one window at a time, and on numpy arrays).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping
from decimal import Decimal
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ground_integrations.judges import _search
from ground_integrations.judges._analysis import (
    ContextIndex,
    ContextSentence,
    Figure,
    Reading,
    Tokens,
    analyse,
    approximates,
    best_window,
    canonical_number,
    closest_figure,
    converted,
    converts,
    figure_problems,
    figure_reach,
    index_context,
    rounds_to,
    unit_kinds,
    units_agree,
    units_conflict,
)
from ground_integrations.judges._checks import _opposite_index, _supports
from ground_integrations.judges._figures import scaled
from ground_integrations.judges._lexicon import AMBIGUOUS_UNITS, UNIT_FACTORS, UNIT_KINDS
from ground_integrations.judges._search import FigureValues, Quantities
from ground_integrations.judges._tokens import quantities_of
from ground_integrations.judges.cross_encoder import top_windows
from ground_integrations.judges.heuristic import (
    INDEX_BYTES_FIXED,
    INDEX_BYTES_PER_CHAR,
    HeuristicJudge,
    index_bytes,
)

STEMS = [f"s{n}" for n in range(7)]


def make_index(passages: list[list[frozenset[str]]]) -> ContextIndex:
    """A context index of sentences given by their stems, built as ``index_context`` builds it."""
    sentences: list[ContextSentence] = []
    df: Counter[str] = Counter()
    postings: dict[str, list[int]] = {}
    for p, passage in enumerate(passages):
        for stems in passage:
            df.update(stems)
            for s in stems:
                postings.setdefault(s, []).append(len(sentences))
            text = " ".join(sorted(stems)) or "-"
            sentences.append(
                ContextSentence(p, 0, len(text), text, stems, frozenset(), stems, False)
            )
    n = max(1, len(sentences))
    return ContextIndex(
        sentences=sentences,
        stems=frozenset(df),
        words=frozenset(df),
        figures=frozenset(),
        pairs=frozenset(),
        triples=frozenset(),
        idf={s: math.log(1 + n / c) for s, c in df.items()},
        surface={},
        postings=postings,
    )


def scan_best_window(index: ContextIndex, stems: set[str], width: int) -> tuple[int, int, float]:
    weights = {s: index.idf.get(s, 0.0) for s in stems}
    total = math.fsum(weights.values()) or 1.0
    hits = [stems & s.stems for s in index.sentences]
    best = (-1.0, 0, 0)
    for i in range(len(index.sentences)):
        covered: set[str] = set()
        for j in range(i, min(len(index.sentences), i + width)):
            if index.sentences[j].passage != index.sentences[i].passage:
                break
            covered |= hits[j]
            score = math.fsum(weights[s] for s in covered) / total - 0.01 * (j - i)
            if score > best[0]:
                best = (score, i, j)
    _, i, j = best
    held = frozenset().union(*(s.stems for s in index.sentences[i : j + 1]))
    return i, j, math.fsum(weights[s] for s in stems & held) / total


def scan_top_windows(index: ContextIndex, stems: set[str], k: int, width: int) -> list[str]:
    scored = []
    for i, first in enumerate(index.sentences):
        covered: set[str] = set()
        for j in range(i, min(len(index.sentences), i + width)):
            if index.sentences[j].passage != first.passage:
                break
            covered |= stems & index.sentences[j].stems
            scored.append((math.fsum(index.idf.get(s, 0.0) for s in covered), i, j))
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    out: list[str] = []
    for _, i, j in scored:
        text = " ".join(s.text for s in index.sentences[i : j + 1])
        if text not in out:
            out.append(text)
        if len(out) == k:
            break
    return out


def scan_closest(figure: str, candidates: set[str]) -> str | None:
    target = Decimal(figure)
    ranked = sorted(candidates, key=lambda c: (abs(Decimal(c) - target), c))
    return ranked[0] if ranked else None


sentence_stems = st.frozensets(st.sampled_from(STEMS), max_size=4)
contexts = st.lists(st.lists(sentence_stems, min_size=1, max_size=12), max_size=5)
query = st.sets(st.sampled_from([*STEMS, "absent"]), max_size=5)
#: (ARRAY_HITS, COMMON_STEPS, DENSE_SHARE): every search on arrays or none, first looking for
#: a sentence that holds every shared stem or not, arrays over every window or around matches
paths = st.sampled_from([(0, 0, 0), (0, 0, 10_000), (0, 32, 4), (10_000, 0, 4), (10_000, 32, 4)])


@settings(max_examples=300, deadline=None)
@given(contexts, query, st.integers(1, 4), paths)
def test_best_window_is_the_scans(
    passages: list[list[frozenset[str]]], stems: set[str], width: int, path: tuple[int, ...]
) -> None:
    index = make_index(passages)
    with (
        mock.patch.object(_search, "ARRAY_HITS", path[0]),
        mock.patch.object(_search, "COMMON_STEPS", path[1]),
        mock.patch.object(_search, "DENSE_SHARE", path[2]),
    ):
        window = best_window(index, stems, width)
    if not index.sentences or not stems:
        assert window is None
        return
    assert window is not None
    assert (window.first, window.last, window.coverage) == scan_best_window(index, stems, width)


@settings(max_examples=300, deadline=None)
@given(contexts, query, st.integers(0, 5), st.integers(1, 4), paths)
def test_top_windows_are_the_scans(
    passages: list[list[frozenset[str]]], stems: set[str], k: int, width: int, path: tuple[int, ...]
) -> None:
    index = make_index(passages)
    sentence = " ".join(sorted(stems))  # each stem is a word of its own
    with mock.patch.object(_search, "ARRAY_HITS", path[0]):
        got = top_windows(index, sentence, k, width)
    assert got == scan_top_windows(index, stems, k, width)


def test_many_stems_use_several_mask_words() -> None:
    """A sentence sharing more than 64 stems with the context (one mask word) is searched alike."""
    vocabulary = [f"w{n}" for n in range(150)]
    passages = [
        [frozenset(vocabulary[(7 * p + 3 * s) % 150 :][:40]) for s in range(6)] for p in range(5)
    ]
    index = make_index(passages)
    stems = set(vocabulary[10:130])
    for width, dense in ((1, 0), (2, 0), (3, 0), (1, 10_000), (3, 10_000)):
        with (
            mock.patch.object(_search, "ARRAY_HITS", 0),
            mock.patch.object(_search, "COMMON_STEPS", 0),
            mock.patch.object(_search, "DENSE_SHARE", dense),
        ):
            window = best_window(index, stems, width)
            top = top_windows(index, " ".join(sorted(stems)), 3, width)
        assert window is not None
        assert (window.first, window.last, window.coverage) == scan_best_window(index, stems, width)
        assert top == scan_top_windows(index, stems, 3, width)


def test_best_window_on_an_indexed_context() -> None:
    index = index_context(
        [
            "Mauna Kea is a dormant volcano. It rises 4,207 m above sea level.",
            "The observatory opened in 1970. Its telescopes study distant galaxies.",
        ]
    )
    window = best_window(index, {"telescop", "galaxi", "observatori"})
    assert window is not None
    assert (window.first, window.last) == scan_best_window(
        index, {"telescop", "galaxi", "observatori"}, 3
    )[:2]


digits = st.from_regex(r"[0-9]{1,4}(\.[0-9]{1,3})?", fullmatch=True)
long_digits = st.from_regex(r"[0-9]{27,32}", fullmatch=True)
figure_text = st.one_of(digits, long_digits, st.sampled_from(["03", "3", "3.0", "0", "1000"]))


@settings(max_examples=300, deadline=None)
@given(st.sets(figure_text, max_size=12), st.sets(figure_text, max_size=2), figure_text)
def test_closest_figure_is_the_sorts(context: set[str], extra: set[str], figure: str) -> None:
    values = FigureValues(context)
    assert values.closest(figure, extra) == scan_closest(figure, context | extra)
    got = closest_figure(figure, values, FigureValues(extra) if extra else None)
    assert got == scan_closest(figure, context | extra)


@settings(max_examples=200, deadline=None)
@given(st.sets(figure_text, max_size=12), figure_text, st.integers(0, 1_000))
def test_within_is_the_filter(context: set[str], figure: str, radius: int) -> None:
    reach = Decimal(radius) / 4
    got = FigureValues(context).within(figure, reach)
    assert sorted(got) == sorted(c for c in context if abs(Decimal(c) - Decimal(figure)) <= reach)


numbers = st.from_regex(r"[1-9][0-9]{0,5}(\.[0-9]{1,3})?", fullmatch=True).map(canonical_number)


@settings(max_examples=500, deadline=None)
@given(numbers, numbers, st.sampled_from([None, "over", "under", "about"]))
def test_no_figure_beyond_reach_supports(
    said: str | None, given_: str | None, hedge: str | None
) -> None:
    """The figure check looks only within ``figure_reach``: nothing farther may support."""
    assert said is not None and given_ is not None
    supports = rounds_to(said, given_) or (hedge is not None and approximates(said, given_, hedge))
    if supports:
        assert abs(Decimal(said) - Decimal(given_)) <= figure_reach(said, hedge)


def test_a_hedged_round_figure_reaches_half_its_step() -> None:
    assert figure_reach("1800", "over") == 50
    assert figure_reach("2000", None) == 1
    assert figure_reach("4207.3", "about") == 1
    assert approximates("2000", "1821", "about")


def test_no_opposite_holds_a_digit() -> None:
    """``ContextIndex.word_stems`` leaves out words with a digit: no opposite may have one."""
    assert not any(c.isdigit() for key in _opposite_index() for c in key)


def test_the_index_cache_is_bounded_by_bytes() -> None:
    small = ["Mauna Kea is a dormant volcano on the island of Hawaii."]
    large = ["Mauna Loa is an active volcano. " * 40]
    budget = index_bytes(small) + index_bytes(small) // 2  # one small context, not two
    judge = HeuristicJudge(index_cache_bytes=budget)
    first = judge._index(tuple(small))
    assert judge._index(tuple(small)) is first  # kept
    judge._index(tuple(large))  # over the budget alone: not kept, nothing evicted
    assert judge._index(tuple(small)) is first
    other = ["Mauna Kea is a dormant volcano on the island of Hawai'i."]
    judge._index(tuple(other))  # fits only by evicting the oldest
    assert judge._index(tuple(small)) is not first
    assert judge.config()["index_cache_bytes"] == budget


def test_an_index_is_estimated_from_its_characters() -> None:
    assert index_bytes(["abc", "de"]) == INDEX_BYTES_FIXED + 5 * INDEX_BYTES_PER_CHAR
    assert HeuristicJudge(index_cache_size=0)._index(("No cache here.",)).sentences


#: Every canonical unit, the ambiguous ones included ("deg", "pound", "dollar").
ALL_UNITS = sorted({*UNIT_KINDS, *AMBIGUOUS_UNITS})
signed = st.from_regex(r"-?[0-9]{1,5}(\.[0-9]{1,4})?", fullmatch=True).map(canonical_number)
huge = st.integers(10**310, 10**320).map(str)  # past a float: inf
figure_value = st.one_of(signed, huge, st.sampled_from(["0", "330", "1083", "40", "104"]))


@st.composite
def readings_and_quantities(draw: st.DrawFn) -> tuple[Reading, dict[str, frozenset[str]]]:
    """A reading with a unit, and figures written with units, a few of them the reading
    converted to another unit give or take a few per cent (so that both answers occur)."""
    digits = draw(figure_value)
    assert digits is not None
    scale = draw(st.sampled_from([0, 0, 3, 6]))
    value = scaled(digits, scale) if scale else digits  # as read_figures scales them
    reading = Reading(value, draw(st.sampled_from(ALL_UNITS)), digits if scale else "", scale)
    out: dict[str, set[str]] = {}
    for _ in range(draw(st.integers(0, 12))):
        unit = draw(st.sampled_from(ALL_UNITS))
        figure = draw(figure_value)
        kin = [u for u in ALL_UNITS if unit_kinds(u) & unit_kinds(reading.unit or "")]
        derive: bool = draw(st.booleans())
        if kin and derive and not math.isinf(float(value)):
            unit = draw(st.sampled_from(kin))
            a = draw(st.sampled_from(AMBIGUOUS_UNITS.get(reading.unit or "", (reading.unit,))))
            b = draw(st.sampled_from(AMBIGUOUS_UNITS.get(unit, (unit,))))
            if a in UNIT_FACTORS and b in UNIT_FACTORS:
                amount = float(value) * UNIT_FACTORS[a] / UNIT_FACTORS[b]
            else:
                amount = (float(value) - 32) * 5 / 9 if (a, b) == ("f", "c") else float(value)
            amount *= 1 + draw(st.sampled_from([0, 0.005, -0.019, 0.0201, -0.05, 1e-12]))
            figure = canonical_number(f"{amount:.{draw(st.integers(0, 4))}f}")
        assert figure is not None
        out.setdefault(figure, set()).add(unit)
    return reading, {figure: frozenset(units) for figure, units in out.items()}


@settings(max_examples=600, deadline=None)
@given(readings_and_quantities())
def test_converted_is_the_scan(case: tuple[Reading, dict[str, frozenset[str]]]) -> None:
    """``converted`` finds a conversion exactly when ``converts`` over every (figure, unit)
    of the context does (the scan ``figure_problems`` made before the sorted quantities)."""
    reading, quantities = case
    scan = any(converts(reading, c, u) for c, units in quantities.items() for u in units)
    assert converted(reading, Quantities(quantities)) == scan


def test_converted_finds_a_conversion_among_many_figures() -> None:
    many = {str(n): frozenset({"m"}) for n in range(0, 100_000, 100)}
    assert converted(Reading("1083", "ft"), Quantities({**many, "330": frozenset({"m"})}))
    assert not converted(Reading("1083", "ft"), Quantities(many))  # 300 and 400 are too far
    assert converted(Reading("104", "deg"), Quantities({"40": frozenset({"c"})}))
    assert not converted(Reading("40", "gal"), Quantities({"40": frozenset({"l"})}))


def scan_figure_problems(
    stated: list[Figure],
    hedged: dict[str, str],
    pool: FigureValues,
    given: Tokens | None,
    quantities: Mapping[str, frozenset[str]],
    exact: bool,
) -> list[tuple[Figure, str | None]]:
    """``figure_problems`` as it was before the sorted quantities: the specification."""
    extra = given.figures if given is not None else []
    if given is not None and any(" " in key for key in given.surface):
        quantities = {**quantities}
        for value, units in quantities_of(given.surface).items():
            quantities[value] = quantities.get(value, frozenset()) | units
    out: list[tuple[Figure, str | None]] = []
    for figure in dict.fromkeys(stated):
        instead: str | None = None
        supported = False
        for reading in figure.readings:
            hedge = None if exact else hedged.get(reading.value)
            reach = figure_reach(reading.value, hedge)
            if reading.scale:
                reach = max(reach, Decimal(10) ** reading.scale)
            candidates = [*pool.within(reading.value, reach), *extra]
            matched = [c for c in candidates if _supports(reading, c, hedge, exact)]
            if matched and reading.unit is not None:
                written = [(c, u) for c in matched for u in quantities.get(c, ())]
                clash = [(c, u) for c, u in written if units_conflict(reading.unit, u)]
                if clash and not any(units_agree(reading.unit, u) for _, u in written):
                    instead = instead or f"{clash[0][0]} {clash[0][1]}"
                    matched = []
            if matched or (
                reading.unit is not None
                and any(
                    converts(reading, c, u, exact) for c, units in quantities.items() for u in units
                )
            ):
                supported = True
                break
        if not supported:
            first = figure.readings[0]
            nearest = instead or scan_closest(first.value, {*pool.figures, *extra})
            if nearest is not None and first.unit in quantities.get(nearest, ()):
                nearest = f"{nearest} {first.unit}"
            out.append((figure, nearest))
    return out


amounts = st.sampled_from(
    ["330", "1,083", "1083", "40", "104", "500", "0.5", "2", "48", "37.8", "100", "212", "4.5"]
)
unit_words = st.sampled_from(
    ["m", "metres", "ft", "feet", "km", "miles", "kg", "lb", "pounds", "g", "mg", "litres",
     "gallons", "°C", "°F", "degrees", "hours", "days", "%", "million", "dollars", "euros", ""]
)  # fmt: skip
#: amounts that convert into each other ("330 m" and "1,083 feet") and some that nearly do
conversions = st.sampled_from(
    ["330 m", "1,083 feet", "1083 ft", "1,200 feet", "40 °C", "104 °F", "104 degrees",
     "500 mg", "0.5 g", "48 hours", "2 days", "100 °C", "212 °F", "37.8 °C", "100 °F",
     "40 litres", "40 gallons", "10.6 gallons", "4.5 kg", "9.9 pounds", "10 lb"]
)  # fmt: skip
quantity_text = st.one_of(
    conversions,
    st.builds(lambda n, u: f"{n} {u}".strip(), st.one_of(amounts, signed), unit_words),
)
statements = st.lists(quantity_text, min_size=1, max_size=4).map(
    lambda qs: "It measured " + " and ".join(qs) + "."
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(statements, max_size=6),
    statements,
    st.one_of(st.none(), statements),
    st.booleans(),
)
def test_figure_problems_are_the_scans(
    context: list[str], answer: str, query: str | None, exact: bool
) -> None:
    index = index_context([" ".join(context)])
    tokens = analyse(answer)
    asked = analyse(query) if query is not None else None
    got = figure_problems(
        tokens.stated, tokens.hedged, index.figure_values, asked, index.quantities, exact
    )
    scan = scan_figure_problems(
        tokens.stated, tokens.hedged, index.figure_values, asked, index.quantities.units, exact
    )
    assert got == scan


@pytest.mark.parametrize(
    ("query", "instead"),
    [
        ("It cost 2.4 million euros and 1.6 million yen.", "2400000 eur"),
        ("It cost 1.6 million yen and 2.4 million euros.", "1600000 jpy"),
    ],
)
def test_the_query_figure_given_instead_is_the_first_it_gives(query: str, instead: str) -> None:
    """Two of the query's figures support "2 million" but in another currency: the figure
    given instead is the first of them in the query, as the scan of the query found it."""
    index = index_context(["Nothing here."])
    tokens, asked = analyse("It cost 2 million dollars."), analyse(query)
    args = (tokens.stated, tokens.hedged, index.figure_values, asked)
    got = figure_problems(*args, index.quantities, False)
    assert got == scan_figure_problems(*args, index.quantities.units, False)
    assert [near for _, near in got] == [instead]


def test_a_sentence_that_points_back_is_read_with_the_one_before() -> None:
    """A one-sentence window that opens with "Its", "He" or "The latter" is read with the
    sentence before it in the same passage, so the model knows who or what it speaks of;
    a sentence that names its subject, or opens a passage, is read alone."""
    from ground_integrations.judges._index import index_context

    context = [
        "Mauna Kea is a volcano in Hawaii. Its peak is 4,207 m high. Kilauea erupts often.",
        "He climbed it in 1990.",
    ]
    index = index_context(context)
    windows = top_windows(index, "Mauna Kea's peak is 4,207 m high.", 3, 1)
    assert "Mauna Kea is a volcano in Hawaii. Its peak is 4,207 m high." in windows
    assert "Its peak is 4,207 m high." not in windows
    assert top_windows(index, "Kilauea erupts often.", 1, 1) == ["Kilauea erupts often."]
    assert top_windows(index, "He climbed it in 1990.", 1, 1) == ["He climbed it in 1990."]


def test_a_window_never_spans_two_documents_pasted_together() -> None:
    """ "... downtown Boston.Stanford University is ...": two documents pasted into one passage
    without a space. A window stops at the join, so a claim that binds one document's subject
    to the other's facts finds no window holding both; sentences joined by a space share
    windows as before, and the evidence still names passage 0."""
    from ground_integrations.judges._index import index_context

    context = [
        "Boston College is in Chestnut Hill. It was founded in 1863.Stanford University is in "
        "California. It was founded in 1885."
    ]
    index = index_context(context)
    assert [(s.passage, s.block) for s in index.sentences] == [(0, 0), (0, 0), (0, 1), (0, 1)]
    windows = top_windows(index, "Stanford University is in Chestnut Hill.", 0, 3)
    assert not any("Boston" in w and "Stanford" in w for w in windows)
    assert "Boston College is in Chestnut Hill. It was founded in 1863." in windows
    assert "Stanford University is in California. It was founded in 1885." in windows
    window = best_window(index, {"stanford", "chestnut"}, 3)
    assert window is not None
    assert index.sentences[window.first].block == index.sentences[window.last].block


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "Revenue rose 12% in Lisbon.",
                "Sales did not fall.",
                "Revenue rose 12% in Lisbon.",
                "The Wi-Fi is free.",
                json.dumps({"city": "Lisbon", "attributes": {"WiFi": "no", "Music": None}}),
                json.dumps({"city": "Porto", "attributes": {"WiFi": "free"}}),
            ]
        ),
        min_size=1,
        max_size=8,
    )
)
def test_an_index_reads_a_repeated_sentence_as_it_reads_it_once(context: list[str]) -> None:
    """Each sentence of an index holds what reading it alone gives, however often the context
    repeats it (a unit read before is not read again), and the postings and counts list
    every occurrence."""
    index = index_context(context)
    for k, sentence in enumerate(index.sentences):
        tokens = analyse(sentence.text)
        assert sentence.stems == frozenset(tokens.stems)
        assert sentence.words == frozenset(tokens.words)
        assert sentence.negated is tokens.negated
        assert frozenset(tokens.figures) <= sentence.figures
        for s in sentence.stems:
            assert k in index.postings[s]
    for s, where in index.postings.items():
        assert where == sorted(where)
        assert len(where) == sum(s in x.stems for x in index.sentences)
        assert s in index.stems
    assert index.words == frozenset().union(*(x.words for x in index.sentences))
    assert index.figures == frozenset().union(*(x.figures for x in index.sentences))
