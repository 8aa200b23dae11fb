"""What in an answer frames its claims instead of making them: an opening attribution ("Based on
the given passages,"), a reference to a passage ("(Passage 2)"), a courtesy ("I hope this
helps!"), a lead-in ending in a colon, a note on what the passages do not cover ("The passages
do not mention side effects."), a sentence that only speaks of the passages and the question
("Passage 3 provides the necessary information to answer the question."), a sentence that only
cites passages ("(Ref: Passage 1)") and a question.
"""

from __future__ import annotations

import re

from ..text import STOPWORDS

__all__ = [
    "is_about_the_text",
    "is_citation_only",
    "is_courtesy",
    "is_coverage_note",
    "is_lead_in",
    "is_question",
    "is_referral",
    "mask_attribution",
]

#: An opening that says where the sentence's claim comes from ("Based on the given passages,",
#: "According to passage 2,", "As stated in the article,"): it names the context, not a fact.
_ATTRIBUTION = re.compile(
    r"^\W*(?:(?:based|drawing) (?:solely |only )?on|according to|as (?:stated|mentioned|described|"
    r"noted|shown|explained|reported) (?:in|by)|from|in)\s+"
    r"(?:(?:the|this|these|those|my|our)\s+)?"
    r"(?:(?:given|provided|above|following|available|retrieved|supplied|information|"
    r"structured|json|search|news|two|three|four|five|both|all)\s+)*"
    r"(?:passages?|context|information|text|articles?|news|documents?|sources?|data|"
    r"results?|excerpts?|records?|snippets?|paragraphs?)"
    r"(?:\s+(?:\[?\d+\]?(?:\s*(?:,?\s*(?:and|&)|,)\s*\[?\d+\]?)*"
    r"|in json format|provided|given|above))*"
    r"\s*,\s*",
    re.IGNORECASE,
)


#: What follows a reference to a passage: a reporting verb ("Passage 2 briefly mentions that",
#: "Passage 3 focuses on") or the end of a clause ("(Passage 3)", "as found in passage 1."); not
#: "a passage 3 km long".
_REPORTED = (
    r"(?:\s+(?:(?:also|further|then|both|all|\w+ly)\s+)?(?:states?|stated|suggests?|suggested|"
    r"mentions?|mentioned|recommends?|discusses|discussed|describes?|described|notes?|noted|"
    r"explains?|explained|says?|said|indicates?|adds?|provides?|lists?|gives?|reports?|"
    r"advises?|confirms?|shows?|highlights?|emphasi[sz]es|specifies|clarifies|talks about|"
    r"agrees?|outlines?|expands|focuses|defines?|summari[sz]es|repeats|"
    r"covers|refers to|presents|offers|contains|addresses|deals with|touches on|goes on to|"
    r"reiterates|restates|echoes|elaborates(?: on)?|"
    r"(?:does|do)(?:n't| not))"
    r"\b(?:\s+that\b)?|(?=\s*(?:[.,;:)\]!?]|$)))"
)
#: A numbered reference: "passage 2", "passages 1, 2, and 3", "Passage 2 and passage 3".
_NUMBERED = (
    r"\b(?:passages?|documents?|excerpts?|snippets?)\s*\[?\d+\]?"
    r"(?:\s*(?:,?\s*(?:\band\b|\bor\b|&)|,|-|\u2013)\s*"
    r"(?:(?:the\s+)?(?:passages?|documents?|excerpts?|snippets?)\s*)?\[?\d+\]?)*"
)
#: Words that point into the text before a numbered passage ("seen in passage 3").
_POINTING = (
    r"\b(?:according to|as (?:stated|mentioned|described|noted|shown|explained|suggested|"
    r"reported|discussed|indicated|outlined) (?:in|by)|(?:stated|mentioned|described|noted|"
    r"explained|discussed|found|outlined|seen|given|listed|shown|provided|cited|quoted|"
    r"presented|covered) in|based on|from|in|see|per|"
    # a reference label: "(Ref: Passage 1)", "Source: passages 2 and 3", "cf. passage 4"
    r"(?:refs?|references?|sources?)\.?\s*:|cf\.)\s+"
)
_DETERMINER = r"(?:(?:\bthe|\bthis|\bthat|\bboth)\s+)?"
#: A reference to the retrieved text inside a sentence: a numbered or ordinal passage ("Passage 2
#: suggests", "(passages 1 and 3)", "as mentioned in document 2", "the first passage
#: discusses"), or an attribution to the passages as a whole ("..., according to the given
#: passages"). Like an opening attribution it names the context, not a fact; a figure in it
#: counts passages, not things. After a word that points into the text ("seen in passage 3",
#: "the mixture in passage 2 can") a numbered passage is a reference whatever follows it.
_REFERENCE = re.compile(
    # pointed at: a reference whatever follows, unless a unit or sign does ("in passage 3 km")
    r"(?:" + _POINTING + _DETERMINER + _NUMBERED + r"(?!\s*(?:%|\u00b0|(?:km|m|mi|ft|cm)\b)))"
    r"|(?:"
    + _POINTING
    + r")?"
    + _DETERMINER
    + r"(?:"
    + _NUMBERED
    + r"|\b(?:first|second|third|fourth|fifth|last|final|other|previous|next)\s+"
    r"(?:passages?|documents?|excerpts?|snippets?)\b"
    r"|(?<=\s)(?:given|provided|above|retrieved)\s+(?:passages?|context|documents?)\b)" + _REPORTED,
    re.IGNORECASE,
)

