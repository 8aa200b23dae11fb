"""One-fact edits read from word order: each check fires on the edit, not on a rewording."""

from __future__ import annotations

import pytest

from ground_integrations import GroundednessChecker, UngroundedKind, Verdict
from ground_integrations.judges._structure import conflicts, unconfirmed
from ground_integrations.text import split_sentences

MATCH = (
    "In Saturday's final at Lakeside Stadium, Northbridge Rovers beat Castlemore United 3-1. "
    "Rovers captain Dan Ferreira scored twice, and substitute Jonah Pike added the third goal. "
    "It was the club's second cup title, after its first win in 1998."
)
FIRM = (
    "Harlow Foods reported revenue of 2.4 billion pounds. Chief executive Miriam Okoro said the "
    "growth came mainly from its frozen-meals range."
)
TRIAL = (
    "A daily walk after dinner may lower fasting glucose, a trial found. Customers should stop "
    "using the kettles. In some patients the walk reduced the need for medication."
)


def found(context: str, sentence: str) -> list[tuple[str, str, str]]:
    window = [s.text for s in split_sentences(context)]
    return [(c.check, c.said, c.instead) for c in conflicts(sentence, window)]


@pytest.mark.parametrize(
    ("context", "edit", "expected"),
    [
        (MATCH, "Castlemore United beat Northbridge Rovers 3-1.", ("role", "Castlemore United")),
        (MATCH, "Jonah Pike scored twice in the final.", ("role", "Jonah Pike")),
        (MATCH, "Rovers coach Dan Ferreira scored twice.", ("title", "Dan Ferreira / coach")),
        (FIRM, "Founder Miriam Okoro said the growth came from frozen meals.", ("title", None)),
        # a role given with "as" or "became", or set off by commas before the name
        (
            "The Hawks have named Joel Sato as head coach for next season.",
            "The Hawks have named Joel Sato as captain for next season.",
            ("title", "Joel Sato / captain"),
        ),
        (
            "Ines Duarte served as chief executive until 2020.",
            "In 2020 Ines Duarte became president of the company.",
            ("title", "Ines Duarte / president"),
        ),
        (
            "Sunfield's founder, Ravi Anand, will join Brightwater's board.",
            "Sunfield's chief executive, Ravi Anand, will join Brightwater's board.",
            ("title", None),
        ),
        (MATCH, "It was the club's first cup title.", ("ordinal", "first")),
        (TRIAL, "Customers must stop using the kettles.", ("modal", "must")),
        # what the window says can happen, the sentence says will
        (
            "Taking too much vitamin D over a long period can cause calcium to build up.",
            "Taking too much vitamin D over a long period will cause calcium to build up.",
            ("modal", "will"),
        ),
        # two years compared the other way round from the figures the window gives them
        (
            "Waiting times fell from 4.2 hours in 2022 to 3.1 hours in 2023.",
            "Waiting times were higher in 2023 than in 2022.",
            ("comparison", "higher"),
        ),
        (
            "The economy grew by 1.9% in 2023, down from 2.6% in 2022.",
            "The economy grew faster in 2023 than in 2022.",
            ("comparison", "faster"),
        ),
        (
            "Sales were $4.5 million in 2023 and $900,000 in 2022.",
            "Sales were lower in 2023 than in 2022.",
            ("comparison", "lower"),
        ),
        # the modal's own words the same, where no content word stands near it
        (
            "They reduce swelling and should be used every day, even when symptoms are absent.",
            "Inhaled corticosteroids must be used every day, even when symptoms are absent.",
            ("modal", "must"),
        ),
        (TRIAL, "A daily walk after dinner lowers fasting glucose.", ("hedge", "lowers")),
        (TRIAL, "In all patients the walk reduced the need for medication.", ("quantifier", "all")),
        (
            "The river is wider than the canal.",
            "The canal is wider than the river.",
            ("comparison", "wider"),
        ),
        (
            "The Eiffel Tower was completed in 1889 in Paris.",
            "The Eiffel Tower was not completed in 1889.",
            ("negation", "not completed"),
        ),
        (
            "The museum has been listed as a protected building since 1984.",
            "The museum is no longer listed as a protected building.",
            ("negation", "no longer listed"),
        ),
        (
            "Passports can be renewed online by adults living abroad.",
            "Passports cannot be renewed online by adults living abroad.",
            ("negation", "cannot be renewed"),
        ),
        (
            # a verb with no content of its own: the negation falls on its object
            "The region now gets most of its power from wind farms.",
            "The region no longer gets most of its power from wind farms.",
            ("negation", "no longer gets most of its power"),
        ),
        (
            "Members get a free parking permit for the town centre.",
            "Members don't get a free parking permit for the town centre.",
            ("negation", "don't get a free"),
        ),
        (
            "The committee approved the new stadium plan in March.",
            "The committee didn't approve the new stadium plan.",
            ("negation", "didn't approve"),
        ),
        (
            "On Tuesday the city council voted to close the Elm Street pool.",
            "The city council voted not to close the Elm Street pool.",
            ("negation", "not to close"),
        ),
        (
            # the full stop of an abbreviation ends no clause: "D.C." stays a neighbour
            "Washington D.C. residents can vote in presidential elections.",
            "Washington D.C. residents cannot vote for voting members of Congress today.",
            ("negation", "cannot vote"),
        ),
        (
            # a gerund with no auxiliary contradicts the same form
            "Patients running a fever should rest at home.",
            "Patients not running a fever should rest at home.",
            ("negation", "not running"),
        ),
        (
            # one shared neighbour is enough where the sentence repeats the window's words
            "Firmware updates are installed automatically overnight.",
            "Firmware updates are never installed automatically.",
            ("negation", "never installed"),
        ),
        # a negation the window makes and the sentence drops
        (
            "A survey of office workers by Tallis found long hours. The survey did not look at "
            "productivity.",
            "The Tallis survey looked at productivity.",
            ("negation", "looked"),
        ),
        # "with or without" denies nothing: "cannot" contradicts it
        (
            "Dormelin can be taken with or without food.",
            "Dormelin cannot be taken with food.",
            ("negation", "cannot be taken"),
        ),
        (
            "Swimming is allowed only at the two marked beaches.",
            "Swimming is not allowed at the two marked beaches of Lake Virel.",
            ("negation", "not allowed"),
        ),
        # a count the window gives otherwise, its number standing elsewhere in the window
        (
            "The router supports Wi-Fi 6 and has four Gigabit Ethernet ports.",
            "The router supports Wi-Fi 6 and has six Gigabit Ethernet ports.",
            ("count", "six"),
        ),
        (
            "Children can take 250 mg every six hours. Do not give more than four doses in 24 "
            "hours.",
            "Do not give a child more than six doses in 24 hours.",
            ("count", "six"),
        ),
        # a quantifier read past "of it" to the word it qualifies
        (
            "The project cost 310 million euros, most of it paid by the national government.",
            "The project cost 310 million euros, all of it paid by the national government.",
            ("quantifier", "all"),
        ),
        # "still" where the window says it ended: an ending verb, or "until" a past time
        (
            "The Mossbank coal plant stopped generating electricity in 2022.",
            "The Mossbank coal plant still generates electricity.",
            ("ended", "still generates"),
        ),
        (
            "Reyes was coached by her father until last year.",
            "Reyes is still coached by her father.",
            ("ended", "still coached"),
        ),
    ],
)
def test_an_edit_of_one_fact_is_found(context, edit, expected) -> None:
    checks = found(context, edit)
    check, said = expected
    assert any(c == check and (said is None or s == said) for c, s, _ in checks), checks


