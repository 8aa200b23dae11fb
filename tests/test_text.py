from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ground_integrations.models import IndexDetails
from ground_integrations.text import split_sentences


def texts(text: str) -> list[str]:
    spans = split_sentences(text)
    for s in spans:
        assert text[s.start : s.end] == s.text
    return [s.text for s in spans]


def test_abbreviations_decimals_and_initials_do_not_split() -> None:
    text = (
        "Dr. Smith went to Washington D.C. yesterday. J. K. Rowling wrote it. "
        "The peak is 4,207.3 m high, e.g. very high. It cost $3.50 vs. $4.00 in the U.S. today."
    )
    assert texts(text) == [
        "Dr. Smith went to Washington D.C. yesterday.",
        "J. K. Rowling wrote it.",
        "The peak is 4,207.3 m high, e.g. very high.",
        "It cost $3.50 vs. $4.00 in the U.S. today.",
    ]


def test_sentences_glued_without_a_space_are_two() -> None:
    # scraped passages join sentences without a space; each is its own sentence, so a window of
    # one sentence holds one fact and its evidence is that sentence alone
    text = (
        "Boston College is in Chestnut Hill, 6 mi west of downtown Boston.Stanford University is "
        "in California. He won in 1952.He played for (Oklahoma).The team won, etc.Twenty One "
        'Pilots is a duo. She said "yes".A reply came.'
    )
    assert texts(text) == [
        "Boston College is in Chestnut Hill, 6 mi west of downtown Boston.",
        "Stanford University is in California.",
        "He won in 1952.",
        "He played for (Oklahoma).",
        "The team won, etc.",
        "Twenty One Pilots is a duo.",
        'She said "yes".',
        "A reply came.",
    ]
    # initials, titles, list markers, domain names and code stay whole
    for whole in (
        "It serves the U.S.Army and Dr.Smith today.",
        "Mrs.Jones and St.Louis met.",
        "Mix 1.Stir 2.Bake",
        "Visit example.com today.",
        "Call Console.WriteLine(x) here.",
        "Its gene a.Other names differ.",
    ):
        assert texts(whole) == [whole]


def test_bullets_numbered_lists_and_blank_lines() -> None:
    text = (
        "Steps:\n- Open the app\n* Click Save. Then exit.\n1. First item\n2) Second item\n\nDone."
    )
    assert texts(text) == [
        "Steps:",
        "Open the app",
        "Click Save.",
        "Then exit.",
        "First item",
        "Second item",
        "Done.",
    ]


def test_wrapped_lines_join_and_headings_split() -> None:
    assert texts("This text is wrapped\nat a fixed width\nhere. Next one.") == [
        "This text is wrapped\nat a fixed width\nhere.",
        "Next one.",
    ]
    assert texts("Heading\nSome text. More text.") == ["Heading", "Some text.", "More text."]


def test_cjk_sentence_punctuation() -> None:
    assert texts("東京は日本の首都です。人口は多い！本当？はい。") == [
        "東京は日本の首都です。",
        "人口は多い！",
        "本当？",
        "はい。",
    ]
    assert texts("他说：“好。”然后走了。") == ["他说：“好。”", "然后走了。"]


def test_nltk_never_loads_punkt_data(monkeypatch) -> None:
    import nltk.data

    def refuse(*args, **kwargs):
        raise AssertionError("NLTK tried to load data")

    monkeypatch.setattr(nltk.data, "load", refuse)
    monkeypatch.setattr(nltk.data, "find", refuse)
    monkeypatch.setattr(nltk, "download", refuse)
    assert texts("One. Two.") == ["One.", "Two."]