#: An opening that sums up ("Overall,", "In summary,"), labels what follows as the answer
#: ("Answer:", "So, the answer to the question is") or numbers a step ("Step 2:"): it orders
#: the answer, and states nothing.
_SUMMING_UP = re.compile(
    r"^\W*(?:(?:overall|in summary|in sum|in conclusion|in short|to sum up|to summari[sz]e|"
    r"all in all|in brief)\s*,\s*"
    r"|(?:(?:so|therefore|thus|hence|in short)\s*,?\s*)?"
    r"(?:(?:the|my|a)\s+)?(?:short\s+|final\s+)?(?:answer|response)"
    r"(?:\s+to\s+(?:the|your|this)\s+(?:question|query)(?:\s+(?:\"[^\"]*\"|\u201c[^\u201d]*\u201d))?)?"
    r"\s*(?::|\bis\b:?|,)\s*"
    r"|(?:step|option|method|tip)\s+\d{1,2}\s*[:.)\u2013-]\s*)",
    re.IGNORECASE,
)
#: An opening that links the sentence to the one before it or flags it for attention
#: ("Additionally,", "On the other hand,", "It is important to note that", "Please note that",
#: "Note:"), or says how the text was read ("we can see that", "it can be inferred that", "it
#: seems that"): it orders the answer, and states nothing. Only as the opening, and only in these
#: forms: "it is important to consult a doctor" is advice to check, and "the next day" a fact.
_CONNECTIVE = re.compile(
    r"^\W*(?:(?:additionally|in addition|furthermore|moreover|besides|also|however|"
    r"nevertheless|nonetheless|that said|still|therefore|thus|hence|consequently|"
    r"as a result|accordingly|in other words|on the other hand|in contrast|by contrast|"
    r"conversely|similarly|likewise|meanwhile|in fact|indeed|instead|otherwise|finally|"
    r"lastly|first(?:ly)?|second(?:ly)?|third(?:ly)?|next|then|for example|for instance|"
    r"in general|generally speaking|in particular|specifically|importantly|"
    r"(?:more|most) importantly)\s*,\s*"
    r"|(?:(?:it\s+is|it's|it\u2019s)\s+(?:also\s+)?(?:important|worth|crucial|essential|"
    r"interesting|useful|helpful)\s+(?:to\s+(?:note|mention|remember|point out|"
    r"keep in mind|bear in mind)|noting|mentioning|remembering)"
    r"|(?:please\s+)?(?:also\s+)?(?:note|keep in mind|bear in mind|remember)"
    r"|(?:as\s+)?(?:a\s+)?(?:side\s+)?note"
    # the reader's or writer's reading of the text: "we can see that", "it can be inferred that"
    r"|(?:we|one|you|i)\s+(?:can|could|may)\s+(?:also\s+)?(?:see|understand|infer|conclude|tell|"
    r"say|gather|deduce)"
    r"|it\s+(?:can|could|may)\s+(?:also\s+)?be\s+(?:inferred|concluded|seen|understood|deduced|"
    r"gathered)"
    r"|it\s+(?:seems|appears))\s*(?:that\b|:|,)\s*)",
    re.IGNORECASE,
)
#: The summarised text named as the one who says something ("The article highlights that",
#: "The author also argues", "the story notes", "the passages suggest that", "This news report
#: describes"): it frames the claim after it, as a passage
#: reference does. Only with a reporting verb: "the report found 40%" or "they published the
#: report" name a thing the context must hold.
_SOURCE_SAYS = re.compile(
    r"\b(?:the|this|these)\s+(?:news\s+|original\s+|given\s+|provided\s+)?(?:article|author|"
    r"story|writer|piece|essay|text|blog\s+post|post|passage|excerpt|report|document)s?(?:'s?)?"
    r"\s+(?:(?:also|further|then|\w+ly)\s+)?(?:states?|stated|suggests?|suggested|mentions?|"
    r"mentioned|discusses|discussed|describes?|described|notes?|noted|explains?|explained|says|"
    r"said|indicates?|reports?|reported|highlights?|highlighted|emphasi[sz]es|emphasi[sz]ed|"
    r"argues|argued|concludes|concluded|acknowledges|acknowledged|reveals|revealed|points out|"
    r"pointed out|claims|claimed|details|outlines|outlined|touches on|delves into|sheds light on|"
    r"focuses on|provides a glimpse into|reflects on|examines|examined|explores|explored|"
    r"expresses|expressed|believes|recounts|recounted|recalls|recalled|"
    r"goes on to (?:say|describe|explain))"
    r"\b(?:\s+(?:that|how)\b)?",
    re.IGNORECASE,
)
#: A sentence that only sends the reader to someone else ("It is recommended to consult a
#: healthcare professional.", "If the problem persists, it may be best to consult a professional
#: locksmith."): advice that states nothing about the subject, however the passages read.
_REFERRAL = re.compile(
    r"^\W*(?:(?:however|therefore|thus|so|also|additionally|finally|always|please)\b,?\s*)?"
    r"(?:(?:if|when|before|for)\b[^,.;]*,\s*)?"
    r"(?:(?:it\s+is|it's|it\u2019s|it\s+may\s+be|it\s+might\s+be|it\s+would\s+be)\s+(?:always\s+)?"
    r"(?:recommended|advisable|advised|best|wise|important|necessary|essential|a\s+good\s+idea)\s+"
    r"to\s+|(?:you\s+)?(?:should|may\s+want\s+to|might\s+want\s+to|(?:may\s+|might\s+|will\s+)?"
    r"need\s+to|can|must)\s+(?:always\s+)?"
    r"|always\s+|please\s+)?"
    r"(?:consult|seek|contact|see|ask|talk\s+to|speak\s+(?:to|with)|check\s+with|reach\s+out\s+to)\b"
    r"[^.;]*?\b(?:professionals?|doctors?|physicians?|pharmacists?|veterinarians?|vets?|dentists?|"
    r"dietitians?|nutritionists?|(?:healthcare|health\s+care|medical)\s+(?:provider|professional|"
    r"advice|attention|help)s?|specialists?|experts?|locksmiths?|carpenters?|plumbers?|"
    r"electricians?|mechanics?|lawyers?|attorneys?|accountants?|technicians?|professional\s+help|"
    r"(?:additional|other|further|more|external)\s+(?:sources?|resources?|references?))\b"
    r"[^.;]*[.!]?\s*$",
    re.IGNORECASE,
)