@pytest.mark.parametrize(
    ("context", "rewording"),
    [
        # the passive turns the roles round with the verb
        (MATCH, "Castlemore United were beaten by Northbridge Rovers 3-1."),
        (MATCH, "Dan Ferreira, the Rovers captain, scored twice."),
        # the same role in other words: a spelling, a word that dates it, a part of the title
        (
            "The defense attorney Judy Clarke spoke first.",
            "His defence attorney, Judy Clarke, spoke first.",
        ),
        (
            "Chief executive Larry Ellison stepped down in 2014.",
            "The company's previous CEO, Larry Ellison, stepped down in 2014.",
        ),
        (
            "The Hawks have named Joel Sato as head coach for next season.",
            "Joel Sato became coach of the Hawks.",
        ),
        # both ranks are the sentence's own
        (MATCH, "The second title came after the first win in 1998."),
        # a hedge kept in other words, or a gerund that claims nothing alone
        (TRIAL, "A daily walk after dinner could help lower fasting glucose."),
        (TRIAL, "Customers should stop using the kettles."),
        # the same comparison of two years, or one the window's figures cannot settle
        (
            "Waiting times fell from 4.2 hours in 2022 to 3.1 hours in 2023.",
            "Waiting times were shorter in 2023 than in 2022.",
        ),
        (
            "Sales were $4.5 million in 2023 and $900,000 in 2022.",
            "Sales were higher in 2023 than in 2022.",
        ),
        (
            "The economy grew by 1.9% in 2023, down from 2.6% in 2022.",
            "The economy grew more slowly in 2023 than in 2022.",
        ),
        (
            "Revenue rose from $4m in 2022 to $5m in 2023, and costs fell from $3m in 2022 to "
            "$2m in 2023.",
            "Costs were lower in 2023 than in 2022.",
        ),
        (
            "They reduce swelling and should be used every day, even when symptoms are absent.",
            "They should be used every day, and must be kept dry.",
        ),
        ("The river is wider than the canal.", "The canal is narrower than the river."),
        (
            "The probe carries a camera more sensitive than the old one.",
            "The old camera is less sensitive than the one the probe carries.",
        ),
        # a place after a comma is no appositive; a name before a noun does nothing
        (
            "The remains were found in a Jenkins County dumpster in 1988.",
            "The remains were found in a Georgia dumpster in 1988.",
        ),
        (
            "Swimming is allowed only at the two marked beaches of Lake Virel.",
            "Swimming is allowed at the two marked beaches.",
        ),
        # a negation the context makes too, or an antonym of the context's word
        ("Fees for home students will not change next year.", "Fees will not change."),
        ("Unemployment stayed at 4.1% last year.", "Unemployment did not change from 4.1%."),
        (
            "The plant stopped generating electricity in 2022.",
            "The plant has not generated electricity since 2022.",
        ),
        # "no longer" where the context says it ended, or says "no longer" too; "no longer
        # than" is a length, not a negation
        ("The ferry stopped crossing the lake in 2019.", "The ferry no longer crosses the lake."),
        # a negation that is no denial: "not just", a condition, an aside with no verb
        (
            "The cost includes tuition, books and fees.",
            "This cost includes not just tuition, but also books and fees.",
        ),
        (
            "You need a Generation 1 monster to create a Generation 2 monster.",
            "If you don't need a Generation 1 monster, you can create a Generation 2 monster.",
        ),
        (
            "Cut the potato skin lengthwise with a sharp knife.",
            "Be careful not to cut the potato skin with a sharp knife.",
        ),
        # "cannot" and "n't" where the context denies it too, in its own words
        (
            "Dormelin must not be taken with food or milk.",
            "Dormelin can't be taken with food or milk.",
        ),
        (
            "The committee refused to approve the new stadium plan in March.",
            "The committee didn't approve the new stadium plan.",
        ),
        ("The shop no longer sells tobacco.", "The shop no longer sells tobacco products."),
        (
            "Since 2020 the region has got none of its power from coal.",
            "The region no longer gets its power from coal.",
        ),
        # "will" where the window also says it will
        (
            "Calcium can build up in the body, and it will cause damage.",
            "Too much calcium will cause damage.",
        ),
        # a count the window makes as a part, about the same words, or two the sentence gives
        (
            "Nine out of the 20 amino acids are essential.",
            "There are nine essential amino acids.",
        ),
        (
            "Most of the service's 407 sites are free; the 128 parks that charge a fee will be "
            "free those two days.",
            "The service is waiving fees at its 128 fee-charging sites.",
        ),
        (
            "The forecast for Feb 14 is 64 degrees and partly cloudy.",
            "Feb 14 will be partly cloudy, with a high of 64 degrees and a low of 52 degrees.",
        ),
        ("The shop is open from 9 AM to 5 PM.", "The shop opens at 10 AM."),
        # a denial in other words, or a word the window also states plainly
        (
            "Never rub the hair back and forth with a towel.",
            "Dry the hair with a towel, avoiding rubbing the hair back and forth.",
        ),
        (
            "Some products aren't labeled with prices.",
            "Customers noted the absence of price labels on some products.",
        ),
        (
            "The club did not win the league in 2019 but won the league in 2020.",
            "The club won the league in 2020.",
        ),
        # "still" of what goes on, or of something else than what ended
        ("The ferry continues to cross the lake daily.", "The ferry still crosses the lake."),
        (
            "The plant stopped generating electricity in 2022 but still employs 40 staff.",
            "The plant still employs 40 staff.",
        ),
        (
            "The offer runs until June and the shop is open until 8 p.m.",
            "The offer still runs.",
        ),
        (
            "The bridge is 40 metres long and 8 metres wide.",
            "The bridge is no longer than 40 metres.",
        ),
    ],
)
def test_a_rewording_is_no_conflict(context, rewording) -> None:
    assert found(context, rewording) == []


