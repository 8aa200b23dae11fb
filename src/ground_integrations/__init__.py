"""ground_integrations: stop RAG applications from shipping hallucinated answers.

>>> from ground_integrations import GroundednessChecker
>>> checker = GroundednessChecker()
>>> result = checker.check(
...     context=["Mauna Kea is an inactive volcano on the island of Hawaiʻi. "
...              "Its peak is 4,207.3 m above sea level."],
...     answer="Mauna Kea is 5,207.3 meters tall.",
... )
>>> result.verdict.value
'notGrounded'
"""

from ._version import __version__
from .checker import AZURE_LIMITS, DEFAULT_LIMITS, GroundednessChecker, Limits
from .citations import (
    CitationMarker,
    CitationResult,
    CitationStatus,
    CitationSupport,
    CitedSentence,
    PassageRef,
    citation_decision,
    find_citations,
)
from .errors import (
    CheckCancelledError,
    ConfigurationError,
    EmptyInputError,
    EnforceTimeoutError,
    GroundednessError,
    InputTooLongError,
    InvalidInputError,
    JudgeConnectionError,
    JudgeError,
    JudgeHTTPError,
    JudgeResponseError,
    JudgeTimeoutError,
    MissingDependencyError,
    RateLimitError,
    UngroundedAnswerError,
)
from .judges import (
    HeuristicJudge,
    Judge,
    Judgement,
    LexicalBaselineJudge,
    RetryPolicy,
    Thresholds,
)
from .models import (
    Domain,
    Evidence,
    GroundednessRequest,
    GroundednessResult,
    IndexDetails,
    JudgeInfo,
    SentenceJudgement,
    Task,
    UngroundedDetail,
    UngroundedKind,
    Verdict,
)
from .policies import (
    Action,
    Decision,
    Enforced,
    OnError,
    Policy,
    Regeneration,
    aenforce,
    enforce,
    mark_ungrounded,
)

__all__ = [
    "AZURE_LIMITS",
    "DEFAULT_LIMITS",
    "Action",
    "CheckCancelledError",
    "CitationMarker",
    "CitationResult",
    "CitationStatus",
    "CitationSupport",
    "CitedSentence",
    "ConfigurationError",
    "Decision",
    "Domain",
    "EmptyInputError",
    "EnforceTimeoutError",
    "Enforced",
    "Evidence",
    "GroundednessChecker",
    "GroundednessError",
    "GroundednessRequest",
    "GroundednessResult",
    "HeuristicJudge",
    "IndexDetails",
    "InputTooLongError",
    "InvalidInputError",
    "Judge",
    "JudgeConnectionError",
    "JudgeError",
    "JudgeHTTPError",
    "JudgeInfo",
    "JudgeResponseError",
    "JudgeTimeoutError",
    "Judgement",
    "LexicalBaselineJudge",
    "Limits",
    "MissingDependencyError",
    "OnError",
    "PassageRef",
    "Policy",
    "RateLimitError",
    "Regeneration",
    "RetryPolicy",
    "SentenceJudgement",
    "Task",
    "Thresholds",
    "UngroundedAnswerError",
    "UngroundedDetail",
    "UngroundedKind",
    "Verdict",
    "__version__",
    "aenforce",
    "citation_decision",
    "enforce",
    "find_citations",
    "mark_ungrounded",
]