#: A reason given with the advice is a claim to check ("because clove tea thins the blood").
_GIVES_A_REASON = re.compile(
    r"\b(?:because|since|due\s+to|as\s+(?:it|they|this)|which|so\s+that)\b", re.I
)


def is_referral(sentence: str) -> bool:
    """``sentence`` only sends the reader to a professional (:data:`_REFERRAL`): advice, not a
    claim about the subject the passages can support or contradict."""
    return bool(_REFERRAL.match(sentence)) and not _GIVES_A_REASON.search(sentence)


#: A sentence that is a courtesy and claims nothing ("I hope this helps!", "Let me know if you
#: have any other questions.", "Sure, I can help you with that!", "Tune in to find out.").
_COURTESY = re.compile(
    r"^\W*(?:(?:i\s+)?hope (?:this|that|it|my answer) (?:helps|is helpful|answers|clarifies)"
    r"|let me know if|(?:please\s+)?feel free to (?:ask|reach|let)|glad to help"
    r"|(?:good|best of) luck(?:\s+with\s+[^.!?]*)?[.!\s]*$"
    r"|(?:tune in|stay tuned|read on|keep reading)"  # a teaser: "Tune in to find out."
    r"(?:\s+(?:to|and)\s+(?:find out|learn|see|discover)(?:\s+more)?|\s+for more)?[.!\s]*$"
    r"|(?:sure|certainly|of course|absolutely|great question|good question)\b"
    r"(?:[,!.]?\s*(?:i can help|i'd be happy|i would be happy|happy to help|here you go|"
    r"i(?:'ll|\u2019ll| will) (?:do my best|try)|let me help)|\W*$))",
    re.IGNORECASE,
)