def test_the_checker_reports_the_words_at_fault_as_contradicted() -> None:
    result = GroundednessChecker().check(
        [MATCH], "Castlemore United beat Northbridge Rovers 3-1. Rovers coach Dan Ferreira scored."
    )
    assert result.verdict is Verdict.NOT_GROUNDED
    spans = {d.text: d for d in result.ungrounded_details}
    assert spans["Castlemore United"].kind is UngroundedKind.CONTRADICTED
    assert "Northbridge Rovers" in spans["Castlemore United"].reason
    assert spans["coach"].kind is UngroundedKind.CONTRADICTED
    assert "captain" in spans["coach"].reason


def test_an_overstated_hedge_is_unsupported_not_contradicted() -> None:
    result = GroundednessChecker().check(
        [TRIAL], "A daily walk after dinner lowers fasting glucose."
    )
    assert result.verdict is Verdict.NOT_GROUNDED
    (detail,) = result.ungrounded_details
    assert detail.text == "lowers"
    assert detail.kind is UngroundedKind.UNSUPPORTED
    assert "may lower" in detail.reason


def test_titles_are_read_across_the_context() -> None:
    context = [
        "Kestrel Software was founded in 2009. Ines Duarte, its chief executive, lives in Porto.",
        "The company has offices in Porto, Berlin and Austin.",
    ]
    result = GroundednessChecker().check(context, "Chairman Ines Duarte lives in Porto.")
    assert result.verdict is Verdict.NOT_GROUNDED
    assert any("chief executive" in d.reason for d in result.ungrounded_details)


