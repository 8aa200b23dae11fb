"""Language honesty: on an answer or a context in a language the bundled model and the lexicon do
not read, the default judge says so (notSure, with the reason) unless the lexical evidence alone
decides; English, with its names, figures, code, tables and JSON records, is left alone."""

from __future__ import annotations

import json
import time

import pytest

from ground_integrations import GroundednessChecker, Verdict
from ground_integrations.judges import HeuristicJudge, _language, _language_detection
from ground_integrations.judges._language_detection import (
    ENGLISH_WORDS,
    SAMPLE_CHARS,
    context_language,
    detect,
)
from ground_integrations.judges.cross_encoder import bundled_model
from ground_integrations.models import GroundednessRequest

from ..conftest import BANK, MAUNA_KEA

#: (language code, answer, context): the same facts in each language; the answer restates the
#: context in other words, so that no lexical evidence decides.
FOREIGN = [
    (
        "de",
        "Das Unternehmen entstand 1998 in Berlin und beschäftigt heute etwa 500 Menschen.",
        "Die Firma wurde 1998 in Berlin gegründet. Sie hat heute rund 500 Mitarbeiter und "
        "verkauft ihre Software an Banken in ganz Europa.",
    ),
    (
        "fr",
        "L'entreprise est née en 1998 à Paris et emploie aujourd'hui près de 500 personnes.",
        "La société a été fondée en 1998 à Paris. Elle compte aujourd'hui 500 salariés et vend "
        "ses logiciels aux banques de toute l'Europe.",
    ),
    (
        "es",
        "La compañía nació en 1998 en Madrid y hoy emplea a unas 500 personas.",
        "La empresa fue fundada en 1998 en Madrid. Hoy tiene unos 500 empleados y vende su "
        "software a bancos de toda Europa.",
    ),
    (
        "zh",
        "这家企业1998年创立于北京，现有员工约500人。",
        "该公司于1998年在北京成立。目前约有500名员工，并向欧洲各地的银行销售软件。",
    ),
    (
        "ja",
        "この企業は1998年に東京で創業し、今は500人ほどが働いています。",
        "この会社は1998年に東京で設立されました。現在約500人の従業員がいて、ヨーロッパ各地の銀行に"
        "ソフトウェアを販売しています。",
    ),
    (
        "Cyrl",
        "Предприятие появилось в 1998 году в Москве, и сегодня там работает около 500 человек.",
        "Компания была основана в 1998 году в Москве. Сейчас в ней около 500 сотрудников, и она "
        "продаёт программное обеспечение банкам по всей Европе.",
    ),
    (
        "Arab",
        "نشأت المؤسسة عام 1998 في القاهرة ويعمل فيها الآن نحو 500 شخص.",
        "تأسست الشركة عام 1998 في القاهرة. ويعمل بها اليوم حوالي 500 موظف وتبيع برامجها للبنوك في "
        "أنحاء أوروبا.",
    ),
]
ENGLISH_CONTEXT = (
    "The company was founded in 1998 in Berlin. Today it has about 500 employees and sells its "
    "software to banks across Europe."
)
#: One sentence each in more languages, for the detector alone.
MORE_FOREIGN = {
    "it": "La società è stata fondata nel 1998 a Milano e oggi conta circa 500 dipendenti.",
    "pt": "A empresa foi fundada em 1998 em Lisboa e hoje tem cerca de 500 funcionários.",
    "nl": "Het bedrijf werd in 1998 in Amsterdam opgericht en heeft nu ongeveer 500 werknemers.",
    "pl": "Firma została założona w 1998 roku w Warszawie i zatrudnia obecnie około 500 osób.",
    "sv": "Företaget grundades 1998 i Stockholm och har i dag cirka 500 anställda.",
    "tr": "Şirket 1998 yılında İstanbul'da kuruldu ve bugün yaklaşık 500 çalışanı var.",
    "id": "Perusahaan ini didirikan pada tahun 1998 di Jakarta dan saat ini memiliki sekitar 500 "
    "karyawan.",
    "vi": "Công ty được thành lập năm 1998 tại Hà Nội và hiện có khoảng 500 nhân viên.",
    "ko": "이 회사는 1998년 서울에서 설립되었으며 현재 약 500명의 직원이 있습니다.",
    "el": "Η εταιρεία ιδρύθηκε το 1998 στην Αθήνα και σήμερα απασχολεί περίπου 500 άτομα.",
    "he": "החברה נוסדה בשנת 1998 בתל אביב ומעסיקה כיום כ-500 עובדים.",
    "Deva": "कंपनी की स्थापना 1998 में दिल्ली में हुई थी और आज इसमें लगभग 500 कर्मचारी हैं।",
}
#: A data-to-text context: one JSON record, keys and values in English, names from anywhere.
RECORD = json.dumps(
    {
        "name": "Café de la Paix",
        "address": "5 Place de l'Opéra",
        "city": "Paris",
        "categories": "French, Restaurants, Cafés, Breakfast & Brunch",
        "hours": {"Monday": "7:0-23:0", "Sunday": "8:0-22:0"},
        "attributes": {"WiFi": "free", "OutdoorSeating": True, "RestaurantsTakeOut": False},
        "business_stars": 4.0,
        "review_info": [
            {
                "review_stars": 5.0,
                "review_date": "2022-01-09 19:18:59",
                "review_text": "Crème brûlée to die for, and the waiter, José, was lovely.",
            }
        ],
    }
)
ENGLISH = [
    "Yes.",
    "42.",
    "No, it is not.",
    "Berlin.",
    "The painting is by Juan de la Cruz y Pérez.",
    "Juan de la Cruz y Pérez.",
    "He moved from Los Angeles to Las Vegas and then to El Paso.",
    "Dr. José María Fernández de la Vega and Sr. João Gonçalves da Silva attended.",
    "The Hockey Hall of Fame (Temple de la renommée du hockey in French) is in Toronto.",
    "Wałęsa was born in Popowo and worked at the Gdańsk shipyard in Łódź.",
    "Guðni Th. Jóhannesson met Katrín Jakobsdóttir in Reykjavík.",
    "The novel «Война и мир» was written by Tolstoy in 1869.",
    "李白 (Li Bai) was a poet of the Tang dynasty.",
    "Guillermo del Toro Gómez ([ɡiˈʝeɾmo ðel ˈtoɾo]; born October 9, 1964) is a director.",
    "The café serves crème brûlée and rosé.",
    "Smith et al. (2019) and Jones et al. (2020) found the same effect.",
    'Its slogan, "Vorsprung durch Technik", means progress through technology.',
    "for i in range(10):\n    print(i)\n    del x[i]",
    "var x = document.getElementById('app'); if (x) { x.style.display = 'none'; }",
    "SELECT name, city FROM users WHERE age > 30 ORDER BY name;",
    "| Player | Club | Goals |\n|---|---|---|\n| José Calderón | Real Madrid | 12 |\n"
    "| Zlatan Ibrahimović | Malmö FF | 9 |",
    RECORD,
    MAUNA_KEA,
    BANK,
]


