"""Sentence splitting, tokenisation and offset arithmetic shared by every judge.

Sentence splitting uses NLTK's Punkt algorithm with parameters built in code (a list of common
abbreviations), so NLTK never looks for, or tries to download, its ``punkt`` data. Around Punkt
we handle what it does not know about: line structure (bullets, numbered lists, headings, blank
lines) and CJK sentence punctuation.

All offsets in this module are Python ``str`` indices, i.e. Unicode code points. ``IndexDetails``
conversions to UTF-8 and UTF-16 units live in :class:`~ground_integrations.models.IndexDetails`.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from .deadline import checkpoint

if TYPE_CHECKING:  # pragma: no cover
    from nltk.tokenize.punkt import PunktSentenceTokenizer

__all__ = [
    "CODE",
    "MAX_PUNKT_BLOCK",
    "STOPWORDS",
    "Span",
    "base_form",
    "code_point_to_utf8",
    "code_point_to_utf16",
    "split_sentences",
    "stem",
    "tokenize",
    "word_spans",
]

#: English function words, folded as :func:`fold` folds: never content, never evidence. The
#: judges' lexicon and the citation check read content words through this one list.
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

# Lower-cased, without the final period, as Punkt stores them.
_ABBREVIATIONS = frozenset(
    """
    mr mrs ms dr prof sr jr st mt ft rev hon gen col lt capt sgt cmdr adm gov sen rep pres
    supt insp det messrs mme mlle
    inc ltd co corp llc plc bros dept univ assn est div
    jan feb mar apr jun jul aug sep sept oct nov dec
    mon tue tues wed thu thur thurs fri sat sun
    e.g i.e etc vs cf al approx ca viz resp incl excl esp
    no nos vol vols pp fig figs eq eqs ch sec art para ed eds trans
    u.s u.s.a u.k u.n e.u d.c a.m p.m b.c a.d ph.d m.d b.a m.a b.sc m.sc
    ave blvd rd hwy
    min max avg tbsp tsp oz lb lbs in yr yrs mo hr hrs
    dist mg mcg kg ml
    """.split()
)

# Bullets and list markers that start an item on their own line.
_LIST_MARKER = re.compile(
    r"[ \t]*(?:[-*+\u2022\u2023\u25e6\u2043\u2219\u25aa\u25cf\u2013\u2014>]|"
    r"\(?(?:\d{1,3}|[a-zA-Z]|[ivxIVX]{1,4})[.)])[ \t]+"
)
# CJK and full-width sentence enders, with any closing quotes/brackets that follow.
_CJK_END = re.compile(
    r"[\u3002\uff01\uff1f\uff0e\uff61][\u300d\u300f\uff09\u3011\"'\u201d\u2019)]*"
)
# Chinese and Japanese write words without spaces: each ideograph or kana is a token of its own
# (so a figure inside "毛納基高5207.3米" is still a figure). Hangul is spaced and stays whole.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: A hyphen joins a compound ("well-known", "covid-19", "3-year") but not two figures: "10-12"
#: and "11:30-19:30" are ranges, whose ends are figures of their own.
_WORD = re.compile(
    rf"[{_CJK}]|[^\W{_CJK}]+(?:(?:[.,'\u2019]|(?<!\d)-|-(?!\d))[^\W{_CJK}]+)*",
    re.UNICODE,
)


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of a text: ``text == source[start:end]`` (code-point offsets)."""

    start: int
    end: int
    text: str


_tokenizer_lock = threading.Lock()
_tokenizer: PunktSentenceTokenizer | None = None


def _punkt() -> PunktSentenceTokenizer:
    """Build the Punkt tokenizer once, from code: no ``punkt`` data is ever loaded."""
    global _tokenizer
    if _tokenizer is None:
        with _tokenizer_lock:
            if _tokenizer is None:
                from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

                params = PunktParameters()
                params.abbrev_types = set(_ABBREVIATIONS)
                _tokenizer = PunktSentenceTokenizer(params)
    return _tokenizer