MEDICINE = (
    "Children aged 6 to 11 can take 250 mg every 6 hours. Do not give more than 4 doses in 24 "
    "hours. The researchers cautioned that the study was not randomised."
)


def test_in_medicine_a_negation_elsewhere_in_the_window_does_not_cap_a_faithful_sentence() -> None:
    result = GroundednessChecker().check(
        [MEDICINE], "Children aged 6 to 11 can take 250 mg every 6 hours.", domain="Medical"
    )
    assert result.verdict is Verdict.GROUNDED, result.sentences[0].reason


@pytest.mark.parametrize("domain", ["Generic", "Medical"])
def test_a_dropped_negation_is_contradicted(domain) -> None:
    result = GroundednessChecker().check(
        [MEDICINE], "The researchers noted that the study was randomised.", domain=domain
    )
    assert result.verdict is Verdict.NOT_GROUNDED
    assert "'not randomised'" in result.sentences[0].reason
    assert result.sentences[0].kind is UngroundedKind.CONTRADICTED


def test_in_medicine_a_dropped_negation_with_one_shared_word_is_contradicted() -> None:
    """Medical reads a dropped negation more widely: one shared neighbour is enough."""
    sentence = "According to the new report by the hospital, the study was randomised."
    medical = GroundednessChecker().check([MEDICINE], sentence, domain="Medical")
    assert medical.verdict is Verdict.NOT_GROUNDED
    assert "negated there" in medical.sentences[0].reason


GLACIER = "The Pellan Glacier has retreated by 1.8 kilometres since 1950, a survey found."


def test_a_cause_the_context_never_gives_is_unsupported() -> None:
    result = GroundednessChecker().check(
        [GLACIER],
        "The Pellan Glacier has retreated by 1.8 kilometres since 1950 because of rising "
        "summer temperatures.",
        task="Summarization",
    )
    assert result.verdict is Verdict.NOT_GROUNDED
    (detail,) = result.ungrounded_details
    assert detail.kind is UngroundedKind.UNSUPPORTED
    assert "cause" in detail.reason


