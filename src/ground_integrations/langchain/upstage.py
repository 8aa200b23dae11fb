"""The removed ``langchain_upstage.UpstageGroundednessCheck``, back: migrating is one import line.

.. code-block:: python

    # from langchain_upstage import UpstageGroundednessCheck
    from ground_integrations.langchain import UpstageGroundednessCheck

    groundedness_check = UpstageGroundednessCheck()
    groundedness_check.invoke({"context": "...", "answer": "..."})  # "notGrounded", say

:class:`UpstageGroundednessCheck` keeps the old tool's name (``groundedness_check``), input
(``context``: a string or a list of documents; ``answer``: a string), return values and
constructor (``api_key`` or ``upstage_api_key``, ``temperature``; ``UPSTAGE_API_KEY`` and
``UPSTAGE_API_BASE`` from the environment). Where it judges:

* a key (argument or ``UPSTAGE_API_KEY``): the Upstage-compatible endpoint at ``base_url`` /
  ``UPSTAGE_API_BASE`` (Upstage's own by default, or a ``ground serve``);
* neither a key nor a base: the embedded offline judge, no network;
* ``checker=``: any checker, e.g. ``GroundednessChecker(AzureContentSafetyJudge())``.

``GroundednessCheck`` is the old tool's deprecated alias, importable from this module only
(``ground_integrations.langchain.GroundednessCheck`` is the check as a Runnable).
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.documents import Document
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from ..checker import GroundednessChecker
from ..errors import ConfigurationError
from ..judges.upstage import DEFAULT_MODEL, UpstageJudge
from ._tool import GroundednessCheckTool

__all__ = ["GroundednessCheck", "UpstageGroundednessCheck", "UpstageGroundednessCheckInput"]


class UpstageGroundednessCheckInput(BaseModel):
    """Input of the ``groundedness_check`` tool, as langchain-upstage defined it."""

    context: str | list[Document] = Field(
        description="The context the answer must be supported by: a text, or a list of documents."
    )
    answer: str = Field(description="The assistant's reply, or any text, to check.")


class UpstageGroundednessCheck(GroundednessCheckTool):
    """The ``groundedness_check`` tool with langchain-upstage's interface (see the module).

    Args:
        temperature: sent to an Upstage-compatible endpoint (default 0, steadier than the
            API's own default for checking).
        api_key / upstage_api_key: the endpoint's key; else ``UPSTAGE_API_KEY``.
        base_url: the endpoint, e.g. ``http://127.0.0.1:8080/v1/solar`` for a
            ``ground serve``; else ``UPSTAGE_API_BASE``, else Upstage's.
        model: the model name sent to the endpoint.
        checker: judge with this checker instead (no key or base is read then).
        **kwargs: any ``BaseTool`` option (``handle_tool_error``, ``callbacks``, ``tags``...).

    Returns ``grounded``, ``notGrounded`` or ``notSure`` as the tool's content (and, called
    with a tool call, the full :class:`~ground_integrations.GroundednessResult` as the
    ``ToolMessage``'s artifact).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, populate_by_name=True)

    description: str = (
        "Checks whether an assistant's response is grounded in (supported by) the context "
        "the user provided, as in retrieval-augmented generation. Input: the context and the "
        "answer. Output: 'grounded', 'notGrounded' or 'notSure'."
    )
    args_schema: type[BaseModel] = UpstageGroundednessCheckInput
    upstage_api_key: SecretStr | None = Field(None, alias="api_key", exclude=True)
    upstage_api_base: str | None = Field(None, alias="base_url")

    def __init__(
        self,
        temperature: float | None = None,
        *,
        api_key: str | SecretStr | None = None,
        upstage_api_key: str | SecretStr | None = None,
        base_url: str | None = None,
        model: str = DEFAULT_MODEL,
        checker: GroundednessChecker | None = None,
        **kwargs: Any,
    ) -> None:
        key = _secret(upstage_api_key) or _secret(api_key)
        base = base_url
        if checker is None:
            key = key or _secret(os.environ.get("UPSTAGE_API_KEY"))
            base = base or os.environ.get("UPSTAGE_API_BASE") or None
            checker = _checker(key, base, model, temperature)
        super().__init__(checker=checker, api_key=key, base_url=base, **kwargs)


def _secret(value: str | SecretStr | None) -> SecretStr | None:
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    return SecretStr(value) if value else None


def _checker(
    key: SecretStr | None, base: str | None, model: str, temperature: float | None
) -> GroundednessChecker:
    if key is None and base is None:
        return GroundednessChecker()  # the embedded judge: offline
    if key is None:
        raise ConfigurationError(
            f"UpstageGroundednessCheck: UPSTAGE_API_BASE / base_url is set ({base}) but no API "
            "key: pass api_key=... or set UPSTAGE_API_KEY (for a ground serve started without "
            "GROUND_API_KEYS any value will do), or unset UPSTAGE_API_BASE to judge offline "
            "with the embedded judge"
        )
    judge = UpstageJudge(
        key,
        base_url=base,
        model=model,
        temperature=0.0 if temperature is None else temperature,
    )
    return GroundednessChecker(judge)


class GroundednessCheck(UpstageGroundednessCheck):
    """langchain-upstage's deprecated name for :class:`UpstageGroundednessCheck`."""