def _blocks(text: str) -> list[tuple[int, int]]:
    """Cut ``text`` into line blocks: paragraphs, list items and stand-alone lines.

    A line break ends a block unless the next line plainly continues the previous one (the
    previous line does not end a sentence and the next starts in lower case, as in text wrapped
    at a fixed width).
    """
    blocks: list[tuple[int, int]] = []
    start: int | None = None
    prev_line = ""
    pos = 0
    for line in text.splitlines(keepends=True):
        line_start, pos = pos, pos + len(line)
        body = line.strip()
        if not body:
            if start is not None:
                blocks.append((start, line_start))
                start = None
            prev_line = ""
            continue
        marker = _LIST_MARKER.match(line)
        # A bare number or letter followed by "." is a list marker only at the start of a line
        # with text after it; "3.5 m" is not a list item because the regex needs whitespace.
        # A number alone on its line ("40. " under "Dose (mg):") is the item itself, a figure.
        if marker and not line[marker.end() :].strip() and any(c.isdigit() for c in body):
            marker = None
        continues = (
            start is not None
            and marker is None
            and body[:1].islower()
            and prev_line[-1:] not in ".!?:;"
        )
        if not continues:
            if start is not None:
                blocks.append((start, line_start))
            start = line_start + (marker.end() if marker else 0)
        prev_line = body
    if start is not None:
        blocks.append((start, len(text)))
    return blocks