def test_a_cause_the_context_gives_is_no_conflict() -> None:
    context = GLACIER + " It retreated because of rising summer temperatures."
    sentence = "The glacier has retreated since 1950 because of rising summer temperatures."
    assert found(context, sentence) == []


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
@pytest.mark.parametrize(
    ("context", "answer", "query", "negation"),
    [
        (
            "A ferry crosses the lake from Oster to Brenn four times a day in summer.",
            "A ferry no longer crosses the lake from Oster to Brenn.",
            "Is there a ferry from Oster to Brenn?",
            "no longer",
        ),
        (
            "Passports can be renewed online by adults living abroad. Children must apply by post.",
            "Passports cannot be renewed online by adults living abroad.",
            "Can I renew my passport online from abroad?",
            "cannot",
        ),
        (
            "The Mossbank coal plant stopped generating electricity in 2022. The site will "
            "become a battery storage facility.",
            "The Mossbank coal plant still generates electricity.",
            "Does the Mossbank plant still generate electricity?",
            "still",
        ),
    ],
)
def test_a_negation_the_context_does_not_make_is_contradicted(
    task, context, answer, query, negation
) -> None:
    result = GroundednessChecker().check([context], answer, query=query, task=task)
    assert result.verdict is Verdict.NOT_GROUNDED
    (span,) = [d for d in result.ungrounded_details if negation in d.text]
    assert span.kind is UngroundedKind.CONTRADICTED


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_a_count_the_context_gives_otherwise_is_contradicted(task) -> None:
    """ "six ports" where the context has four ports and "Wi-Fi 6": the figure 6 is in the
    context, the count is not."""
    context = (
        "The Solace X2 router supports Wi-Fi 6 and has four Gigabit Ethernet ports. Its "
        "standard warranty lasts two years."
    )
    answer = "The Solace X2 router supports Wi-Fi 6 and has six Gigabit Ethernet ports."
    result = GroundednessChecker().check(
        [context], answer, query="How many Ethernet ports does the router have?", task=task
    )
    assert result.verdict is Verdict.NOT_GROUNDED
    (span,) = [d for d in result.ungrounded_details if "six" in d.text]
    assert span.kind is UngroundedKind.CONTRADICTED
    assert "four" in span.reason
    faithful = GroundednessChecker().check(
        [context],
        answer.replace("six", "four"),
        query="How many Ethernet ports does the router have?",
        task=task,
    )
    assert faithful.verdict is Verdict.GROUNDED


KESTREL = [
    "Kestrel Software was founded in 2009 by Ines Duarte and Marco Villa. The company has "
    "offices in Porto, Berlin and Austin. Last year its revenue increased by 18% to $95 million."
]
VACCINE = [
    "The Corvax vaccine is given as two injections, four weeks apart. People who had a severe "
    "allergic reaction to the first dose should not receive the second."
]


def test_a_negation_word_order_cannot_confirm_is_left_to_the_model() -> None:
    window = [s.text for s in split_sentences(KESTREL[0])]
    sentence = "Kestrel Software no longer has an office in Berlin."
    assert conflicts(sentence, window) == []  # "company" is not "Kestrel Software"
    (found,) = unconfirmed(sentence, window, [])
    assert (found.check, found.said, found.instead) == (
        "negation",
        "no longer has an office",
        "offices",
    )
    # nothing to confirm without a negation, or once word order found one
    assert unconfirmed("Kestrel Software has an office in Berlin.", window, []) == []
    assert unconfirmed(sentence, window, [found]) == []
    # a denied noun phrase is no denied fact of the sentence's word
    hotspot = ["Officials said the district is not an HIV hotspot."]
    assert unconfirmed("Education will be critical in controlling HIV.", hotspot, []) == []