#: A sentence that says what the passages do not cover, or that the answer cannot be given from
#: them ("However, the passages do not provide specific cutoff values.", "Unable to answer based
#: on given passages.", "None of the passages mention the cost."): about the context, not a
#: claim about the subject. It must open the sentence (after a connective at most): in "Some
#: women feel nauseous, although the passages do not mention it" the claim comes first.
_COVERAGE_NOTE = re.compile(
    r"^\W*(?:(?:however|unfortunately|note|please note|but|also|additionally|in addition|so|"
    r"therefore|thus|that said|overall|again|if|since|as|because|unknown)\b[,:]?\s*(?:that\s+)?"
    r"\(?)?"
    r"(?:(?:(?:the|these|this|those|given|provided|above|retrieved|supplied)\s+){0,3}"
    r"(?:passages?|contexts?|texts?|sources?|documents?|search results?|information)"
    r"(?:\s+\d+)?\s+"
    r"(?:(?:given|provided|above|supplied)\s+)?(?:do|does|did)\s*(?:not|n't)\s+(?:seem to\s+)?"
    r"(?:provide|mention|include|contain|specify|offer|give|say|state|address|discuss|cover|"
    r"describe|explain|detail|indicate|list|have|talk about|tell|go into|mention any)\b"
    r"|(?:i am |i'm )?(?:unable|not able) to (?:answer|provide|find|determine)\b"
    r"|without (?:more|further|additional|specific|other) (?:information|details|context)\b"
    r"[^.;]*\b(?:difficult|hard|impossible|unable|cannot|can't)\b"
    r"|if the question (?:is asking|asks) about [^.;]*\b(?:unable|cannot|can't) (?:to )?answer\b"
    r"|i (?:cannot|can't|can not) (?:answer|provide|find|determine|give)\b"
    r"|(?:none of the|no) (?:passages?|sources?|documents?) (?:mentions?|provides?|says?|"
    r"states?|specif(?:y|ies)|includes?|contains?|gives?|address(?:es)?|discuss(?:es)?)\b"
    r"|there (?:is|was|are|were) no (?:(?:additional|further|other|more|specific|detailed|"
    r"explicit|direct|such)\s+)*(?:information|details?|mention)\b"
    r"(?!\s+(?:is\s+|are\s+)?(?:needed|required|necessary)))",
    re.IGNORECASE,
)


#: The words a sentence about the retrieved text itself is made of, rather than about its
#: subject: "Passage 3 provides the necessary information to answer the question.", "The
#: passages provide enough information.", "The second passage repeats the same information.",
#: "None mentioned in the passages."
_TEXT_WORDS = frozenset(
    """
    passage passages context contexts information info text texts document documents excerpt
    excerpts snippet snippets source sources question questions query answer answers response
    provide provides provided providing give gives given contain contains include includes
    mention mentions mentioned repeat repeats repeated restate restates same relevant necessary
    enough sufficient needed need needs additional further more based above following first
    second third fourth fifth last other previous both all also therefore thus so hence
    overall however directly explicitly clearly found none no here my our this these those
    unable not
    """.split()
)
#: At least one of these names the text or the question it is about.
_THE_TEXT = frozenset(
    "passage passages context contexts information excerpt excerpts question".split()
)
#: Words that make such a sentence a verdict on the question ("The answer is yes.").
_VERDICT = frozenset("yes true false correct incorrect right wrong".split())