def _split_cjk(text: str, start: int, end: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    cursor = start
    for match in _CJK_END.finditer(text, start, end):
        out.append((cursor, match.end()))
        cursor = match.end()
    if cursor < end:
        out.append((cursor, end))
    return out


#: Two sentences joined without a space, as scraped passages often are ("... of downtown
#: Boston.Stanford University is ..."): a word of two or more letters ending in lower case, or a
#: number of two or more digits (either perhaps closed by a bracket or a quote), a full stop, then
#: a capitalised plain word. Initials ("U.S.Army"), list markers ("1.Mix") and code
#: ("Console.WriteLine(") do not match, nor a title or abbreviation (_NOT_AN_END).
_GLUED_END = re.compile(
    r"(?<![A-Za-z0-9])([A-Za-z]*[a-z]|[0-9]{2,})[)\]\"'\u201d\u2019]?"
    r"\.(?=[A-Z][a-z]*(?:[\s,;:'\u2019]|$))"
)
#: Punkt's abbreviations and "Fr." ("Fr.John"), but not "etc.": glued to a capital, it ends a
#: list and its sentence ("... Twenty One Pilots etc.Twenty One Pilots is a duo").
_NOT_AN_END = (_ABBREVIATIONS - {"etc"}) | {"fr"}


def _split_glued(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``text[start:end]`` cut after each full stop that joins two sentences without a space."""
    out: list[tuple[int, int]] = []
    cursor = start
    for match in _GLUED_END.finditer(text, start, end):
        word = match[1]
        if len(word) < 2 or word.lower() in _NOT_AN_END:
            continue
        out.append((cursor, match.end()))
        cursor = match.end()
    if cursor < end:
        out.append((cursor, end))
    return out


def _starts_lower(text: str) -> bool:
    for ch in text:
        if ch.isalpha():
            return ch.islower()
        if not (ch.isspace() or ch in "\"'([{\u201c\u2018"):
            return False
    return False


#: Punkt sees at most this many characters at once. NLTK runs each of its regex scans under a
#: wall-clock limit (``nltk.redos``, 5 s) that one huge paragraph can exceed; longer blocks are
#: cut first, after the last sentence end (else the last space) of the window.
MAX_PUNKT_BLOCK = 20_000
_SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f][\"')\]\u201d\u2019]*\s")
_SIMPLE_SENTENCE = re.compile(r"\S.*?(?:[.!?]+[\"')\]\u201d\u2019]*(?=\s)|\Z)", re.S)


def _window_end(text: str, start: int, end: int) -> int:
    """Where to cut ``text[start:end]`` (longer than MAX_PUNKT_BLOCK): a sentence end, a space,
    or the hard limit, searched in the second half of the window."""
    stop = start + MAX_PUNKT_BLOCK
    half = start + MAX_PUNKT_BLOCK // 2
    ends = [m.end() for m in _SENTENCE_END.finditer(text, half, stop)]
    if ends:
        return ends[-1]
    space = max(text.rfind(" ", half, stop), text.rfind("\n", half, stop))
    return space + 1 if space >= 0 else stop


def _punkt_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Punkt's sentence spans of ``text[start:end]`` in absolute offsets, without its time limit:
    over-long blocks are cut first, and if Punkt still gives up (``TimeoutError``) the window
    is split at sentence punctuation by a linear regex instead."""
    tokenizer = _punkt()
    out: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        stop = end if end - pos <= MAX_PUNKT_BLOCK else _window_end(text, pos, end)
        window = text[pos:stop]
        try:
            spans: list[tuple[int, int]] = []
            for span in tokenizer.span_tokenize(window):  # lazy: a sentence at a time
                if len(spans) % 64 == 0:
                    checkpoint()  # a Deadline (ground_integrations.deadline) stops the check here
                spans.append(span)
        except TimeoutError:
            spans = [(m.start(), m.end()) for m in _SIMPLE_SENTENCE.finditer(window)]
        out.extend((pos + s, pos + e) for s, e in spans)
        pos = stop
    return out


def split_sentences(text: str) -> list[Span]:
    """Split ``text`` into sentences with exact code-point offsets.

    ``text[s.start:s.end] == s.text`` holds for every span; spans never overlap, are in order and
    carry no leading or trailing whitespace. Bullet and list markers are left out of the span.
    """
    raw: list[tuple[int, int]] = []
    for b_start, b_end in _blocks(text):
        pieces: list[tuple[int, int]] = []
        for k, (s, e) in enumerate(_punkt_spans(text, b_start, b_end)):
            if k % 256 == 255:
                checkpoint()
            for cs, ce in _split_cjk(text, s, e):
                pieces.extend(_split_glued(text, cs, ce))
        # Punkt without training data breaks after unknown abbreviations ("D.C. yesterday");
        # a "sentence" that starts in lower case continues the previous one.
        merged: list[tuple[int, int]] = []
        for s, e in pieces:
            if merged and _starts_lower(text[s:e]) and text[merged[-1][1] - 1] == ".":
                merged[-1] = (merged[-1][0], e)
            else:
                merged.append((s, e))
        raw.extend(merged)
    spans: list[Span] = []
    for k, (s, e) in enumerate(raw):
        if k % 256 == 255:
            checkpoint()
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            spans.append(Span(s, e, text[s:e]))
    return spans


#: A date written with dots, day or month and year ("22.11.2019") or year first
#: ("2019.11.22"): three numbers, as "22/11/2019" is, not one; a month of two digits and its
#: year ("11.2019", "05.2019"): two.
_DOTTED_DATE = re.compile(
    r"(\d{1,2})\.(\d{1,2})\.((?:1[5-9]|2\d)\d\d)|((?:1[5-9]|2\d)\d\d)\.(\d{1,2})\.(\d{1,2})"
    r"|(0[1-9]|1[0-2])\.((?:1[5-9]|2\d)\d\d)"
)


def _dotted_date(word: str) -> re.Match[str] | None:
    """``word`` is a date written with dots: its day and month are 1 to 31, one of them 12 at
    most; or a month (two digits) and its year."""
    m = _DOTTED_DATE.fullmatch(word)
    if m is None or m[7]:
        return m
    a, b = (int(m[1]), int(m[2])) if m[1] else (int(m[5]), int(m[6]))
    return m if 0 < a <= 31 and 0 < b <= 31 and min(a, b) <= 12 else None


#: A version or an address: numbers parted by two dots or more ("2.4.1", "192.168.0.1").
CODE = r"\d+(?:\.\d+){2,}"
#: A version or an address glued by a full stop to the next sentence's first word, as scraped
#: passages write them ("use 192.168.0.1.Some routers use ..."): the number, then the word.
_GLUED_CODE = re.compile(rf"({CODE})\.([^\W\d_]+)")


def word_spans(text: str) -> list[Span]:
    """Word tokens with offsets. Numbers keep their inner separators ("4,207.3", "10/hour" -> 2),
    except a date's dots ("22.11.2019" -> 3, as "22/11/2019"; "11.2019" -> 2) and the full
    stop after a version or an address glued to the next word ("192.168.0.1.Some" -> 2); each
    Chinese or Japanese character is a token."""
    spans: list[Span] = []
    for m in _WORD.finditer(text):
        word = m.group()
        if "." not in word or not word[0].isdigit():
            spans.append(Span(m.start(), m.end(), word))
        elif (date := _dotted_date(word)) is not None:
            at = m.start()
            parts = (1, 2, 3) if date[1] else (4, 5, 6) if date[4] else (7, 8)
            spans.extend(Span(at + date.start(k), at + date.end(k), date[k]) for k in parts)
        elif (glued := _GLUED_CODE.fullmatch(word)) is not None:
            at = m.start()
            spans.extend(Span(at + glued.start(k), at + glued.end(k), glued[k]) for k in (1, 2))
        else:
            spans.append(Span(m.start(), m.end(), word))
    return spans


def tokenize(text: str) -> list[str]:
    """Lower-cased, accent-folded word tokens (those of :func:`word_spans`)."""
    return [fold(w.text) for w in word_spans(text)]


#: "Kea's", "Kea’s", "Kea`s": the possessive (or "it's"-style clitic) adds no content word.
_POSSESSIVE = ("'s", "\u2019s", "\u02bcs", "`s")


#: Words up to this long are remembered by :func:`fold` and :func:`stem` (65,536 and 131,072 of
#: them): longer ones, rare in prose but free for a client to send, are worked out each time,
#: so the two caches stay under about 60 MB whatever the input.
MAX_CACHED_WORD = 40


def fold(word: str) -> str:
    """Lower-case, strip accents and a possessive ending, so "Hawaiʻi's" and "hawaii" meet."""
    return _fold(word) if len(word) <= MAX_CACHED_WORD else _fold.__wrapped__(word)


@lru_cache(maxsize=65536)
def _fold(word: str) -> str:
    lowered = word.lower()
    if lowered.endswith(_POSSESSIVE) and len(lowered) > 2:
        lowered = lowered[:-2]
    decomposed = unicodedata.normalize("NFKD", lowered)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch) and ch not in "ʻ'’")