FERRY = [
    "Harbour Ferries runs a service between Kelby and Marsh Point. Its boats cross the bay every "
    "hour from 7am to 9pm. Tickets can be bought on board or online."
]
LIBRARY = [
    "The Mill Lane library opened in 1998. It lends e-books to members free of charge. Its "
    "reading room is closed on Sundays."
]


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
@pytest.mark.parametrize(
    ("context", "denial", "said", "faithful"),
    [
        (
            FERRY,
            "The Kelby ferry no longer crosses the bay.",
            "no longer crosses",
            "The ferry crosses the bay every hour.",
        ),
        (
            LIBRARY,
            "The Mill Lane library does not lend e-books.",
            "not lend",
            "The Mill Lane library lends e-books to its members.",
        ),
    ],
)
def test_the_model_confirms_a_negation_the_context_contradicts(
    task, context, denial, said, faithful
) -> None:
    checker = GroundednessChecker()
    query = "What does it offer?" if task == "QnA" else None
    denied = checker.check(context, denial, query, task=task)
    assert denied.verdict is Verdict.NOT_GROUNDED, denied
    (detail,) = [d for d in denied.ungrounded_details if d.text == said]
    assert detail.kind is UngroundedKind.CONTRADICTED
    assert "the model's support" in detail.reason
    kept = checker.check(context, faithful, query, task=task)
    assert kept.verdict is Verdict.GROUNDED, kept


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_a_negation_the_model_reads_as_supported_is_kept(task) -> None:
    query = "Who should not get the second dose?" if task == "QnA" else None
    result = GroundednessChecker().check(
        VACCINE,
        "The second dose should not be given to people who had a severe allergic reaction to "
        "the first.",
        query,
        task=task,
    )
    assert not any(d.kind is UngroundedKind.CONTRADICTED for d in result.ungrounded_details)


def test_a_negation_with_words_the_context_lacks_is_unsupported_not_contradicted() -> None:
    result = GroundednessChecker().check(
        KESTREL, "Kestrel Software does not have an office in Madrid.", task="Summarization"
    )
    assert result.verdict is Verdict.NOT_GROUNDED
    assert result.ungrounded_details
    assert all(d.kind is UngroundedKind.UNSUPPORTED for d in result.ungrounded_details)


def counted_runs(judge, monkeypatch) -> list[int]:
    """How many pairs each of ``judge``'s model runs reads, from now on."""
    read: list[int] = []
    support = judge.support

    def counting(pairs):
        read.append(len(pairs))
        return support(pairs)

    monkeypatch.setattr(judge, "support", counting)
    return read


def test_the_model_confirms_at_most_a_few_negations_a_check(monkeypatch) -> None:
    from ground_integrations.judges import CrossEncoderJudge, cross_encoder

    judge = CrossEncoderJudge()
    read = counted_runs(judge, monkeypatch)
    places = ["Kelby", "Marsh Point", "the bay"]
    answer = " ".join(f"The ferry no longer crosses to {p} from {p}." for p in places * 3)
    GroundednessChecker(judge).check(FERRY, answer, task="Summarization")
    # the lexical stage's own model run (if any) plus one bounded run for the negations
    assert max(read) <= max(cross_encoder.UNCONFIRMED_SENTENCES, judge.max_model_pairs)
    assert cross_encoder.UNCONFIRMED_SENTENCES in read


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_earlier_than_where_the_context_says_after_is_contradicted(task) -> None:
    context = ["Orion-B was the second satellite the company launched, after Orion-A in 2019."]
    query = "When was Orion-B launched?" if task == "QnA" else None
    checker = GroundednessChecker()
    result = checker.check(context, "Orion-B was launched earlier than Orion-A.", query, task=task)
    assert result.verdict is Verdict.NOT_GROUNDED
    assert any(
        d.text == "earlier" and d.kind is UngroundedKind.CONTRADICTED and "after" in d.reason
        for d in result.ungrounded_details
    ), result.ungrounded_details
    kept = checker.check(context, "Orion-B was launched after Orion-A.", query, task=task)
    assert not any(d.kind is UngroundedKind.CONTRADICTED for d in kept.ungrounded_details)


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_the_negations_the_model_confirms_count_against_max_model_pairs(task, monkeypatch) -> None:
    from ground_integrations.judges import CrossEncoderJudge

    judge = CrossEncoderJudge(max_model_pairs=2, always_run_model=True)
    read = counted_runs(judge, monkeypatch)
    answer = " ".join(
        ["The ferry no longer crosses the bay.", "Its boats never cross the bay."] * 3
    )
    query = "Does the ferry cross the bay?" if task == "QnA" else None
    GroundednessChecker(judge).check(FERRY, answer, query, task=task)
    assert 0 < sum(read) <= 2, read


