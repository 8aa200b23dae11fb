"""Which language a text is in: a rule with no data files and no dependencies.

The bundled cross-encoder and the lexical analysis read English only; :mod:`._language` decides
what a judge says on another language, from what :func:`detect` and :func:`context_language`
find here. Some tens of microseconds for an answer, and a long text is sampled
(:data:`SAMPLE_CHARS`). Not English needs positive evidence, so short answers, figures, names,
code, tables and JSON records count as English.

1. Script. A text whose letters outside the Latin script number at least
   :data:`MIN_SCRIPT_LETTERS` and make at least :data:`SCRIPT_SHARE` of its letters is in that
   script's language; a Han, kana or Hangul character counts :data:`CJK_WEIGHT` letters (it is
   a syllable or a word). Han with kana is Japanese, Han alone Chinese, Hangul Korean; other
   scripts are named as such ("a Cyrillic-script language"). IPA transcriptions count for none.
2. Latin script. English evidence: the lexicon's ``STOPWORDS`` less one-letter words,
   contraction pieces and the words that are function words of another language too ("in",
   "was", "also" count for neither side). Foreign evidence, only in lower case (a capitalised
   word may be a name: "Los Angeles", "De Niro"): the function words of 20 languages
   (:data:`FUNCTION_WORDS`, less :data:`ENGLISH_LOOKALIKES` such as "die", "son", "et al."),
   and, when the text uses capitals at all, words with a letter beyond ASCII ("została",
   "yaklaşık"; not :data:`ENGLISH_LOANWORDS` such as "café"). A text is foreign when its
   foreign evidence holds at least :data:`MIN_FOREIGN_WORDS` different words, is more than
   :data:`FOREIGN_RATIO` times its English evidence and makes at least :data:`FOREIGN_SHARE` of
   its Latin-script words; it is named after the language most of that evidence points to.
3. Otherwise English.

Known limits: a foreign sentence of a few words is English ("Das ist gut."), and an English
sentence that is mostly a foreign name or quotation may not be ("Morocco has a fund called Fonds
spécial pour la gestion de la pandémie du Coronavirus").
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ._lexicon import STOPWORDS

__all__ = [
    "ENGLISH",
    "FUNCTION_WORDS",
    "Language",
    "context_language",
    "detect",
    "spaceless",
]

#: Characters of a text that :func:`detect` reads: all of a shorter text, else this many in
#: :data:`SAMPLE_SLICES` slices spread evenly over it (a 200,000-character context costs no
#: more than a 4,000-character one).
SAMPLE_CHARS = 4_000
SAMPLE_SLICES = 8
#: Share of a text's letters in one other script that makes it that script's language...
SCRIPT_SHARE = 0.6
#: ...given at least this many such letters (a "μ" alone decides nothing).
MIN_SCRIPT_LETTERS = 2
#: What one Han, kana or Hangul character weighs against one Latin letter.
CJK_WEIGHT = 2
#: Different lower-case foreign words needed before a Latin-script text is called foreign ("le"
#: fifty times in a table of "le - 5" rocket engines is one word)...
MIN_FOREIGN_WORDS = 3
#: ...how many times its English function words they must exceed...
FOREIGN_RATIO = 4
#: ...and what share of its Latin-script words they must make (function words are a third of
#: running text; a table of names has a few "de", "la" or "josé" in hundreds of words).
FOREIGN_SHARE = 0.15


@dataclass(frozen=True)
class Language:
    """A text's language: ``code`` (ISO 639-1, or ISO 15924 for a script: ``Cyrl``) and a
    name for a sentence ("German", "a Cyrillic-script language")."""

    code: str
    name: str

    @property
    def english(self) -> bool:
        return self.code == "en"


ENGLISH = Language("en", "English")

#: Frequent function words of Latin-script languages, lower case, as the languages have them.
#: A word that is also an English function word (``STOPWORDS``: "in", "was", "also") or an
#: ordinary English word (:data:`ENGLISH_LOOKALIKES`: "die", "son", "pour") counts for neither.
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    code: frozenset(words.split())
    for code, words in {
        "de": """der des dem den die das und ist nicht mit ein eine einen einem einer eines zu
            von sich auf für wird wurde wurden sind bei oder auch werden nach aus wie im noch
            nur über ich wir ihr ihre ihren sein seine seiner hat haben kann können dass daß
            zum zur vom beim dieser diese dieses gegen zwischen sowie bereits jedoch wenn weil
            aber durch unter vor sehr schon hatte hatten war waren als an in so also was will
            um man heute etwa rund immer wieder dann dort hier jetzt mehr viel viele einige alle
            jeder jede kein keine ohne seit bis während damit sondern ob denn doch nun ihm ihn
            uns mich dich mir dir habe hast bist wäre würde soll sollte muss müssen worden
            gibt""",
        "fr": """le la les de des du est et une un que qui dans pour pas sur au aux avec ce cette
            ces sont ont été il elle ils elles nous vous leur leurs mais où par se sa ses
            était être avait fait comme aussi très peut selon entre lors dont ne qu je son
            plus en près aujourd hui encore toujours tout tous toute toutes autre autres même
            sans sous chez avant après depuis pendant ainsi alors donc bien moins beaucoup peu
            ici là lui eux moi toi notre votre vos mes quand comment pourquoi quel quelle
            quels avons avez sommes êtes étaient sera seront peuvent doit faut""",
        "es": """el la los las de del que en por con para una un su sus se al lo como más pero
            fue ha han este esta está están también muy sobre hasta desde cuando donde todo
            ser era entre ya porque según sido tiene yo le les nos sin son hoy unos unas ahora
            siempre nunca antes después durante mientras bajo contra cada otro otra otros
            mismo misma tanto mucho muchos poco algo nada aquí allí él ella ellos ellas
            nosotros usted qué cómo cuál había fueron será puede pueden debe tienen eran
            estaba estos estas esos esas ese esa eso aunque sino""",
        "it": """il di che la per un una del della dei delle nel nella con sono da gli le si al
            alla anche più ma stato stata questo questa essere ha hanno tra fra degli dalla
            ci non come poi dopo ogni molto ancora sempre dove così perché già tutto tutti
            quale quello questi loro suo sua suoi cui erano sia stati fatto avere viene""",
        "pt": """os de da dos das em um uma para com não que se por mais foi são tem ao aos na
            nos pelo pela mas ele ela seu sua também já está ser muito sobre quando onde
            entre do no as depois pode qualquer ainda sempre isso isto esse essa seus suas
            pelos pelas num numa há às ou quem qual""",
        "nl": """de het een en van dat op te zijn voor met niet aan er maar om ook als bij
            worden wordt werd heeft hebben naar uit nog dit deze wat zich door wel geen meer
            tot is of die volgens ze hij zij je hun haar zo nu al tegen sinds tijdens waar hoe
            wie welke zal zou kunnen moet moeten werden waren heb ben bent""",
        "sv": """och att det som är på för med av inte har de om ett jag hon sig så kan vid
            också eller från över efter hade detta eftersom mycket den men till under var""",
        "da": """og det er til på som af med ikke har de jeg fra vi kan om sig også eller
            efter blev ble være vil skal hun dette deres meget den men for at var""",
        "fi": """ja on ei että se oli hän ovat mutta tai kun myös joka tämä ole olla jo
            sekä kuin mukaan vuonna""",
        "pl": """się nie że jest jak po ale co tak za od są był była było jego jej przez dla
            tym oraz czy już tylko jako może będzie który która które do na to""",
        "cs": """se je že jsou jako ale pro tak však jeho které který která bylo byl být také
            podle při nebo jsem už jen sa aj ako ktorý sú bol pre na do to by""",
        "hr": """je su za od koji koja kao ali ili nije bio bila što se da na""",
        "ro": """și în cu pe din care că pentru nu mai este sunt fost lui unei unui fi sau dar
            prin această acest ale la de""",
        "hu": """az és hogy nem egy meg van már csak volt még mint ez azt ezt vagy pedig lesz
            kell is de""",
        "tr": """ve bir bu için ile olarak çok daha olan gibi ama sonra kadar ise değil da
            de en""",
        "id": """yang dan di ini itu dengan untuk dari dalam tidak akan pada juga ke adalah
            ada oleh atau bisa sudah telah karena kami mereka saya kita seperti tersebut
            lebih""",
        "vi": """của và là các có được trong cho những với không này một người đã để khi đến
            từ về cũng như theo nhiều""",
        "tl": """ang ng mga sa ay ito hindi siya kung niya naman lang at""",
        "sw": """ya wa kwa za katika ni kuwa hii cha pia lakini na""",
        "cy": """yn yr mae ei ar gan wedi ac bod ond fel hyn sydd roedd eu ddim cyn gyda
            hefyd oedd ydy nid ni fod am""",
    }.items()
}
#: Foreign function words that are also ordinary English words, or pieces of English text
#: ("et al.", ".com", "co-founder", "pre-order", "I've", "Wi-Fi", "im" for "I'm", "qual 2" in a
#: race table, "sous vide", "sans serif"): they count for neither language.
ENGLISH_LOOKALIKES = frozenset(
    """
    ac al ale algo après avant bio bod care co com come den die din dir dont door encore er
    era et fi ha im kung ma med men met mint mucho nada no non nun par plus pour pre pro
    qual sans sera sin son sous sus til till todo tot tout van var ve vid volt war ya yo yr
    """.split()
)
#: Lower-case words with a letter beyond ASCII that English has borrowed as they are: they are
#: not evidence of another language ("crème brûlée at the café").
ENGLISH_LOANWORDS = frozenset(
    """
    café cafés crème brûlée entrée entrées jalapeño jalapeños piñata rosé sauté sautéed purée
    flambé frappé soufflé consommé risqué touché cliché clichés naïve naïveté résumé résumés
    fiancé fiancée protégé exposé décor façade déjà señor señora niño über doppelgänger
    smörgåsbord açaí crêpe crêpes pâté tête fête hôtel coupé lamé mêlée éclair éclairs
    """.split()
)
_LANGUAGE_NAMES = {
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
    "sv": "Swedish",
    "da": "Danish or Norwegian",
    "fi": "Finnish",
    "pl": "Polish",
    "cs": "Czech or Slovak",
    "hr": "Croatian, Serbian or Bosnian",
    "ro": "Romanian",
    "hu": "Hungarian",
    "tr": "Turkish",
    "id": "Indonesian or Malay",
    "vi": "Vietnamese",
    "tl": "Tagalog",
    "sw": "Swahili",
    "cy": "Welsh",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "el": "Greek",
    "he": "Hebrew",
    "th": "Thai",
    "hy": "Armenian",
    "ka": "Georgian",
    "Cyrl": "a Cyrillic-script language",
    "Arab": "an Arabic-script language",
    "Deva": "a Devanagari-script language",
    "Beng": "a Bengali-script language",
    "Indic": "a language in an Indic script",
    "Ethi": "a language in Ethiopic script",
    "is": "Icelandic",
    "lt": "Lithuanian",
    "lv": "Latvian",
    "Latn": "a language other than English",
    "other": "a language in a non-Latin script",
}
#: Letters that point to one language when its function words are not in a text.
_SIGNATURES = {
    **dict.fromkeys("łąęśźżń", "pl"),
    **dict.fromkeys("řěů", "cs"),
    **dict.fromkeys("şğı", "tr"),
    **dict.fromkeys("őű", "hu"),
    **dict.fromkeys("țșă", "ro"),
    **dict.fromkeys("å", "sv"),
    **dict.fromkeys("æø", "da"),
    **dict.fromkeys("ðþ", "is"),
    **dict.fromkeys("ėųį", "lt"),
    **dict.fromkeys("āēīūļņķģ", "lv"),
    **dict.fromkeys("ñ", "es"),
    **dict.fromkeys("ãõ", "pt"),
    **dict.fromkeys("ß", "de"),
    **dict.fromkeys("ơưđạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ", "vi"),
}
_FOREIGN_SHARED = frozenset().union(*FUNCTION_WORDS.values())
#: English function words: the lexicon's, less those shared with another language and less
#: one-letter words and contraction pieces ("don't" gives "t").
ENGLISH_WORDS = frozenset(
    w for w in STOPWORDS - _FOREIGN_SHARED if len(w) > 1 and w not in {"ll", "re", "ve"}
)
#: Lower-case word -> the languages it is a function word of (English ones excluded).
_FOREIGN: dict[str, tuple[str, ...]] = {}
for _code, _words in FUNCTION_WORDS.items():
    for _w in _words - STOPWORDS - ENGLISH_LOOKALIKES:
        _FOREIGN[_w] = (*_FOREIGN.get(_w, ()), _code)

#: (first code point, script) of each run of letters outside the Latin script; a code point
#: belongs to the last run starting at or before it. "Latn" runs close the others.
_SCRIPT_RUNS: tuple[tuple[int, str], ...] = (
    (0x0000, "Latn"),
    (0x0370, "el"),
    (0x0400, "Cyrl"),
    (0x0530, "hy"),
    (0x0590, "he"),
    (0x0600, "Arab"),
    (0x0700, "other"),
    (0x0750, "Arab"),
    (0x0780, "other"),
    (0x08A0, "Arab"),
    (0x0900, "Deva"),
    (0x0980, "Beng"),
    (0x0A00, "Indic"),
    (0x0E00, "th"),
    (0x0E80, "other"),
    (0x10A0, "ka"),
    (0x1100, "Hang"),
    (0x1200, "Ethi"),
    (0x13A0, "other"),
    (0x1C80, "Cyrl"),
    (0x1C90, "other"),
    (0x1D00, "Latn"),
    (0x1DC0, "other"),
    (0x1E00, "Latn"),
    (0x1F00, "el"),
    (0x2000, "Latn"),
    (0x2C00, "other"),
    (0x2C60, "Latn"),
    (0x2C80, "other"),
    (0x2DE0, "Cyrl"),
    (0x2E00, "other"),
    (0x2E80, "Hani"),
    (0x3040, "Kana"),
    (0x3100, "Hani"),
    (0x3130, "Hang"),
    (0x3190, "Hani"),
    (0x31F0, "Kana"),
    (0x3200, "Hani"),
    (0xA000, "other"),
    (0xA640, "Cyrl"),
    (0xA6A0, "other"),
    (0xA720, "Latn"),
    (0xA800, "other"),
    (0xA960, "Hang"),
    (0xA980, "other"),
    (0xAB30, "Latn"),
    (0xAB70, "other"),
    (0xAC00, "Hang"),
    (0xD7B0, "Hang"),
    (0xD800, "other"),
    (0xF900, "Hani"),
    (0xFB00, "Latn"),
    (0xFB1D, "he"),
    (0xFB50, "Arab"),
    (0xFE00, "other"),
    (0xFE70, "Arab"),
    (0xFF00, "Latn"),
    (0xFF66, "Kana"),
    (0xFFA0, "Hang"),
    (0xFFE0, "other"),
    (0x20000, "Hani"),
    (0x40000, "other"),
)
_RUN_STARTS = tuple(start for start, _ in _SCRIPT_RUNS)
_CJK = frozenset({"Hani", "Kana", "Hang"})
_LETTERS = re.compile(r"[^\W\d_]+")
#: IPA and phonetic letters: a word with one is a transcription, evidence of no language.
_PHONETIC = re.compile("[\u0250-\u02ff\u1d00-\u1dbf]")


def _script(char: str) -> str:
    return _SCRIPT_RUNS[bisect_right(_RUN_STARTS, ord(char)) - 1][1]


def _language(code: str) -> Language:
    return Language(code, _LANGUAGE_NAMES[code])


def _sample(texts: Sequence[str]) -> str:
    """All of ``texts`` (joined by newlines) up to :data:`SAMPLE_CHARS`, else
    :data:`SAMPLE_SLICES` slices spread evenly over them."""
    total = sum(len(t) for t in texts)
    if total <= SAMPLE_CHARS:
        return "\n".join(texts)
    size = SAMPLE_CHARS // SAMPLE_SLICES
    ends: list[int] = []
    for t in texts:
        ends.append((ends[-1] if ends else 0) + len(t))
    pieces = []
    for k in range(SAMPLE_SLICES):
        at = (total - size) * k // (SAMPLE_SLICES - 1)
        i = bisect_right(ends, at)
        start = at - (ends[i - 1] if i else 0)
        pieces.append(texts[i][start : start + size])
    return "\n".join(pieces)


def _detect(sample: str) -> Language:
    if not sample.isascii() and not unicodedata.is_normalized("NFC", sample):
        sample = unicodedata.normalize("NFC", sample)
    latin = latin_words = capitalised = english = foreign = accented = 0
    kinds = set()  # the different foreign words
    scripts: Counter[str] = Counter()  # letters (weighted) outside the Latin script
    votes: Counter[str] = Counter()  # which language the foreign evidence points to
    for word, n in Counter(_LETTERS.findall(sample)).items():
        if word.isascii():
            latin += n * len(word)
        elif _PHONETIC.search(word):  # a transcription: "[ɡiˈʝeɾmo ðel ˈtoɾo]"
            continue
        else:
            other = 0
            for ch in word:
                script = _script(ch)
                if script == "Latn":
                    latin += n
                else:
                    scripts[script] += n * (CJK_WEIGHT if script in _CJK else 1)
                    other += 1
            if other:
                continue
        latin_words += n
        lower = word.lower()
        if lower in ENGLISH_WORDS:
            english += n
        elif word != lower:  # a name, an acronym, or the first word of a sentence
            capitalised += n
        elif word in _FOREIGN:
            foreign += n
            kinds.add(word)
            for code in _FOREIGN[word]:
                votes[code] += n
        elif len(word) > 1 and not word.isascii() and word not in ENGLISH_LOANWORDS:
            accented += n
            kinds.add(word)
            for code in {_SIGNATURES[ch] for ch in word if ch in _SIGNATURES}:
                votes[code] += n
    if scripts:
        script, weight = scripts.most_common(1)[0]
        if script in _CJK:  # Chinese and Japanese share Han; Korean may mix Han with Hangul
            weight = sum(scripts[s] for s in _CJK)
        if weight >= MIN_SCRIPT_LETTERS and weight >= SCRIPT_SHARE * (
            latin + sum(scripts.values())
        ):
            if script in _CJK:
                if scripts["Kana"]:
                    return _language("ja")
                return _language("ko" if scripts["Hang"] > scripts["Hani"] else "zh")
            return _language(script)
    if capitalised:  # else names are in lower case too ("josé calderón" in a table)
        foreign += accented
    else:
        kinds &= _FOREIGN.keys()
    if (
        len(kinds) >= MIN_FOREIGN_WORDS
        and foreign > FOREIGN_RATIO * english
        and foreign >= FOREIGN_SHARE * latin_words
    ):
        if not votes:
            return _language("Latn")
        best = max(votes.values())
        # ties go to the language named first in _LANGUAGE_NAMES
        return _language(next(c for c in _LANGUAGE_NAMES if votes[c] == best))
    return ENGLISH


def detect(text: str) -> Language:
    """The language of ``text`` by the rule in this module's docstring."""
    return _detect(_sample((text,)))


def context_language(context: tuple[str, ...]) -> Language:
    """The language of a context, its passages read as one text (a context is read again on
    every check of a regenerate loop, so the last few samples are remembered: by their text,
    at most :data:`SAMPLE_CHARS` each, never the whole context)."""
    return _sample_language(_sample(context))


@lru_cache(maxsize=32)
def _sample_language(sample: str) -> Language:
    return _detect(sample)


def spaceless(char: str) -> bool:
    """Whether ``char`` is of a script written without spaces between words (Chinese,
    Japanese, Korean's Han and kana, Thai)."""
    return _script(char) in _CJK or _script(char) == "th"
