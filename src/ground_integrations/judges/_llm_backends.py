"""The models an LLM judge calls: a LangChain chat model or a LlamaIndex LLM behind one small
interface, and the output method in use with its one-way fallback.

A backend turns the judge's ``(role, text)`` turns into its own messages (:meth:`messages`) and
offers a callable per output method (:meth:`runnable`): ``"json_schema"``,
``"function_calling"`` and ``"json_mode"`` ask for the :class:`BatchedAssessment` schema as
structured output, ``"text"`` is a plain call whose reply is parsed. The model is a copy with an
output-token cap and, under a deadline, a request timeout (:func:`capped`).

:class:`OutputMethods` holds the methods to try, best first. When a server rejects a request's
form (many local OpenAI-compatible servers refuse ``json_schema``), the judge moves to the next
method once and keeps it; an error that says nothing about the form (a timeout, a refused
connection, a rate limit, a bad key) is never a reason to move.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ConfigurationError, MissingDependencyError
from ._llama_llm import LlamaIndexChatModel, is_llama_index_llm
from ._llm_schema import BatchedAssessment

if TYPE_CHECKING:  # pragma: no cover
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

__all__ = [
    "METHODS",
    "LangChainChatModel",
    "Method",
    "OutputMethods",
    "backend_for",
    "capped",
    "check_llm",
    "langchain_messages",
    "rejected",
    "status",
]

Method = Literal["json_schema", "function_calling", "json_mode", "text"]
METHODS: tuple[Method, ...] = ("json_schema", "function_calling", "json_mode", "text")
_TOKEN_FIELDS = ("max_tokens", "max_completion_tokens", "num_predict", "max_output_tokens")
#: Request-timeout fields of common chat models (ChatOpenAI, ChatAnthropic...).
_TIMEOUT_FIELDS = ("request_timeout", "timeout", "default_request_timeout")
#: Errors that say nothing about the request's shape: never a reason to change method.
_TRANSIENT = ("timeout", "connection", "ratelimit", "authentication", "permission", "apiconnection")


def check_llm(llm: Any) -> None:
    """Refuse anything that is neither a LangChain chat model nor a LlamaIndex LLM."""
    if is_llama_index_llm(llm):
        LlamaIndexChatModel(llm)  # checks the type (the core never imports llama_index else)
        return
    try:
        from langchain_core.language_models import BaseChatModel
    except ImportError as exc:  # pragma: no cover
        raise MissingDependencyError("langchain-core", "langchain") from exc
    if not isinstance(llm, BaseChatModel):
        raise ConfigurationError(
            "llm must be a LangChain BaseChatModel or a LlamaIndex LLM "
            f"(llama_index.core.llms.LLM), got {type(llm).__name__}"
        )


def capped(llm: Any, cap: int, deadline: float | None = None) -> Any:
    """A copy of ``llm`` with an output cap in the field it has and, when a deadline is set, a
    request timeout no longer than it (values the user set on the model are kept)."""
    fields = type(llm).model_fields
    update: dict[str, Any] = {}
    name = next((f for f in _TOKEN_FIELDS if f in fields), None)
    if name is not None and getattr(llm, name, None) is None:
        update[name] = cap
        base = getattr(llm, "openai_api_base", None)
        if "extra_body" in fields and isinstance(base, str) and "api.openai.com" not in base:
            # OpenAI-compatible servers (llama.cpp, vLLM...) that ignore max_completion_tokens.
            extra = getattr(llm, "extra_body", None) or {}
            update["extra_body"] = {"max_tokens": cap, **extra}
    timeout = next((f for f in _TIMEOUT_FIELDS if f in fields), None)
    if deadline is not None and timeout is not None and getattr(llm, timeout, None) is None:
        update[timeout] = deadline
    return llm.model_copy(update=update) if update else llm


def status(exc: BaseException) -> int | None:
    """The HTTP status an error (or one of its causes) carries, if any."""
    seen: BaseException | None = exc
    for _ in range(4):
        if seen is None:
            return None
        for holder in (seen, getattr(seen, "response", None)):
            code = getattr(holder, "status_code", None)
            if isinstance(code, int):
                return code
        seen = seen.__cause__ or seen.__context__
    return None


def rejected(exc: BaseException) -> bool:
    """Did the server refuse the request's form (not: is it down, slow, or refusing us)?"""
    names = "".join(type(e).__name__ for e in (exc, exc.__cause__) if e is not None).lower()
    if any(word in names for word in _TRANSIENT):
        return False
    code = status(exc)
    if code is None:
        return isinstance(exc, NotImplementedError | ValueError | TypeError)
    return code in (400, 404, 415, 422, 500, 501)