SALLY = [
    "The promo shows Nick in a fight with Adam, demanding Sally choose between them. She loves "
    "Nick, but she has a strong connection with Adam. She can't choose between them. She "
    "refuses to do it."
]


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_a_negation_the_context_makes_itself_elsewhere_is_no_conflict(task) -> None:
    """ "She can't choose between them." written in the context is no contradiction of "she
    can't choose between them", though the window the sentence is read against says "Sally
    choose between them" (a faithful RAGTruth summary was flagged for it). A negation the
    context makes about something else still counts: "not completed in 1889" where only the
    bridge was not completed, in 1890."""
    checker = GroundednessChecker()
    query = "What happens between Nick and Adam?" if task == "QnA" else None
    said = "Nick and Adam fight, demanding Sally choose, but she can't choose between them."
    result = checker.check(SALLY, said, query, task=task)
    assert not any(d.kind is UngroundedKind.CONTRADICTED for d in result.ungrounded_details), (
        result.ungrounded_details
    )
    eiffel = ["The Eiffel Tower was completed in 1889. The bridge was not completed in 1890."]
    denied = checker.check(
        eiffel, "The Eiffel Tower was not completed in 1889.", query and "When?", task=task
    )
    assert denied.verdict is Verdict.NOT_GROUNDED
    assert denied.ungrounded_details[0].kind is UngroundedKind.CONTRADICTED


def test_a_negation_is_read_with_the_words_after_it() -> None:
    from ground_integrations.judges._index import index_context, writes_in_a_row

    index = index_context(SALLY)
    assert writes_in_a_row(index, "can't choose between them")
    assert writes_in_a_row(index, "She can't choose")
    assert not writes_in_a_row(index, "can't choose between us")
    assert not writes_in_a_row(index, "choose")  # one word is no phrase
    window = ["Nick demands that Sally choose between them."]
    sentence = "She can't choose between them."
    # against the window alone the negation is one (the context's own sentence is elsewhere)
    assert [c.check for c in conflicts(sentence, window) + unconfirmed(sentence, window, [])]
    written = lambda phrase: writes_in_a_row(index, phrase)  # noqa: E731
    assert not conflicts(sentence, window, written=written)
    assert not unconfirmed(sentence, window, [], written)