#: Irregular verb forms Porter's rules cannot reach ("wrote", "written" -> "write"): an answer
#: may say "was written" where the question asked "who wrote".
_IRREGULAR = {
    form: base
    for base, forms in {
        "be": "was were been being is are am",
        "begin": "began begun",
        "break": "broke broken",
        "bring": "brought",
        "build": "built",
        "buy": "bought",
        "catch": "caught",
        "choose": "chose chosen",
        "come": "came",
        "do": "did done does",
        "draw": "drew drawn",
        "drink": "drank drunk",
        "drive": "drove driven",
        "eat": "ate eaten",
        "fall": "fell fallen",
        "feel": "felt",
        "fight": "fought",
        "find": "found",
        "fly": "flew flown",
        "forget": "forgot forgotten",
        "freeze": "froze frozen",
        "get": "got gotten",
        "give": "gave given",
        "go": "went gone goes",
        "grow": "grew grown",
        "have": "had has",
        "hear": "heard",
        "hide": "hid hidden",
        "hold": "held",
        "keep": "kept",
        "know": "knew known",
        "lay": "laid",
        "lead": "led",
        "leave": "left",
        "lend": "lent",
        "lose": "lost",
        "make": "made",
        "mean": "meant",
        "meet": "met",
        "pay": "paid",
        "ride": "rode ridden",
        "ring": "rang rung",
        "rise": "rose risen",
        "run": "ran",
        "say": "said",
        "see": "saw seen",
        "seek": "sought",
        "sell": "sold",
        "send": "sent",
        "shake": "shook shaken",
        "shoot": "shot",
        "show": "shown",
        "sing": "sang sung",
        "sink": "sank sunk",
        "sit": "sat",
        "sleep": "slept",
        "speak": "spoke spoken",
        "spend": "spent",
        "stand": "stood",
        "steal": "stole stolen",
        "strike": "struck stricken",
        "swim": "swam swum",
        "take": "took taken",
        "teach": "taught",
        "tear": "tore torn",
        "tell": "told",
        "think": "thought",
        "throw": "threw thrown",
        "understand": "understood",
        "wake": "woke woken",
        "wear": "wore worn",
        "win": "won",
        "write": "wrote written",
    }.items()
    for form in forms.split()
}