unicode_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=200
) | st.lists(
    st.sampled_from(
        ["a", "é", "e\u0301", "日本", "😀", "👩‍👩‍👧", "🇯🇵", " ", ". ", "\n", "。", "Ω", "𝔘"]
    ),
    max_size=60,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(unicode_text)
def test_sentence_spans_are_exact_and_ordered(text: str) -> None:
    spans = split_sentences(text)
    last = 0
    for s in spans:
        assert text[s.start : s.end] == s.text
        assert s.start >= last and s.end > s.start
        assert not s.text[0].isspace() and not s.text[-1].isspace()
        last = s.end


@settings(max_examples=300, deadline=None)
@given(unicode_text, st.data())
def test_offsets_in_three_units_are_exact(text: str, data) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    offset = IndexDetails.offset_of(text, start)
    length = IndexDetails.length_of(text[start:end])
    utf8, utf16 = text.encode("utf-8"), text.encode("utf-16-le")
    assert offset.code_point == start and length.code_point == end - start
    assert utf8[offset.utf8 : offset.utf8 + length.utf8].decode("utf-8") == text[start:end]
    assert (
        utf16[2 * offset.utf16 : 2 * (offset.utf16 + length.utf16)].decode("utf-16-le")
        == text[start:end]
    )


def test_offsets_for_known_emoji_and_combining_marks() -> None:
    text = "👩‍👩‍👧 café e\u0301 日本"
    start = text.index("日")
    off = IndexDetails.offset_of(text, start)
    # family emoji: 5 code points, 8 UTF-16 units, 18 UTF-8 bytes
    assert (off.code_point, off.utf16, off.utf8) == (14, 17, 29)
    assert IndexDetails.length_of("😀").model_dump(by_alias=True) == {
        "utf8": 4,
        "utf16": 2,
        "codePoint": 1,
    }


def test_a_hyphen_joins_compounds_but_not_the_ends_of_a_range() -> None:
    from ground_integrations.text import tokenize

    assert tokenize("well-known covid-19 3-year Jean-Luc") == [
        "well-known",
        "covid-19",
        "3-year",
        "jean-luc",
    ]
    # a range's ends are figures of their own: "19" is in "11:30-19:30"
    assert tokenize("Monday: 11:30-19:30, 10-12 guests") == [
        "monday",
        "11",
        "30",
        "19",
        "30",
        "10",
        "12",
        "guests",
    ]


def test_a_huge_paragraph_is_split_without_punkts_regex_timeout(monkeypatch) -> None:
    from ground_integrations import text

    class Slow:
        def span_tokenize(self, block: str):  # what NLTK's redos raises on a huge block
            if len(block) > text.MAX_PUNKT_BLOCK:
                raise TimeoutError("regex match exceeded the 5.0s timeout")
            yield 0, len(block)

    monkeypatch.setattr(text, "_punkt", lambda: Slow())
    paragraph = "word " * 50_000 + "end. Next one."
    spans = text.split_sentences(paragraph)
    assert spans and all(paragraph[s.start : s.end] == s.text for s in spans)
    assert spans[-1].text.endswith("Next one.")

    def broken(block: str):
        raise TimeoutError("regex match exceeded the 5.0s timeout")
        yield  # pragma: no cover

    monkeypatch.setattr(
        text, "_punkt", lambda: type("B", (), {"span_tokenize": staticmethod(broken)})()
    )
    spans = text.split_sentences("One. Two three. Four.")
    assert [s.text for s in spans] == ["One.", "Two three.", "Four."]


def test_verbs_that_state_the_same_change_share_a_stem() -> None:
    from ground_integrations.text import reworded, stem

    assert stem("rose") == stem("increased") == stem("grew") == stem("climbing")
    assert stem("dropped") == stem("fell") == stem("declines")
    assert stem("started") == stem("began")
    # the two directions stay apart, and a word of no group keeps its own stem
    assert stem("rose") != stem("fell")
    assert stem("revenue") == "revenu"
    assert reworded("dropped") and reworded("began") and not reworded("revenue")


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_a_change_in_other_words_is_no_missing_word_and_its_opposite_is_caught(task) -> None:
    from ground_integrations import GroundednessChecker, HeuristicJudge

    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    context = ["Brightwater shares fell 3% on the news. Revenue increased by 18% to $95 million."]
    query = "What happened?" if task == "QnA" else None
    for answer in (
        "Brightwater shares dropped 3% on the news.",
        "Revenue rose by 18% to $95 million.",
    ):
        request = checker.build_request(context, answer, query, task=task)
        _, _, feats = checker.judge.analyse(request)
        assert feats[0].values["missing_words"] == 0.0, answer
    # "fell" where the context says "increased": an opposite, though the pair is "rise"/"fall"
    alone = ["Revenue increased by 18% to $95 million."]
    request = checker.build_request(alone, "Revenue fell by 18% to $95 million.", query, task=task)
    _, _, feats = checker.judge.analyse(request)
    assert feats[0].opposites, feats[0].reasons
