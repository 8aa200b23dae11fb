"""Word lists shared by the embedded judges: function words, negations, opposites.

Plain data, no logic. Lists are folded (lower case, no accents) as :func:`..text.fold` does.
"""

from __future__ import annotations

__all__ = [
    "FIRST_PERSON",
    "MEDICAL_CRITICAL",
    "NEGATIONS",
    "NUMBER_WORDS",
    "OPPOSITE_PAIRS",
    "STOPWORDS",
    "UNITS",
]

#: Function words: never content, never evidence.
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
#: (see ``_analysis.approximates``).
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
MEDICAL_CRITICAL = frozenset(
    """
    mg mcg g kg ml l unit % daily once twice thrice weekly monthly hourly nightly bid tid qid qd
    qhs prn oral orally iv intravenous intravenously im intramuscular subcutaneous topical
    inhaled sublingual rectal tablet tablets capsule capsules dose doses injection injections
    """.split()
)
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
)