def base_form(word: str) -> str:
    """An irregular verb form's base ("written" -> "write"); any other word unchanged."""
    return _IRREGULAR.get(word, word)


_stemmer_lock = threading.Lock()
_stemmer = None


#: Verbs that state the same change in other words ("rose" for "increased", "dropped" for
#: "fell", "started" for "began"): each group's words share one stem, so that a faithful
#: rewording is no missing word. Only words whose every common sense is the group's.
SAME_MEANING = (
    ("increase", "rise", "grow", "climb"),
    ("decrease", "fall", "drop", "decline"),
    ("begin", "start", "commence"),
    ("finish", "complete"),
    ("buy", "purchase"),
    ("help", "assist"),
)


def stem(word: str) -> str:
    """Porter stem of a folded word (NLTK's stemmer needs no data), irregular verb forms
    first reduced to their base ("wrote" -> "write"); the words of one group of
    :data:`SAME_MEANING` share the stem of its first ("rose" -> "increas")."""
    return _stem(word) if len(word) <= MAX_CACHED_WORD else _stem.__wrapped__(word)


def reworded(word: str) -> bool:
    """``word`` (folded) belongs to a group of :data:`SAME_MEANING`: any of the group's words
    in the context supports it."""
    return stem(word) in _group_stems()


def _porter(word: str) -> str:
    global _stemmer
    if _stemmer is None:
        with _stemmer_lock:
            if _stemmer is None:
                from nltk.stem.porter import PorterStemmer

                _stemmer = PorterStemmer(mode=PorterStemmer.NLTK_EXTENSIONS)
    return str(_stemmer.stem(word, to_lowercase=False))


@cache
def _same_stem() -> dict[str, str]:
    """The Porter stem of each word of :data:`SAME_MEANING` -> its group's shared stem."""
    return {_porter(w): _porter(group[0]) for group in SAME_MEANING for w in group}


@cache
def _group_stems() -> frozenset[str]:
    return frozenset(_same_stem().values())


@lru_cache(maxsize=131072)
def _stem(word: str) -> str:
    stemmed = _porter(_IRREGULAR.get(word, word))
    return _same_stem().get(stemmed, stemmed)


def code_point_to_utf8(text: str, index: int) -> int:
    """UTF-8 byte offset of code-point ``index`` in ``text``."""
    return len(text[:index].encode("utf-8", "surrogatepass"))


def code_point_to_utf16(text: str, index: int) -> int:
    """UTF-16 code-unit offset of code-point ``index`` in ``text``."""
    return len(text[:index].encode("utf-16-le", "surrogatepass")) // 2