def is_about_the_text(sentence: str) -> bool:
    """``sentence`` speaks only of the passages and the question, not of the subject ("Passage 3
    provides the necessary information to answer the question."): every word it holds, past
    its function words, is one of :data:`_TEXT_WORDS`, one of them names the passages or the
    question, and it holds no figure but a passage's number ("Passage 3"). "The answer is 42.",
    "The answer is yes." and "The answer is no." state something."""
    if re.search(r"\d", _REFERENCE.sub(_blank, sentence)):
        return False
    words = [w for w in re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", sentence.lower())]
    if not words or words[-1] in ("no", "none", "not"):
        return False
    content = {w for w in words if w not in STOPWORDS or w in _VERDICT}
    return bool(content & _THE_TEXT) and content <= _TEXT_WORDS


def is_coverage_note(sentence: str) -> bool:
    """``sentence`` says what the passages do not cover, or that they cannot answer the
    question (:data:`_COVERAGE_NOTE`): about the context, not a claim to check against it.
    Openings that frame it are read past ("However, it's worth noting that the given passages
    do not...", "Based on the given passages, I am unable to...")."""
    start = 0
    for _ in range(3):
        rest = sentence[start:]
        if _COVERAGE_NOTE.match(rest):
            return True
        m = _CONNECTIVE.match(rest) or _ATTRIBUTION.match(rest) or _SUMMING_UP.match(rest)
        if not m or not m.end():
            return False
        start += m.end()
    return bool(_COVERAGE_NOTE.match(sentence[start:]))


def is_citation_only(sentence: str) -> bool:
    """``sentence`` only names the passages the answer draws on ("(Ref: Passage 1)", "Sources:
    passages 2 and 3."): once its references (:data:`_REFERENCE`) are blanked, no word is
    left. It cites, and states nothing to check."""
    left = _REFERENCE.sub(_blank, sentence)
    return left != sentence and not any(c.isalnum() for c in left)


def is_courtesy(sentence: str) -> bool:
    """``sentence`` is a courtesy to the reader ("I hope this helps!"), not a claim."""
    return bool(_COURTESY.match(sentence))


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group())


def mask_attribution(sentence: str) -> str:
    """``sentence`` with its openings, an attribution (see :data:`_ATTRIBUTION`), a summing-up
    (:data:`_SUMMING_UP`: "Overall,") or a connective (:data:`_CONNECTIVE`: "Additionally,",
    "It is important to note that"), its references to the retrieved passages
    (:data:`_REFERENCE`) and the summarised text named as a speaker
    (:data:`_SOURCE_SAYS`) replaced by spaces of the same length: "Based on the given passages,
    X", "X (Passage 2)" and "The article highlights that X" are checked as "X". A sentence
    that would be left with no word at all is kept as it is."""
    masked = sentence
    start = 0
    for _ in range(4):  # "However, it is important to note that, based on the passages, X"
        rest = sentence[start:]
        m = _CONNECTIVE.match(rest) or _ATTRIBUTION.match(rest) or _SUMMING_UP.match(rest)
        if not m or start + m.end() >= len(sentence):
            break
        start += m.end()
    if start:
        masked = " " * start + sentence[start:]
    masked = _REFERENCE.sub(_blank, masked)
    masked = _SOURCE_SAYS.sub(_blank, masked)
    return masked if any(c.isalnum() for c in masked) else sentence


def is_question(sentence: str) -> bool:
    return sentence.rstrip("\"'”’)] ").endswith(("?", "？"))


def is_lead_in(sentence: str) -> bool:
    """A sentence that ends in a colon introduces what follows it ("Here is a summary of the
    article in 89 words:", "Based on the passages, the benefits are:"): it states nothing
    on its own, and the list or text after it is checked instead."""
    return sentence.rstrip().endswith((":", "："))
