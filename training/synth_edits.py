"""One-fact edits and faithful rewordings of supported sentences: labelled pairs for free.

The default judge has to tell a sentence that changes one fact of its context (a negation, swapped
roles, a comparative or ordinal reversed, another unit or scale word, a stronger quantifier or
modal, an invented cause, a wrong title, a changed figure or date) from one that says the same
thing in other words (synonyms, the passive, a comparative turned round with its arguments, a
figure rounded behind a hedge or written another way, a clause dropped or moved). Each function
here takes a sentence the context supports and returns such a variant, with the character span
of the words it changed in the new text, or None when it does not apply.

    edits = list(all_edits(sentence, rng, entities))        # label 0: unsupported
    rewordings = list(all_rewordings(sentence, rng))         # label 1: supported

Deterministic for a given ``random.Random``. ``training/train_cross_encoder.py --synthetic N``
pairs each variant with the premise the judge would give it at run time.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

__all__ = ["EDITS", "REWORDINGS", "Variant", "all_edits", "all_rewordings", "entities_of"]


@dataclass(frozen=True)
class Variant:
    text: str
    category: str
    label: int  # 1 supported, 0 unsupported
    start: int  # the changed words in ``text`` (end exclusive)
    end: int


def _case(like: str, word: str) -> str:
    if like[:1].isupper() and word[:1].islower():
        return word[:1].upper() + word[1:]
    return word


def _replace(text: str, match: re.Match[str], new: str, group: int = 0) -> tuple[str, int, int]:
    start, end = match.span(group)
    new = _case(text[start:end], new)
    return text[:start] + new + text[end:], start, start + len(new)


def _pick(rng: random.Random, matches: list[re.Match[str]]) -> re.Match[str] | None:
    return rng.choice(matches) if matches else None


def _swap_words(
    text: str, pairs: Sequence[tuple[str, str]], rng: random.Random, both: bool = True
) -> tuple[str, int, int] | None:
    """Replace one word of ``pairs`` (either side when ``both``) by its partner."""
    table: dict[str, list[str]] = {}
    for a, b in pairs:
        table.setdefault(a.lower(), []).append(b)
        if both:
            table.setdefault(b.lower(), []).append(a)
    pattern = re.compile(
        r"\b(" + "|".join(re.escape(w) for w in sorted(table, key=len, reverse=True)) + r")\b",
        re.IGNORECASE,
    )
    found = list(pattern.finditer(text))
    m = _pick(rng, found)
    if m is None:
        return None
    return _replace(text, m, rng.choice(table[m.group(0).lower()]))


# -- edits (unsupported) ---------------------------------------------------------------------

_AUX = r"is|was|are|were|can|could|will|would|should|has been|have been|had been|does|did|do"
_NEGATED = re.compile(rf"\b({_AUX}|has|have|had)\s+not\b|\b(cannot)\b", re.IGNORECASE)
_CONTRACTED = re.compile(
    r"\b(is|was|are|were|does|did|do|has|have|had|could|would|should)n['’]t\b", re.IGNORECASE
)
_AFFIRMED = re.compile(rf"\b({_AUX})\b", re.IGNORECASE)


def negation(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """Add a "not" after an auxiliary, or take one away."""
    negated = list(_NEGATED.finditer(text)) + list(_CONTRACTED.finditer(text))
    if negated and rng.random() < 0.5:
        m = rng.choice(negated)
        if m.group(0).lower() == "cannot":
            return _replace(text, m, "can")
        return _replace(text, m, m.group(1))
    affirmed = [m for m in _AFFIRMED.finditer(text) if not text[m.end() :].startswith(" not")]
    m = _pick(rng, affirmed)
    if m is None:
        return None
    word = m.group(0)
    return _replace(text, m, "cannot" if word.lower() == "can" else f"{word} not")


_NEVER = re.compile(r"\b(is|was|are|were|has|have|had|still|always)\b", re.IGNORECASE)


def never(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """Never or no longer: "was" -> "was never", "is" -> "is no longer", "always" -> "never"."""
    m = _pick(rng, list(_NEVER.finditer(text)))
    if m is None:
        return None
    word = m.group(0).lower()
    if word == "still":
        return _replace(text, m, "no longer")
    if word == "always":
        return _replace(text, m, "never")
    if word in {"is", "are"}:
        return _replace(text, m, f"{m.group(0)} no longer")
    return _replace(text, m, f"{m.group(0)} never")


_LEAD = frozenset(
    "The A An In On At By For From With After Before During Since Although While When If As "
    "This That These Those It Its He She They We Our Their His Her Mr Mrs Ms Dr But And Also "
    "However January February March April May June July August September October November "
    "December Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
)
_NAME = re.compile(r"\b[A-Z][a-zA-Z'’.-]+(?:\s+(?:of\s+|de\s+|van\s+)?[A-Z][a-zA-Z'’.-]+)*")


def entities_of(text: str, skip_first: bool = False) -> list[tuple[int, int, str]]:
    """Capitalised names (runs of capitalised words), leading function words left out;
    ``skip_first``: not a single capitalised word opening the sentence (often a common noun)."""
    out = []
    for m in _NAME.finditer(text):
        words = m.group(0).split()
        start = m.start()
        while words and words[0].rstrip(".") in _LEAD:
            start += len(words[0]) + 1
            words = words[1:]
        if not words or len(" ".join(words)) < 3:
            continue
        if skip_first and start == 0 and len(words) == 1:
            continue
        name = " ".join(words).rstrip(".'’")
        out.append((start, start + len(name), name))
    return out


def swap_roles(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """The first two different names of the sentence trade places (who did what to whom)."""
    names = entities_of(text)
    for i, (s1, e1, n1) in enumerate(names):
        for s2, e2, n2 in names[i + 1 :]:
            if n1 != n2 and n1 not in n2 and n2 not in n1:
                new = text[:s1] + n2 + text[e1:s2] + n1 + text[e2:]
                return new, s1, s1 + len(n2) + (s2 - e1) + len(n1)
    return None


def swap_entity(
    text: str, rng: random.Random, others: Sequence[str] = ()
) -> tuple[str, int, int] | None:
    """A name of the sentence replaced by another name the context uses."""
    names = entities_of(text, skip_first=True)
    present = {n for _, _, n in entities_of(text)}
    candidates = sorted(
        {o for o in others if o not in present and all(o not in n for n in present)}
    )
    if not names or not candidates:
        return None
    s, e, _ = rng.choice(names)
    new = rng.choice(candidates)
    return text[:s] + new + text[e:], s, s + len(new)


COMPARATIVES = [
    ("wider", "narrower"),
    ("larger", "smaller"),
    ("bigger", "smaller"),
    ("higher", "lower"),
    ("more", "less"),
    ("more", "fewer"),
    ("greater", "smaller"),
    ("older", "younger"),
    ("earlier", "later"),
    ("before", "after"),
    ("above", "below"),
    ("longer", "shorter"),
    ("faster", "slower"),
    ("heavier", "lighter"),
    ("better", "worse"),
    ("stronger", "weaker"),
    ("cheaper", "more expensive"),
    ("increased", "decreased"),
    ("increase", "decrease"),
    ("increases", "decreases"),
    ("rose", "fell"),
    ("rising", "falling"),
    ("gained", "lost"),
    ("won", "lost"),
    ("most", "least"),
    ("largest", "smallest"),
    ("highest", "lowest"),
    ("biggest", "smallest"),
    ("oldest", "youngest"),
    ("longest", "shortest"),
    ("maximum", "minimum"),
    ("majority", "minority"),
    ("up", "down"),
    ("north", "south"),
    ("east", "west"),
    ("inside", "outside"),
    ("positive", "negative"),
    ("success", "failure"),
    ("accepted", "rejected"),
    ("approved", "rejected"),
    ("allowed", "banned"),
    ("profit", "loss"),
    ("entered", "left"),
    ("opened", "closed"),
    ("import", "export"),
    ("imports", "exports"),
]


def comparative(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """A comparative, superlative or direction word turned into its opposite."""
    return _swap_words(text, COMPARATIVES, rng)


_THAN = re.compile(
    r"^(?P<a>[A-Z][^,;:]{2,60}?) (?P<v>is|are|was|were) (?P<c>\w+er|more \w+|less \w+) than "
    r"(?P<b>[^,;:.]{3,60}?)(?P<rest>[,;:.].*|)$"
)
_OPPOSITE = {a: b for a, b in COMPARATIVES} | {b: a for a, b in COMPARATIVES}


def _lead_lower(np: str) -> str:
    first, _, rest = np.partition(" ")
    if first in {"The", "A", "An", "Its", "Their", "His", "Her", "Our"}:
        return f"{first.lower()} {rest}"
    return np


def _lead_upper(np: str) -> str:
    return np[:1].upper() + np[1:]


def than_swap(text: str, flip: bool) -> tuple[str, int, int] | None:
    """ "A is wider than B" -> "B is wider than A" (``flip=False``: the comparison reversed) or
    "B is narrower than A" (``flip=True``: the same fact turned round)."""
    m = _THAN.match(text)
    if m is None:
        return None
    comp = m.group("c")
    if flip:
        if comp.startswith(("more ", "less ")):
            word, _, adj = comp.partition(" ")
            comp = f"{'less' if word == 'more' else 'more'} {adj}"
        elif comp.lower() in _OPPOSITE:
            comp = _OPPOSITE[comp.lower()]
        else:
            return None
    a, b = _lead_lower(m.group("a")), m.group("b")
    new = f"{_lead_upper(b)} {m.group('v')} {comp} than {a}{m.group('rest')}"
    return new, 0, len(new) - len(m.group("rest"))


ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "last"]
_ORDINAL = re.compile(r"\b(first|second|third|fourth|fifth|sixth|last|1st|2nd|3rd|4th|5th)\b", re.I)
_NUM_ORD = {"1st": "first", "2nd": "second", "3rd": "third", "4th": "fourth", "5th": "fifth"}


def ordinal(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """An ordinal replaced by another ("second-largest" -> "largest" counts too)."""
    hyphen = list(re.finditer(r"\b(second|third)-(\w+est)\b", text, re.I))
    if hyphen and rng.random() < 0.5:
        m = rng.choice(hyphen)
        return _replace(text, m, m.group(2))
    m = _pick(rng, list(_ORDINAL.finditer(text)))
    if m is None:
        return None
    word = _NUM_ORD.get(m.group(0).lower(), m.group(0).lower())
    choices = [o for o in ORDINALS if o != word]
    if text[m.end() : m.end() + 1] == "-":  # "third-largest": not "first-" or "last-"
        choices = [o for o in choices if o not in {"first", "last"}]
    return _replace(text, m, rng.choice(choices))


UNITS = [
    ["metres", "feet", "kilometres", "miles", "yards"],
    ["meters", "feet", "kilometers", "miles"],
    ["km", "miles", "m"],
    ["kilograms", "pounds", "tonnes", "grams"],
    ["kg", "lb", "g"],
    ["litres", "gallons", "millilitres"],
    ["liters", "gallons", "milliliters"],
    ["mg", "g", "mcg"],
    ["seconds", "minutes", "hours"],
    ["minutes", "hours", "seconds"],
    ["hours", "days", "minutes"],
    ["days", "weeks", "months"],
    ["weeks", "months", "days"],
    ["months", "years", "weeks"],
    ["years", "months", "decades"],
    ["percent", "percentage points"],
    ["dollars", "euros", "pounds"],
    ["euros", "dollars", "pounds"],
    ["°C", "°F"],
    ["acres", "hectares"],
    ["hectares", "acres"],
    ["square miles", "square kilometres"],
]
_UNIT_OF = {u: group for group in UNITS for u in group}
_UNIT = re.compile(
    r"(?<=\d)\s?("
    + "|".join(re.escape(u) for u in sorted(_UNIT_OF, key=len, reverse=True))
    + r")\b"
)


def unit(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """The unit after a number replaced by another of the same kind."""
    m = _pick(rng, list(_UNIT.finditer(text)))
    if m is None:
        return None
    old = m.group(1)
    return _replace(text, m, rng.choice([u for u in _UNIT_OF[old] if u != old]), 1)


_SCALE = re.compile(r"(?<=\d)\s?(thousand|million|billion|trillion|bn|m|k)\b", re.IGNORECASE)
_SCALES = {
    "thousand": ["million", "billion"],
    "million": ["billion", "thousand"],
    "billion": ["million", "trillion"],
    "trillion": ["billion"],
    "bn": ["m", "million"],
    "m": ["bn", "billion"],
    "k": ["m", "million"],
}


def scale(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """A scale word after a number replaced by another (million -> billion)."""
    m = _pick(rng, list(_SCALE.finditer(text)))
    if m is None:
        return None
    return _replace(text, m, rng.choice(_SCALES[m.group(1).lower()]), 1)


def quantifier(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """A weaker quantifier or frequency made absolute (some -> all, often -> always)."""
    pairs = [
        ("some", "all"),
        ("many", "all"),
        ("several", "all"),
        ("most", "all"),
        ("few", "no"),
        ("sometimes", "always"),
        ("often", "always"),
        ("usually", "always"),
        ("rarely", "never"),
        ("partly", "entirely"),
        ("partially", "completely"),
        ("a few", "all"),
        ("occasionally", "always"),
        ("all", "some"),
        ("always", "sometimes"),
    ]
    return _swap_words(text, pairs, rng, both=False)


def modal(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """A possibility made a certainty or an obligation, or a hedge taken away."""
    pairs = [
        ("may", "must"),
        ("may", "will"),
        ("might", "will"),
        ("could", "will"),
        ("can", "must"),
        ("should", "must"),
        ("possibly", "certainly"),
        ("probably", "certainly"),
        ("likely", "certain"),
        ("suggests", "proves"),
        ("suggested", "proved"),
        ("is associated with", "causes"),
        ("are associated with", "cause"),
        ("was associated with", "caused"),
        ("is linked to", "is caused by"),
        ("are linked to", "are caused by"),
        ("optional", "mandatory"),
        ("recommended", "required"),
        ("allowed", "required"),
        ("plans to", "will"),
        ("is expected to", "will"),
        ("are expected to", "will"),
        ("aims to", "will"),
        ("proposed", "approved"),
        ("estimated", "confirmed"),
    ]
    return _swap_words(text, pairs, rng, both=False)


CAUSES = [
    "because of rising costs",
    "due to a shortage of staff",
    "after a change in government policy",
    "as a result of heavy rainfall",
    "because of safety concerns",
    "due to strong demand",
    "following a cyber attack",
    "because of a dispute with the unions",
    "due to poor ticket sales",
    "after pressure from investors",
    "because of a lack of funding",
    "due to a technical fault",
    "as a result of the pandemic",
    "because of new regulations",
    "after complaints from residents",
    "due to a supply shortage",
    "because of an injury",
    "following a court ruling",
    "due to low interest rates",
    "because of the warm weather",
]


def cause(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """A cause the context never gives, appended to the sentence."""
    body = text.rstrip()
    end = ""
    if body[-1:] in ".!":
        body, end = body[:-1], body[-1]
    if len(body) < 20 or re.search(r"\b(because|due to|as a result|caused)\b", body, re.I):
        return None
    clause = rng.choice(CAUSES)
    new = f"{body} {clause}{end}"
    return new, len(body) + 1, len(body) + 1 + len(clause)


TITLES = [
    ("CEO", "founder"),
    ("CEO", "chairman"),
    ("CEO", "CFO"),
    ("founder", "chairman"),
    ("president", "prime minister"),
    ("President", "Vice President"),
    ("prime minister", "president"),
    ("coach", "captain"),
    ("manager", "captain"),
    ("director", "producer"),
    ("director", "writer"),
    ("author", "editor"),
    ("senator", "governor"),
    ("governor", "mayor"),
    ("mayor", "governor"),
    ("professor", "lecturer"),
    ("doctor", "nurse"),
    ("king", "prince"),
    ("queen", "princess"),
    ("minister", "secretary"),
    ("chairman", "chief executive"),
    ("singer", "drummer"),
    ("goalkeeper", "striker"),
    ("actor", "director"),
    ("architect", "engineer"),
    ("winner", "runner-up"),
    ("champion", "runner-up"),
    ("owner", "tenant"),
    ("husband", "brother"),
    ("wife", "sister"),
    ("son", "nephew"),
    ("daughter", "niece"),
    ("father", "uncle"),
    ("mother", "aunt"),
]


def title(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """A title, role or relation replaced by another."""
    return _swap_words(text, TITLES, rng)


_FIGURE = re.compile(
    r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,])|(?<![\w.,])\d+(?:\.\d+)?(?![\w])"
)
MONTHS = (
    "January February March April May June July August September October November December".split()
)
_MONTH = re.compile(r"\b(" + "|".join(MONTHS) + r")\b")


def figure(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """A figure, year or month changed."""
    months = list(_MONTH.finditer(text))
    if months and rng.random() < 0.3:
        m = rng.choice(months)
        return _replace(text, m, rng.choice([x for x in MONTHS if x != m.group(0)]))
    m = _pick(rng, list(_FIGURE.finditer(text)))
    if m is None:
        return None
    raw = m.group(0)
    digits = raw.replace(",", "")
    value = float(digits)
    if 1800 <= value <= 2100 and "." not in digits:  # a year
        new = str(int(value) + rng.choice([-10, -3, -2, -1, 1, 2, 3, 5]))
    elif value == int(value) and "." not in digits:
        step = (
            rng.choice([1, 2, 3, 5]) if value < 20 else max(1, round(value * rng.uniform(0.1, 0.6)))
        )
        new_value = int(value) + step * rng.choice([-1, 1])
        if new_value <= 0:
            new_value = int(value) + step
        new = f"{new_value:,}" if "," in raw else str(new_value)
    else:
        places = len(digits.partition(".")[2])
        new = f"{value * rng.choice([0.5, 0.8, 1.25, 1.5, 2]):.{max(1, places)}f}"
    if new == raw:
        return None
    return _replace(text, m, new)


EDITS: dict[str, Callable[..., tuple[str, int, int] | None]] = {
    "negation": negation,
    "never": never,
    "swap_roles": swap_roles,
    "swap_entity": swap_entity,
    "comparative": comparative,
    "than_swap": lambda t, rng: than_swap(t, flip=False),
    "ordinal": ordinal,
    "unit": unit,
    "scale": scale,
    "quantifier": quantifier,
    "modal": modal,
    "cause": cause,
    "title": title,
    "figure": figure,
}


def all_edits(text: str, rng: random.Random, others: Sequence[str] = ()) -> Iterator[Variant]:
    """Every edit that applies to ``text`` (one variant per category), in a fixed order."""
    for name, fn in EDITS.items():
        out = fn(text, rng, others) if name == "swap_entity" else fn(text, rng)
        if out is not None and out[0] != text:
            yield Variant(out[0], name, 0, out[1], out[2])


# -- rewordings (supported) ------------------------------------------------------------------

SYNONYMS = [
    ("increased", "rose"),
    ("increased", "grew"),
    ("decreased", "fell"),
    ("decreased", "declined"),
    ("completed", "finished"),
    ("began", "started"),
    ("started", "began"),
    ("purchased", "bought"),
    ("bought", "purchased"),
    ("large", "big"),
    ("big", "large"),
    ("tall", "high"),
    ("approximately", "about"),
    ("roughly", "about"),
    ("said", "stated"),
    ("stated", "said"),
    ("announced", "said"),
    ("built", "constructed"),
    ("constructed", "built"),
    ("assist", "help"),
    ("help", "assist"),
    ("show", "indicate"),
    ("shows", "indicates"),
    ("showed", "indicated"),
    ("use", "utilise"),
    ("used", "employed"),
    ("quickly", "rapidly"),
    ("rapidly", "quickly"),
    ("mainly", "mostly"),
    ("mostly", "mainly"),
    ("often", "frequently"),
    ("frequently", "often"),
    ("children", "kids"),
    ("enough", "sufficient"),
    ("obtain", "get"),
    ("received", "got"),
    ("located", "situated"),
    ("situated", "located"),
    ("famous", "well known"),
    ("well-known", "famous"),
    ("main", "principal"),
    ("essential", "vital"),
    ("died", "passed away"),
    ("city", "town"),
    ("firm", "company"),
    ("company", "firm"),
    ("film", "movie"),
    ("movie", "film"),
    ("buy", "purchase"),
    ("start", "begin"),
    ("end", "finish"),
    ("ended", "finished"),
    ("finished", "ended"),
    ("maybe", "perhaps"),
    ("perhaps", "maybe"),
    ("however", "but"),
    ("additionally", "also"),
    ("therefore", "so"),
]


def synonym(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    return _swap_words(text, SYNONYMS, rng, both=False)


NOT_FORMS = [
    ("inactive", "not active"),
    ("unable", "not able"),
    ("impossible", "not possible"),
    ("unknown", "not known"),
    ("unclear", "not clear"),
    ("unlikely", "not likely"),
    ("incorrect", "not correct"),
    ("invalid", "not valid"),
    ("unavailable", "not available"),
    ("unusual", "not usual"),
    ("unsafe", "not safe"),
    ("uncommon", "not common"),
    ("unnecessary", "not necessary"),
    ("illegal", "not legal"),
    ("insufficient", "not sufficient"),
    ("incomplete", "not complete"),
    ("unpaid", "not paid"),
    ("unchanged", "not changed"),
]


def not_form(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """ "inactive" <-> "not active"."""
    return _swap_words(text, NOT_FORMS, rng)


_PASSIVE_VERBS = (
    "hired appointed defeated acquired signed replaced interviewed invited fired elected "
    "nominated succeeded criticised criticized praised sued founded designed directed produced "
    "published released funded sponsored approved rejected attacked visited married coached "
    "managed discovered invented purchased bought sold owned developed created built "
    "introduced announced launched awarded honoured honored arrested charged"
).split()
_IRREGULAR = {"beat": "beaten", "sold": "sold", "bought": "bought", "built": "built"}
_ACTIVE = re.compile(
    r"^(?P<a>[A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,3}) (?P<v>"
    + "|".join([*_PASSIVE_VERBS, "beat"])
    + r") (?P<b>(?:the )?[A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,3})(?P<rest>[ ,.;].*|)$"
)


def passive(text: str) -> tuple[str, int, int] | None:
    """ "A hired B in 2020." -> "B was hired by A in 2020."."""
    m = _ACTIVE.match(text)
    if m is None or m.group("a").split()[0] in _LEAD:
        return None
    verb = _IRREGULAR.get(m.group("v"), m.group("v"))
    b = _lead_upper(m.group("b"))
    new = f"{b} was {verb} by {m.group('a')}{m.group('rest')}"
    return new, 0, len(new) - len(m.group("rest"))


_SMALL = "zero one two three four five six seven eight nine ten eleven twelve".split()
_DIGIT = re.compile(r"(?<![\w.,$£€])([2-9]|1[0-2])(?![\w.,%]|\.\d)")


def number_words(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """A small number written in words (3 -> three)."""
    m = _pick(rng, list(_DIGIT.finditer(text)))
    if m is None:
        return None
    return _replace(text, m, _SMALL[int(m.group(1))])


_BIG = re.compile(r"(?<![\w.,$])(\d{1,3}(?:,\d{3})+|\d{4,})(?![\w,]|\.\d)")


def approximate(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """A large exact figure rounded behind a hedge on its side (4,012,550 -> about 4 million,
    1,821 -> over 1,800, 1,790 -> nearly 1,800)."""
    found = [m for m in _BIG.finditer(text) if not 1800 <= int(m.group(1).replace(",", "")) <= 2100]
    m = _pick(rng, found)  # years left out
    if m is None:
        return None
    value = int(m.group(1).replace(",", ""))
    digits = len(str(value))
    keep = 2 if digits > 3 else 1
    unit_ = 10 ** (digits - keep)
    rounded = round(value / unit_) * unit_
    if rounded == value:
        return None
    if rounded >= 1_000_000 and rounded % 1_000_000 == 0:
        written = f"{rounded // 1_000_000} million"
    elif rounded >= 1_000_000 and rounded % 100_000 == 0:
        written = f"{rounded / 1_000_000:.1f} million"
    else:
        written = f"{rounded:,}" if "," in m.group(1) else str(rounded)
    hedge = rng.choice(["about", "around", "roughly"])
    if rng.random() < 0.5:
        hedge = ("over", "more than")[rng.randrange(2)] if rounded < value else "nearly"
    return _replace(text, m, f"{hedge} {written}")


_ABBREVIATIONS = [
    ("metres", "m"),
    ("meters", "m"),
    ("kilometres", "km"),
    ("kilometers", "km"),
    ("kilograms", "kg"),
    ("litres", "L"),
    ("liters", "L"),
    ("milligrams", "mg"),
    ("percent", "%"),
    ("per cent", "%"),
    ("minutes", "min"),
    ("hours", "h"),
]
_ABBREVIATION = re.compile(
    r"(?<=\d) (" + "|".join(re.escape(a) for a, _ in _ABBREVIATIONS) + r")\b"
)


def abbreviate(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """A unit or scale written short (330 metres -> 330 m, $5 million -> $5M)."""
    money = list(re.finditer(r"\$(\d+(?:\.\d+)?) (million|billion)\b", text))
    if money and rng.random() < 0.5:
        m = rng.choice(money)
        new = f"${m.group(1)}{'M' if m.group(2) == 'million' else 'B'}"
        return _replace(text, m, new)
    m = _pick(rng, list(_ABBREVIATION.finditer(text)))
    if m is None:
        return None
    short = dict(_ABBREVIATIONS)[m.group(1)]
    sep = "" if short in {"%"} else " "
    return (
        text[: m.start()] + sep + short + text[m.end() :],
        m.start(),
        m.start() + len(sep + short),
    )


_PARENS = re.compile(r" \([^()]{2,80}\)")
_RELATIVE = re.compile(r", (?:which|who|whose) [^,]{3,80},")


def drop_clause(text: str, rng: random.Random) -> tuple[str, int, int] | None:
    """A parenthesis or a non-restrictive relative clause left out (a subset of the facts)."""
    m = _pick(rng, list(_PARENS.finditer(text)) + list(_RELATIVE.finditer(text)))
    if m is None:
        return None
    # " (a parenthesis)" goes whole; ", which ...," leaves the space before the next word
    new = text[: m.start()] + (" " if m.group(0).startswith(",") else "") + text[m.end() :].lstrip()
    new = re.sub(r"\s+([.,;])", r"\1", new)
    return new, max(0, m.start() - 1), min(len(new), m.start() + 1)


_FRONTED = re.compile(
    r"^(?P<p>(?:In|On|During|After|Before|By|Since|At) [^,]{2,40}), "
    r"(?P<s>[a-z]?[A-Za-z].*?)(?P<e>[.!]?)$"
)


def move_clause(text: str) -> tuple[str, int, int] | None:
    """ "In 2010, the firm opened a plant." -> "The firm opened a plant in 2010."."""
    m = _FRONTED.match(text)
    if m is None or "," in m.group("s"):  # the phrase would attach to a later clause
        return None
    body = m.group("s")
    phrase = m.group("p")
    phrase = phrase[0].lower() + phrase[1:]
    new = f"{_lead_upper(body)} {phrase}{m.group('e')}"
    return new, 0, len(new)


REWORDINGS: dict[str, Callable[..., tuple[str, int, int] | None]] = {
    "synonym": synonym,
    "not_form": not_form,
    "than_flip": lambda t, rng: than_swap(t, flip=True),
    "passive": lambda t, rng: passive(t),
    "number_words": number_words,
    "approximate": approximate,
    "abbreviate": abbreviate,
    "drop_clause": drop_clause,
    "move_clause": lambda t, rng: move_clause(t),
}


def all_rewordings(text: str, rng: random.Random) -> Iterator[Variant]:
    """Every rewording that applies to ``text`` (one variant per category), in a fixed order."""
    for name, fn in REWORDINGS.items():
        out = fn(text, rng)
        if out is not None and out[0] != text:
            yield Variant(out[0], name, 1, out[1], out[2])