# -- the detector ------------------------------------------------------------------------------


@pytest.mark.parametrize("code,answer,context", FOREIGN, ids=[f[0] for f in FOREIGN])
def test_detects_each_language_of_answer_and_context(code, answer, context) -> None:
    assert detect(answer).code == code and detect(context).code == code
    assert context_language((context,)).code == code
    assert not detect(answer).english


@pytest.mark.parametrize("code", sorted(MORE_FOREIGN))
def test_detects_more_languages(code) -> None:
    assert detect(MORE_FOREIGN[code]).code == code


@pytest.mark.parametrize("text", ENGLISH, ids=range(len(ENGLISH)))
def test_english_with_names_figures_code_and_tables_is_english(text) -> None:
    assert detect(text).english, detect(text)


def test_a_json_record_context_is_english() -> None:
    assert context_language((RECORD,)).english
    assert context_language((RECORD, MAUNA_KEA, BANK)).english


def test_a_word_of_both_languages_counts_for_neither() -> None:
    foreign = set().union(*_language_detection.FUNCTION_WORDS.values())
    assert not ENGLISH_WORDS & foreign
    lookalikes = _language_detection.ENGLISH_LOOKALIKES
    assert not _language_detection._FOREIGN.keys() & (ENGLISH_WORDS | lookalikes)
    assert "the" in ENGLISH_WORDS and "in" not in ENGLISH_WORDS  # "in" is German and Dutch too


