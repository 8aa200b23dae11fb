"""Word lists shared by the embedded judges: function words, negations, opposites, the scale
words and units of figures.

Plain data, no logic. Lists are folded (lower case, no accents) as :func:`..text.fold` does.
"""

from __future__ import annotations

import re

from ..text import STOPWORDS

__all__ = [
    "AMBIGUOUS_UNITS",
    "CALENDAR",
    "CALENDAR_NAMES",
    "FIGURE_UNITS",
    "FIGURE_UNIT_LETTERS",
    "FIGURE_UNIT_PAIRS",
    "FIGURE_UNIT_RATIOS",
    "FIRST_PERSON",
    "FREQUENCY_PERIODS",
    "HEDGE_WORDS",
    "MEDICAL_CRITICAL",
    "MONEY_BEFORE",
    "MONTHS",
    "MONTH_NAMES",
    "NEGATIONS",
    "NUMBER_WORDS",
    "OPPOSITE_PAIRS",
    "ORDINALS",
    "PARTIALS",
    "PLAIN_CALENDAR",
    "SCALE_LETTERS",
    "SCALE_WORDS",
    "STOPWORDS",
    "SUPERLATIVES",
    "TITLES",
    "UNITS",
    "UNIT_FACTORS",
    "UNIT_KINDS",
    "UNIT_SIGNS",
    "UNIVERSALS",
    "WEEKDAY_NAMES",
]

