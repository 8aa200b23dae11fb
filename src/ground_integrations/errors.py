"""One exception tree for the whole package.

::

    GroundednessError                  base of everything raised on purpose here
    ├── ConfigurationError             a developer's mistake: bad option, unknown name, bad policy
    │   └── MissingDependencyError     an optional extra is not installed (says which)
    ├── InvalidInputError (ValueError) a request that cannot be checked; ``field`` names the culprit
    │   ├── EmptyInputError            empty answer, empty context, empty passage
    │   └── InputTooLongError          over an enabled limit (``limit``, ``actual``)
    ├── JudgeError                     the judge failed; ``is_retryable`` says if trying again helps
    │   ├── JudgeTimeoutError          retryable, unless a call's total ``deadline`` ran out
    │   ├── JudgeConnectionError       connection refused / dropped: retryable
    │   ├── JudgeHTTPError             a service answered 4xx/5xx (``status_code``, ``body``...)
    │   │   └── RateLimitError         429, retryable, ``retry_after`` seconds when the service said
    │   └── JudgeResponseError         the judge answered something we cannot parse
    ├── UngroundedAnswerError          a policy blocked an answer (``result``, ``decision``)
    ├── EnforceTimeoutError (TimeoutError)  enforce ran over Policy.attempt_timeout /
    │                                  total_timeout (``step``, ``attempt``)
    └── CheckCancelledError            a check's Deadline was cancelled (``reason``), e.g. its
                                       client hung up (see ground_integrations.deadline)

Lower-layer errors (httpx, JSON, a model library) are translated into this tree at exactly one
boundary: the judge base class and the shared HTTP helper. Callers only ever catch these.
Every error pickles with its data (for process pools and Ray workers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .models import GroundednessResult
    from .policies import Decision

__all__ = [
    "CheckCancelledError",
    "ConfigurationError",
    "EmptyInputError",
    "EnforceTimeoutError",
    "GroundednessError",
    "InputTooLongError",
    "InvalidInputError",
    "JudgeConnectionError",
    "JudgeError",
    "JudgeHTTPError",
    "JudgeResponseError",
    "JudgeTimeoutError",
    "MissingDependencyError",
    "RateLimitError",
    "UngroundedAnswerError",
]


def _restore(cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class GroundednessError(Exception):
    """Base class of every error this package raises on purpose.

    Errors pickle with their data (``field``, ``status_code``, ``limit``...), so they cross
    process boundaries (multiprocessing, Ray) intact, whatever their ``__init__`` takes.
    """

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore, (type(self), self.args, dict(self.__dict__)))


class ConfigurationError(GroundednessError):
    """The package was configured wrongly (unknown option, impossible thresholds, bad policy)."""


class MissingDependencyError(ConfigurationError, ImportError):
    """An optional dependency is missing; the message gives the exact install command."""

    def __init__(self, package: str, extra: str | None, *, install: str | None = None) -> None:
        """``extra``: the extra that brings ``package``; None for a package of the core install,
        whose command ``install`` gives (``pip install onnxruntime``)."""
        self.package = package
        self.extra = extra
        # no release on a package index yet: the extra is installed from the checkout
        checkout = "(in the ground-integrations checkout)"
        self.install = install or f"pip install -e '.[{extra}]' {checkout}"
        super().__init__(f"{package!r} is not installed. Install it with: {self.install}")


class InvalidInputError(GroundednessError, ValueError):
    """The request cannot be checked as given. ``field`` names the offending input."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        self.field = field
        super().__init__(message)


class EmptyInputError(InvalidInputError):
    """An answer, the context, or one of its passages is empty."""


class InputTooLongError(InvalidInputError):
    """An input exceeds an enabled size limit."""

    def __init__(self, message: str, *, field: str, limit: int, actual: int) -> None:
        self.limit = limit
        self.actual = actual
        super().__init__(message, field=field)


class JudgeError(GroundednessError):
    """A judge could not produce a judgement."""

    is_retryable: bool = False

    def __init__(self, message: str, *, judge: str | None = None) -> None:
        self.judge = judge
        super().__init__(message)


class JudgeTimeoutError(JudgeError):
    """The judge did not answer in time. Retrying may help.

    ``deadline`` is set when the call's total deadline (retries and waits included) ran out;
    such an error is not retryable: the time budget is spent.
    """

    is_retryable = True

    def __init__(
        self, message: str, *, judge: str | None = None, deadline: float | None = None
    ) -> None:
        self.deadline = deadline
        if deadline is not None:
            self.is_retryable = False
        super().__init__(message, judge=judge)


class JudgeConnectionError(JudgeError):
    """The connection to a judge service failed or dropped. Retrying may help."""

    is_retryable = True


class JudgeHTTPError(JudgeError):
    """A judge service answered with an HTTP error status."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        judge: str | None = None,
    ) -> None:
        self.status_code = status_code
        self.body = body
        self.headers = dict(headers or {})
        super().__init__(message, judge=judge)

    @property
    def is_retryable(self) -> bool:  # type: ignore[override]
        return self.status_code == 429 or self.status_code >= 500


class RateLimitError(JudgeHTTPError):
    """HTTP 429. ``retry_after`` is the wait in seconds the service asked for, if any."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        self.retry_after = retry_after
        super().__init__(message, status_code=429, **kwargs)


class JudgeResponseError(JudgeError):
    """The judge answered, but not in a form we can use (malformed JSON, unknown label...)."""

    def __init__(self, message: str, *, raw: Any = None, judge: str | None = None) -> None:
        self.raw = raw
        super().__init__(message, judge=judge)


class UngroundedAnswerError(GroundednessError):
    """A policy blocked an answer. ``result`` is the judgement, ``decision`` the policy's call."""

    def __init__(
        self,
        message: str,
        *,
        result: GroundednessResult | None = None,
        decision: Decision | None = None,
    ) -> None:
        self.result = result
        self.decision = decision
        super().__init__(message)


class EnforceTimeoutError(GroundednessError, TimeoutError):
    """``enforce`` / ``aenforce`` ran over the policy's ``attempt_timeout`` or ``total_timeout``.

    ``step`` is what was running ("the check" or "regenerate"), ``attempt`` its number.
    """

    def __init__(self, message: str, *, step: str, attempt: int) -> None:
        self.step = step
        self.attempt = attempt
        super().__init__(message)


class CheckCancelledError(GroundednessError):
    """A check stopped because its :class:`~ground_integrations.deadline.Deadline` was cancelled
    (``reason``: why, e.g. "the client disconnected"). Nobody waits for its result; not an error
    of the judge or of the input."""

    def __init__(self, message: str, *, reason: str) -> None:
        self.reason = reason
        super().__init__(message)