def test_a_long_context_is_sampled() -> None:
    german = FOREIGN[0][2]
    huge = (ENGLISH_CONTEXT + " ") * 4_000  # about 500,000 characters
    assert len(_language_detection._sample((huge,))) < SAMPLE_CHARS + 16
    started = time.perf_counter()
    assert detect(huge).english
    assert context_language((huge, german * 10)).english  # mostly English
    assert not context_language(((german + " ") * 4_000,)).english
    assert time.perf_counter() - started < 0.5


def test_a_short_answer_takes_well_under_a_millisecond() -> None:
    answer = "The company was founded in 1998 in Berlin and today has about 500 employees. " * 5
    started = time.perf_counter()
    for _ in range(100):
        detect(answer)
    assert (time.perf_counter() - started) / 100 < 0.001


# -- what the default judge says ---------------------------------------------------------------

needs_model = pytest.mark.skipif(bundled_model() is None, reason="no bundled model")


def language_checked(result) -> bool:
    return (result.judge.decided_by or "").startswith(("language check", "lexical evidence"))


@needs_model
@pytest.mark.parametrize("code,answer,context", FOREIGN, ids=[f[0] for f in FOREIGN])
@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_a_foreign_answer_and_context_are_not_sure(
    default_checker, code, answer, context, task
) -> None:
    query = "When was the company founded?" if task == "QnA" else None
    r = default_checker.check([context], answer, query, task=task)
    assert r.verdict is Verdict.NOT_SURE
    assert r.judge.decided_by == f"language check (answer {code}, context {code})"
    reason = r.sentences[0].reason
    assert reason.startswith("The answer and the context are in ") and "not sure" in reason
    assert all(s.verdict is Verdict.NOT_SURE for s in r.sentences)
    assert r.ungrounded_details and "English only" in (r.ungrounded_details[0].reason or "")


@needs_model
@pytest.mark.parametrize("code,answer,context", FOREIGN[1:4], ids=[f[0] for f in FOREIGN[1:4]])
def test_a_foreign_answer_or_context_alone_is_enough(
    default_checker, code, answer, context
) -> None:
    english = "The company was founded in 1998 in Berlin and has about 500 employees."
    r = default_checker.check([ENGLISH_CONTEXT], answer)
    assert r.verdict is Verdict.NOT_SURE and r.sentences[0].reason.startswith("The answer is in")
    r = default_checker.check([context], english)
    assert r.verdict is Verdict.NOT_SURE and r.sentences[0].reason.startswith("The context is in")
    assert r.judge.decided_by == f"language check (answer en, context {code})"


@needs_model
def test_english_is_left_alone(default_checker) -> None:
    for context, answer in [
        ([ENGLISH_CONTEXT], "The company was founded in 1998 in Berlin."),
        ([ENGLISH_CONTEXT], "It has 800 employees."),
        ([RECORD], "Café de la Paix is at 5 Place de l'Opéra in Paris and offers free WiFi."),
        ([MAUNA_KEA], "Yes."),
        ([MAUNA_KEA], "4,207.3 m."),
        ([BANK], "They pay me 10/hour."),
    ]:
        r = default_checker.check(context, answer)
        assert not language_checked(r), (answer, r.judge.decided_by)
        assert not any("not English" in s.reason for s in r.sentences)