# Function words: never content, never evidence (defined in ..text, shared with the
# citation check).
NEGATIONS = frozenset(
    """
    not no never none nobody nothing nowhere neither nor without cannot cant dont doesnt didnt
    isnt arent wasnt werent wont wouldnt shouldnt couldnt hasnt havent hadnt aint mustnt neednt
    n't unable fail fails failed lack lacks lacked
    """.split()
)
NUMBER_WORDS = {
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
#: Words before a round figure that make it approximate, and which way the true figure may
#: lie: "over 1,800" may stand for 1,821, "nearly 2,000" for 1,910, "about 50" for 48
#: (see ``_checks.approximates``).
HEDGES = {
    **dict.fromkeys(["over", "above", "exceeding", "more than"], "over"),
    **dict.fromkeys(["under", "below", "nearly", "almost", "less than", "fewer than"], "under"),
    **dict.fromkeys(
        ["about", "around", "approximately", "roughly", "some", "circa", "estimated"], "about"
    ),
}

# Unit spellings that name the same thing; both sides are canonicalised before comparing.
UNITS = {
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
    "μg": "mcg",  # folding turns the micro sign into the Greek letter
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
#: Month and weekday abbreviations, folded, to the full name ("Aug 18" is "August 18"): read so
#: only where the text capitalises them ("Sat", not "sat"). :data:`PLAIN_CALENDAR` holds those
#: that are no common English word, read so in any case.
CALENDAR = {
    "jan": "january",
    "feb": "february",
    "mar": "march",
    "apr": "april",
    "jun": "june",
    "jul": "july",
    "aug": "august",
    **dict.fromkeys(["sep", "sept"], "september"),
    "oct": "october",
    "nov": "november",
    "dec": "december",
    "mon": "monday",
    **dict.fromkeys(["tue", "tues"], "tuesday"),
    "wed": "wednesday",
    **dict.fromkeys(["thu", "thur", "thurs"], "thursday"),
    "fri": "friday",
    "sat": "saturday",
    "sun": "sunday",
}
PLAIN_CALENDAR = {
    k: v for k, v in CALENDAR.items() if k not in {"jan", "mar", "wed", "sat", "sun", "mon"}
}
#: Words after a number that scale it, as powers of ten: "4 million" is 4,000,000, "two hundred
#: thousand" 200,000 (see ``_figures.read_figures``).
SCALE_WORDS = {
    "hundred": 2,
    "thousand": 3,
    **dict.fromkeys(["million", "mn", "mln", "mio"], 6),
    **dict.fromkeys(["billion", "bn", "bln"], 9),
    **dict.fromkeys(["trillion", "trn"], 12),
}
#: Scale letters, matched as written (case matters): "5M" is 5 million; "k", "K", "b" and "B"
#: scale only a sum of money ("$5k", "€2B"; a "5K run" is no 5,000); a lower-case "m" is a
#: million beside money ("$5m") and elsewhere either metres or millions ("330 m", "4m").
SCALE_LETTERS = {"M": 6, "m": 6, "k": 3, "K": 3, "b": 9, "B": 9}

#: Unit words after a number, folded, to a canonical unit: spellings, plurals and abbreviations
#: of one unit meet ("40 L", "40 litres"). "in" (inch) and "s" (second) are left out: after a
#: number they are mostly words ("1 in 4", "the 1990s").
FIGURE_UNITS = {
    # length
    **dict.fromkeys(["metre", "metres", "meter", "meters"], "m"),
    **dict.fromkeys(["km", "kms", "kilometre", "kilometres", "kilometer", "kilometers"], "km"),
    **dict.fromkeys(["cm", "centimetre", "centimetres", "centimeter", "centimeters"], "cm"),
    **dict.fromkeys(["mm", "millimetre", "millimetres", "millimeter", "millimeters"], "mm"),
    **dict.fromkeys(["ft", "foot", "feet"], "ft"),
    **dict.fromkeys(["inch", "inches"], "in"),
    **dict.fromkeys(["mi", "mile", "miles"], "mi"),
    **dict.fromkeys(["yd", "yds", "yard", "yards"], "yd"),
    # volume
    **dict.fromkeys(["l", "ltr", "litre", "litres", "liter", "liters"], "l"),
    **dict.fromkeys(["ml", "millilitre", "millilitres", "milliliter", "milliliters"], "ml"),
    **dict.fromkeys(["gal", "gals", "gallon", "gallons"], "gal"),
    # mass
    **dict.fromkeys(["gram", "grams", "gramme", "grammes"], "g"),
    **dict.fromkeys(["kg", "kgs", "kilogram", "kilograms", "kilo", "kilos"], "kg"),
    **dict.fromkeys(["mg", "milligram", "milligrams"], "mg"),
    **dict.fromkeys(["mcg", "µg", "μg", "ug", "microgram", "micrograms"], "mcg"),
    **dict.fromkeys(["lb", "lbs"], "lb"),
    **dict.fromkeys(["pound", "pounds"], "pound"),  # mass or money: see AMBIGUOUS_UNITS
    **dict.fromkeys(["oz", "ounce", "ounces"], "oz"),
    **dict.fromkeys(["ton", "tons", "tonne", "tonnes"], "t"),
    # time
    **dict.fromkeys(["sec", "secs", "second", "seconds"], "s"),
    **dict.fromkeys(["min", "mins", "minute", "minutes"], "min"),
    **dict.fromkeys(["hr", "hrs", "hour", "hours"], "h"),
    **dict.fromkeys(["day", "days"], "day"),
    **dict.fromkeys(["wk", "wks", "week", "weeks"], "week"),
    **dict.fromkeys(["month", "months"], "month"),
    **dict.fromkeys(["yr", "yrs", "year", "years"], "year"),
    **dict.fromkeys(["decade", "decades"], "decade"),
    **dict.fromkeys(["century", "centuries"], "century"),
    # speed
    "mph": "mph",
    **dict.fromkeys(["kph", "kmh"], "kmh"),
    # temperature
    **dict.fromkeys(["celsius", "centigrade"], "c"),
    "fahrenheit": "f",
    **dict.fromkeys(["degree", "degrees"], "deg"),
    # shares
    **dict.fromkeys(["percent", "pct"], "%"),
    "pp": "pp",
    # money
    **dict.fromkeys(["dollar", "dollars"], "dollar"),
    "usd": "usd",
    "aud": "aud",
    "cad": "cad",
    "nzd": "nzd",
    "hkd": "hkd",
    "sgd": "sgd",
    **dict.fromkeys(["euro", "euros", "eur"], "eur"),
    **dict.fromkeys(["gbp", "sterling"], "gbp"),
    **dict.fromkeys(["yen", "jpy"], "jpy"),
    **dict.fromkeys(["yuan", "renminbi", "rmb", "cny"], "cny"),
    **dict.fromkeys(["rupee", "rupees", "inr"], "inr"),
    **dict.fromkeys(["franc", "francs", "chf"], "chf"),
    **dict.fromkeys(["cent", "cents"], "cent"),
    **dict.fromkeys(["penny", "pence"], "pence"),
}
#: Unit letters matched as written, where the other case means something else ("5 G", "5 l").
FIGURE_UNIT_LETTERS = {"L": "l", "l": "l", "g": "g"}
#: Two-word units, folded: the pair is read before its first word alone.
FIGURE_UNIT_PAIRS = {
    ("per", "cent"): "%",
    **dict.fromkeys(
        [("percentage", "point"), ("percentage", "points"), ("percent", "points")], "pp"
    ),
    **dict.fromkeys([("degrees", "celsius"), ("degrees", "centigrade"), ("degrees", "c")], "c"),
    **dict.fromkeys([("degree", "celsius"), ("degree", "c")], "c"),
    **dict.fromkeys([("degrees", "fahrenheit"), ("degrees", "f"), ("degree", "fahrenheit")], "f"),
    **dict.fromkeys([("us", "dollars"), ("u.s", "dollars"), ("american", "dollars")], "usd"),
    **dict.fromkeys([("australian", "dollars"), ("canadian", "dollars")], "dollar"),
}
#: Units written as a ratio of two ("km/h", folded; "miles per hour", as canonical units): read
#: before either word alone.
FIGURE_UNIT_RATIOS = {("km", "h"): "kmh", ("mi", "h"): "mph"}
#: Money written before its number ("$5", "US$ 5", "USD 5"), as written (signs) or folded (codes).
MONEY_BEFORE = {
    "$": "dollar",
    "US$": "usd",
    "A$": "aud",
    "AU$": "aud",
    "C$": "cad",
    "CA$": "cad",
    "NZ$": "nzd",
    "HK$": "hkd",
    "S$": "sgd",
    "€": "eur",
    "£": "gbp",
    "¥": "yen-yuan",
    "₹": "inr",
    **{code: code for code in ("usd", "eur", "gbp", "jpy", "cny", "inr", "chf", "aud", "cad")},
    "rs": "inr",
}
#: Signs written right after a number.
UNIT_SIGNS = {
    "%": "%",
    **dict.fromkeys(["°C", "ºC", "℃"], "c"),
    **dict.fromkeys(["°F", "ºF", "℉"], "f"),
    **dict.fromkeys(["°", "º"], "deg"),
}
#: Units that name more than one thing: each meaning agrees with the unit; a unit conflicts with
#: one of its own kind only when no meaning is shared ("5 pounds" agrees with "£5" and "5 lb").
AMBIGUOUS_UNITS = {
    "pound": ("lb", "gbp"),
    "deg": ("c", "f"),
    "dollar": ("usd", "aud", "cad", "nzd", "hkd", "sgd"),
    "yen-yuan": ("jpy", "cny"),
}
#: What each canonical unit measures: a figure written with another unit of the same kind
#: contradicts it ("40 gallons" for "40 litres"); of another kind it is left alone.
UNIT_KINDS = {
    **dict.fromkeys(["m", "km", "cm", "mm", "ft", "in", "mi", "yd"], "length"),
    **dict.fromkeys(["l", "ml", "gal"], "volume"),
    **dict.fromkeys(["g", "kg", "mg", "mcg", "lb", "oz", "t"], "mass"),
    **dict.fromkeys(["s", "min", "h", "day", "week", "month", "year", "decade", "century"], "time"),
    **dict.fromkeys(["c", "f"], "temperature"),
    **dict.fromkeys(["mph", "kmh"], "speed"),
    **dict.fromkeys(["%", "pp"], "share"),
    **dict.fromkeys(
        ["usd", "aud", "cad", "nzd", "hkd", "sgd", "eur", "gbp", "jpy", "cny", "inr", "chf"],
        "money",
    ),
    **dict.fromkeys(["cent", "pence"], "money"),
}
#: Each convertible unit in a base unit of its kind (metre, litre, gram, second): "330 m" and
#: "1,083 ft" state the same height. Temperatures convert by formula.
UNIT_FACTORS = {
    "m": 1.0,
    "km": 1000.0,
    "cm": 0.01,
    "mm": 0.001,
    "ft": 0.3048,
    "in": 0.0254,
    "mi": 1609.344,
    "yd": 0.9144,
    "l": 1.0,
    "ml": 0.001,
    "gal": 3.785411784,
    "g": 1.0,
    "kg": 1000.0,
    "mg": 0.001,
    "mcg": 0.000001,
    "lb": 453.59237,
    "oz": 28.349523125,
    "t": 1_000_000.0,
    "s": 1.0,
    "min": 60.0,
    "h": 3600.0,
    "day": 86_400.0,
    "week": 604_800.0,
    "month": 2_629_746.0,
    "year": 31_556_952.0,
    "decade": 315_569_520.0,
    "century": 3_155_695_200.0,
    "mph": 0.44704,
    "kmh": 1 / 3.6,
}

# Terms a Medical-domain sentence may not change: units, frequencies, routes.
MEDICAL_CRITICAL = frozenset(
    """
    mg mcg g kg ml l unit % daily once twice thrice weekly monthly hourly nightly bid tid qid qd
    qhs prn oral orally iv intravenous intravenously im intramuscular subcutaneous topical
    inhaled sublingual rectal tablet tablets capsule capsules dose doses injection injections
    """.split()
)
#: A frequency word of :data:`MEDICAL_CRITICAL` and the period that says it in other words:
#: "daily" is "a day" ("per day", "each day", "every day").
FREQUENCY_PERIODS = {
    "daily": "day",
    "weekly": "week",
    "monthly": "month",
    "hourly": "hour",
    "nightly": "night",
}
FIRST_PERSON = frozenset("i me my mine myself im ive id ill".split())


#: Words that reverse a statement when swapped for each other ("rises in the east" / "west").
#: Each pair is symmetric; matching is by Porter stem, so "increased" meets "decrease".
OPPOSITE_PAIRS = (
    ("east", "west"),
    ("north", "south"),
    ("eastern", "western"),
    ("northern", "southern"),
    ("above", "below"),
    ("inside", "outside"),
    ("before", "after"),
    ("earlier", "later"),
    # "sent earlier than Arcadia-1" where the context says "after Arcadia-1"
    ("earlier", "after"),
    ("later", "before"),
    ("increase", "decrease"),
    ("increasing", "decreasing"),
    ("rise", "fall"),
    ("raise", "lower"),
    ("gain", "loss"),
    ("more", "less"),
    ("more", "fewer"),
    ("most", "least"),
    ("higher", "lower"),
    ("highest", "lowest"),
    ("larger", "smaller"),
    ("largest", "smallest"),
    ("bigger", "smaller"),
    ("biggest", "smallest"),
    ("longer", "shorter"),
    ("longest", "shortest"),
    ("older", "younger"),
    ("oldest", "youngest"),
    ("faster", "slower"),
    ("fastest", "slowest"),
    ("deeper", "shallower"),
    ("deepest", "shallowest"),
    ("heavier", "lighter"),
    ("heaviest", "lightest"),
    ("wider", "narrower"),
    ("widest", "narrowest"),
    ("taller", "shorter"),
    ("tallest", "shortest"),
    ("thicker", "thinner"),
    ("warmer", "cooler"),
    ("hotter", "colder"),
    ("hottest", "coldest"),
    ("richer", "poorer"),
    ("easier", "harder"),
    ("louder", "quieter"),
    ("cheaper", "dearer"),
    ("maximum", "minimum"),
    ("allowed", "forbidden"),
    ("allowed", "prohibited"),
    ("permitted", "forbidden"),
    ("permitted", "prohibited"),
    ("legal", "illegal"),
    ("open", "closed"),
    ("opened", "closed"),
    ("accept", "reject"),
    ("accepted", "rejected"),
    ("approve", "deny"),
    ("approved", "denied"),
    ("win", "lose"),
    ("won", "lost"),
    ("victory", "defeat"),
    ("true", "false"),
    ("positive", "negative"),
    ("benign", "malignant"),
    ("always", "never"),
    ("success", "failure"),
    ("successful", "unsuccessful"),
    ("safe", "unsafe"),
    ("effective", "ineffective"),
    ("possible", "impossible"),
    ("likely", "unlikely"),
    ("agree", "disagree"),
    ("include", "exclude"),
    ("included", "excluded"),
    ("import", "export"),
    ("imports", "exports"),
    ("buy", "sell"),
    ("bought", "sold"),
    ("male", "female"),
    ("men", "women"),
    ("minority", "majority"),
    ("internal", "external"),
    ("public", "private"),
    ("inbound", "outbound"),
    ("ascending", "descending"),
    ("strong", "weak"),
    ("stronger", "weaker"),
    ("better", "worse"),
    ("best", "worst"),
    ("entry", "exit"),
    ("arrive", "depart"),
    ("arrival", "departure"),
    ("cheap", "expensive"),
    ("thriving", "struggling"),
    ("thrive", "struggle"),
    ("rich", "poor"),
    ("easy", "difficult"),
    ("good", "bad"),
    ("high", "low"),
    ("large", "small"),
    ("early", "late"),
    ("profit", "loss"),
    ("support", "oppose"),
    ("supported", "opposed"),
    ("pass", "fail"),
    ("passed", "failed"),
    ("present", "absent"),
    ("full", "empty"),
    ("wet", "dry"),
    ("optimistic", "pessimistic"),
    ("upward", "downward"),
)
#: The months in their order ("may" among them).
MONTH_NAMES = tuple(
    "january february march april may june july august september october november december".split()
)
#: The days of the week in their order.
WEEKDAY_NAMES = tuple("monday tuesday wednesday thursday friday saturday sunday".split())
#: Names of months and of days of the week: within each group, one for another changes a date
#: ("18 October" for "18 September", "every July" for "every August"), as an opposite does.
#: "May" is left out: folded, it is the modal.
CALENDAR_NAMES = (frozenset(MONTH_NAMES) - {"may"}, frozenset(WEEKDAY_NAMES))
#: The months, folded: a day written "18th" beside one is the figure 18 ("August 18th").
MONTHS = CALENDAR_NAMES[0] | {"may"}

# -- what :mod:`._structure` compares ------------------------------------------------------

#: Roles and titles a name can hold ("coach Dan Ferreira", "Reid, a former finance minister").
TITLES = frozenset(
    """
    founder cofounder co-founder chief executive ceo cfo coo cto chair chairman chairwoman
    chairperson president vice director manager head leader boss owner partner coach captain
    player striker goalkeeper defender midfielder substitute referee manager minister secretary
    senator governor mayor councillor councilor king queen prince princess emperor empress
    duke diplomat ambassador envoy architect engineer industrialist scientist researcher
    professor lecturer student teacher pupil doctor dr nurse surgeon physician pharmacist
    dentist consultant cashier clerk accountant lawyer judge attorney prosecutor barrister
    solicitor officer sergeant general colonel lieutenant commander admiral editor author
    writer novelist poet journalist reporter artist painter sculptor singer actor actress
    producer composer conductor chef analyst spokesman spokeswoman spokesperson inspector
    detective pilot economist historian archaeologist curator librarian farmer investor banker
    trader designer treasurer trustee chancellor dean provost principal bishop priest pope
    premier deputy speaker champion winner runner-up inventor explorer commissioner
    superintendent supervisor administrator landlord tenant vicar rector prime officer
    """.split()
)
#: Ordinal words; "13th" and the like are read from their digits.
ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19, "twentieth": 20,
}  # fmt: skip
SUPERLATIVES = frozenset(
    """
    best worst largest biggest smallest highest lowest longest shortest fastest slowest oldest
    youngest greatest least deepest tallest heaviest lightest richest poorest busiest earliest
    strongest weakest hottest coldest warmest wettest driest widest narrowest cheapest
    costliest loudest brightest
    """.split()
)
#: Words that hedge the verb or adjective right after them ("may reduce", "associated with
#: lower", "likely to cause"); an answer that keeps any of them keeps the hedge.
HEDGE_WORDS = frozenset(
    """
    may might could can possibly perhaps probably likely unlikely potentially associated
    linked suggest suggests suggested appear appears appeared seem seems seemed tend tends
    help helps helped would should potential possible risk
    """.split()
)
#: Quantifiers that claim everything, and those that claim a part.
UNIVERSALS = frozenset("all every everyone everybody everything always entire entirely".split())
PARTIALS = frozenset(
    """
    some most many several often usually mostly sometimes certain majority few part partly
    generally typically occasionally frequently rarely half
    """.split()
)


#: Conjunctions that join two statements of one sentence.
CLAUSE_CONJUNCTIONS = ("and", "but", "while", "although", "whereas", "however")
#: Where a clause of a sentence ends: punctuation inside the sentence, or a conjunction between
#: two statements (in any case). Read by the span narrowing's word features and by a record's
#: denial, which confirms only the negation of its own clause.
CLAUSE_BREAK = re.compile(
    r"[,;:()]\s*|\s+(?:" + "|".join(CLAUSE_CONJUNCTIONS) + r")\s+", re.IGNORECASE
)