def test_the_look_up_of_a_negation_reads_a_bounded_part_of_the_context() -> None:
    """Only sentences that hold the phrase's rarest word are read, and none longer than
    ``CACHED_CHARS`` (a page without punctuation), so a check with many negations against a
    long context stays linear (``benchmarks/bench_scaling.py --worst``)."""
    from ground_integrations.judges._index import index_context, writes_in_a_row
    from ground_integrations.judges._structure._words import CACHED_CHARS

    page = " ".join(["the ferry crosses the bay every hour"] * (CACHED_CHARS // 30))
    index = index_context([page + " and she can't choose between them"])
    assert len(index.sentences[0].text) > CACHED_CHARS
    assert not writes_in_a_row(index, "can't choose between them")
    assert writes_in_a_row(index_context(SALLY), "can't choose between them")


def test_a_word_the_window_states_the_other_way_round_is_the_contexts() -> None:
    """A comparison turned round ("narrower than" for "wider than", the sides swapped) and a
    denial of the context's antonym ("not active" for "inactive") state the context's fact:
    the word is no missing word, and the model reads the denial as the context writes it."""
    from ground_integrations.judges._analysis import sentence_features
    from ground_integrations.judges._checks import written_as_context
    from ground_integrations.judges._index import index_context
    from ground_integrations.models import Domain

    turned = sentence_features(
        index_context(["The river is wider than the canal."]),
        "The canal is narrower than the river.",
        None,
        Domain.GENERIC,
    )
    assert turned.turned == [("narrower", "wider")]
    assert turned.values["missing_stems"] == 0 and turned.values["missing_words"] == 0
    assert "narrower" not in turned.unsupported
    assert not any("does not mention" in r for r in turned.reasons), turned.reasons

    denied = sentence_features(
        index_context(["Mount Pel is an inactive volcano."]),
        "Mount Pel is not active.",
        None,
        Domain.GENERIC,
    )
    assert denied.turned == [("active", "inactive")]
    assert written_as_context("Mount Pel is not active.", denied.as_context) == (
        "Mount Pel is inactive."
    )

    # the same words the same way round as the context, and a comparison the context makes
    # the other way round, are not turned: nothing is credited or rewritten
    wrong = sentence_features(
        index_context(["The river is wider than the canal."]),
        "The river is narrower than the canal.",
        None,
        Domain.GENERIC,
    )
    assert wrong.turned == [] and wrong.opposites == [("narrower", "wider")]
    assert "narrower" in wrong.unsupported


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_turned_rewordings_are_grounded_and_turned_edits_are_not(task) -> None:
    checker = GroundednessChecker()
    query = "Which is wider?" if task == "QnA" else None
    kept = checker.check(
        ["The river is wider than the canal."],
        "The canal is narrower than the river.",
        query,
        task=task,
    )
    assert kept.verdict is Verdict.GROUNDED, [s.reason for s in kept.sentences]
    flagged = checker.check(
        ["The river is wider than the canal."],
        "The river is narrower than the canal.",
        query,
        task=task,
    )
    assert flagged.verdict is not Verdict.GROUNDED
    query = "Is Mount Pel active?" if task == "QnA" else None
    kept = checker.check(
        ["Mount Pel is an inactive volcano."], "Mount Pel is not active.", query, task=task
    )
    assert kept.verdict is Verdict.GROUNDED, [s.reason for s in kept.sentences]
    flagged = checker.check(
        ["Mount Pel is an active volcano."], "Mount Pel is not active.", query, task=task
    )
    assert flagged.verdict is not Verdict.GROUNDED


FEES = (
    "Greyfield University will raise tuition for international students by 8% from next "
    "September. Fees for home students are set by the government and will not change."
)
RECALL = (
    "Volta Appliances is recalling 120,000 electric kettles because the handle can come loose. "
    "No injuries have been reported."
)


@pytest.mark.parametrize(
    ("context", "edit", "expected"),
    [
        # "all" over a word the window restricts, in the window sentence that says the rest
        (FEES, "Greyfield will raise tuition for all students by 8%.", ("quantifier", "all")),
        # a denial of a noun ("no injuries") written again without it
        (RECALL, "Volta said injuries have been reported.", ("negation", "injuries")),
        (RECALL, "Injuries have been reported.", ("negation", "Injuries")),
    ],
)
def test_a_widened_quantifier_and_a_dropped_no_are_found(context, edit, expected) -> None:
    checks = found(context, edit)
    assert any((c, s) == expected for c, s, _ in checks), checks


@pytest.mark.parametrize(
    ("context", "rewording"),
    [
        (FEES, "Greyfield will raise tuition for all international students by 8%."),
        # the window restricts nothing ("its 300 students"), or lists every kind
        ("The fee rises for its 300 students.", "The fee rises for all 300 students."),
        (
            "Tuition will rise for both home and international students next year.",
            "Tuition will rise for all students next year.",
        ),
        ("All students and international staff must register.", "All students must register."),
        # the denial restated with a negation, or the window also states it plainly
        (RECALL, "Volta said no injuries have been reported."),
        (RECALL, "Nobody has reported injuries."),
        (
            "No tickets were sold on Monday, but tickets were sold on Tuesday.",
            "Tickets were sold on Tuesday.",
        ),
        # "no" that denies no noun after it, or a noun phrase alone
        ("The kettle is no more than 20 cm tall.", "The kettle is more than 20 cm tall."),
        (
            "The menu had no variety of appetizers.",
            "Diners were disappointed with the limited variety of appetizers.",
        ),
        # the words after another negation, written again in a sentence that says more
        (
            "In a mixture the elements are not chemically bonded.",
            "Compounds are substances chemically bonded together.",
        ),
    ],
)
def test_a_rewording_is_no_widened_quantifier_or_dropped_no(context, rewording) -> None:
    assert [c for c in found(context, rewording) if c[0] in ("quantifier", "negation")] == []


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_a_widened_quantifier_is_unsupported_and_a_dropped_no_contradicted(task) -> None:
    checker = GroundednessChecker()

    def check(context: str, answer: str, query: str):
        return checker.check([context], answer, query if task == "QnA" else None, task=task)

    widened = check(FEES, "Greyfield will raise tuition for all students by 8%.", "Fees up?")
    assert widened.verdict is Verdict.NOT_GROUNDED
    (detail,) = widened.ungrounded_details
    assert (detail.text, detail.kind) == ("all", UngroundedKind.UNSUPPORTED)
    assert "international students" in detail.reason
    dropped = check(RECALL, "Volta said injuries have been reported.", "Why the recall?")
    assert dropped.verdict is Verdict.NOT_GROUNDED
    assert any(
        d.kind is UngroundedKind.CONTRADICTED and "No injuries" in d.reason
        for d in dropped.ungrounded_details
    ), dropped.ungrounded_details