@needs_model
def test_a_verbatim_copy_stays_grounded(default_checker) -> None:
    context = FOREIGN[1][2]
    answer = (
        "Elle compte aujourd'hui 500 salariés et vend ses logiciels aux banques de toute l'Europe."
    )
    assert detect(answer).code == "fr"
    r = default_checker.check([context], answer)
    assert (
        r.verdict is Verdict.GROUNDED
        and r.score >= default_checker.judge.default_thresholds.grounded
    )
    assert r.judge.decided_by == (
        "lexical evidence (answer fr, context fr): the answer is copied verbatim from the context"
    )
    assert all(s.verdict is Verdict.GROUNDED for s in r.sentences)


@needs_model
def test_a_changed_figure_stays_not_grounded(default_checker) -> None:
    answer = "Die Firma wurde 2005 in Berlin gegründet und hat heute rund 500 Mitarbeiter."
    r = default_checker.check([FOREIGN[0][2]], answer)
    assert r.verdict is Verdict.NOT_GROUNDED
    assert r.judge.decided_by == (
        "lexical evidence (answer de, context de): a figure of the answer contradicts the context"
    )
    assert "2005" in r.sentences[0].reason


@needs_model
def test_a_figure_written_the_other_way_decides_nothing(default_checker) -> None:
    # "1.500" in German is 1,500; a model that cannot read the answer says nothing sure
    context = "Die Firma hat heute 1.500 Mitarbeiter und verkauft Software an Banken in Europa."
    answer = "Das Unternehmen beschäftigt heute etwa 1 500 Menschen in seinen Büros in Europa."
    r = default_checker.check([context], answer)
    assert r.verdict is Verdict.NOT_SURE


@needs_model
def test_chunked_contexts_stay_not_sure() -> None:
    pytest.importorskip("onnxruntime")
    answer = "Das Unternehmen verkauft heute seine Programme an viele Geldinstitute in Europa."
    checker = GroundednessChecker(cache_size=0, chunk_chars=80, chunk_overlap=10)
    r = checker.check([FOREIGN[0][2]], answer)
    assert r.chunks > 1 and r.verdict is Verdict.NOT_SURE


def test_the_language_check_abstains_and_sets_no_sentence_verdict() -> None:
    """The check only says what it found: an abstention with its reason and scores in the
    notSure band; the checker turns that into verdicts."""
    judge = HeuristicJudge()
    code, answer, context = FOREIGN[0]
    request = GroundednessRequest(context=(context,), answer=answer)
    index, spans, feats = judge.analyse(request)
    scores = [judge.sentence_score(f, request.task) for f in feats]
    overall = judge.answer_score(feats, request.task)
    judgement = judge.judgement(request, index, spans, feats, overall, scores)
    cut = judge.default_thresholds
    checked = _language.language_checked(request, judgement, feats, cut)
    assert checked.abstained and checked.verdict is None
    assert checked.decided_by == f"language check (answer {code}, context {code})"
    assert all(s.verdict is None for s in checked.sentences)
    scored = [s.score for s, f in zip(checked.sentences, feats) if f.checkable]
    assert scored and all(cut.not_grounded <= score < cut.grounded for score in scored)
    # the detection's names are importable from the decision's module as before
    assert _language.detect is detect and _language.context_language is context_language


def test_figures_compare_across_conventions_and_lengths() -> None:
    figures = _language._figures("1,500 or 1 500 or 1.500; 3,5 or 3.5; ٣٤; 007; " + "9" * 5_000)
    assert {"1500", "35", "34", "7", "9" * 5_000} == figures


@needs_model
def test_a_short_verbatim_answer_decides_nothing(default_checker) -> None:
    # "Ja." occurs in almost any German text
    context = "Ja, die Firma wurde 1998 in Berlin gegründet und hat heute rund 500 Mitarbeiter."
    r = default_checker.check([context], "Ja.", "Wurde die Firma in Berlin gegründet?", task="QnA")
    assert r.verdict is Verdict.NOT_SURE and r.judge.decided_by.startswith("language check")