def langchain_messages(turns: Sequence[tuple[str, str]]) -> list[BaseMessage]:
    """LangChain messages for the judge's ``(role, text)`` turns."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    kinds = {"system": SystemMessage, "human": HumanMessage, "ai": AIMessage}
    return [kinds[role](text) for role, text in turns]


class LangChainChatModel:
    """The calls :class:`~ground_integrations.judges.LLMJudge` makes, on a LangChain chat model
    (the twin of :class:`~._llama_llm.LlamaIndexChatModel`)."""

    def __init__(self, llm: BaseChatModel) -> None:
        self.llm = llm

    def __repr__(self) -> str:
        return f"LangChainChatModel({type(self.llm).__name__})"

    def messages(self, turns: Sequence[tuple[str, str]]) -> list[Any]:
        return list(langchain_messages(turns))

    def runnable(self, method: str) -> Any:
        """What to call for one output method, or None if the model does not offer it."""
        if method == "text":
            return self.llm
        try:
            return self.llm.with_structured_output(
                BatchedAssessment, method=method, include_raw=True
            )
        except (NotImplementedError, ValueError, TypeError):
            pass
        if method == "json_schema":  # models whose structured output takes no method
            try:
                return self.llm.with_structured_output(BatchedAssessment, include_raw=True)
            except (NotImplementedError, ValueError, TypeError):
                return None
        return None


def backend_for(
    llm: Any, cap: int, deadline: float | None
) -> LangChainChatModel | LlamaIndexChatModel:
    """The backend for ``llm`` (checked with :func:`check_llm`), on a :func:`capped` copy."""
    model = capped(llm, cap, deadline)
    if is_llama_index_llm(llm):
        return LlamaIndexChatModel(model)
    return LangChainChatModel(model)


class OutputMethods:
    """The output methods to try, best first, and the one in use (moved past once a server
    rejects its form; the choice is kept for every later call)."""

    def __init__(self, backend: LangChainChatModel | LlamaIndexChatModel, wanted: Sequence[str]):
        self.methods: list[tuple[str, Any]] = []
        for name in wanted:
            runnable = backend.runnable(name)
            if runnable is not None:
                self.methods.append((name, runnable))
        self.current = 0
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The method in use."""
        return self.methods[self.current][0]

    def _fall_back(self, tried: int, exc: Exception) -> bool:
        """After method ``tried`` failed with ``exc``: move to the next method if the server
        rejected the request's shape (once per judge; the choice is kept). False: re-raise."""
        if tried + 1 >= len(self.methods) or not rejected(exc):
            return False
        with self._lock:
            if self.current == tried:
                self.current = tried + 1
        return True

    def call(self, messages: list[Any]) -> Any:
        while True:
            tried = self.current
            try:
                return self.methods[tried][1].invoke(messages)
            except Exception as exc:
                if not self._fall_back(tried, exc):
                    raise

    async def acall(self, messages: list[Any]) -> Any:
        while True:
            tried = self.current
            try:
                return await self.methods[tried][1].ainvoke(messages)
            except Exception as exc:
                if not self._fall_back(tried, exc):
                    raise
