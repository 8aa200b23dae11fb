"""The guard's options show in its signature (IDEs, ``help()``), one per field, same defaults."""

from __future__ import annotations

import inspect
import pydoc
import typing

import pytest

from ground_integrations import Policy
from ground_integrations.langchain import GroundednessGuard

from .conftest import make_model
from .test_host_habits import tutorial_chain


def test_every_field_is_a_named_parameter_with_the_fields_default() -> None:
    params = dict(inspect.signature(GroundednessGuard.__init__).parameters)
    params.pop("self")
    assert not any(p.kind is p.VAR_KEYWORD for p in params.values())
    assert set(params) == set(GroundednessGuard.model_fields)
    for name, field in GroundednessGuard.model_fields.items():
        expected = None if field.default_factory is not None else field.default
        assert params[name].default == expected, name
    assert params["chain"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert all(p.kind is p.KEYWORD_ONLY for n, p in params.items() if n != "chain")
    hints = typing.get_type_hints(GroundednessGuard.__init__)  # annotations an IDE can resolve
    assert hints["policy"] == Policy | None


def test_help_shows_the_options() -> None:
    text = pydoc.render_doc(GroundednessGuard, renderer=pydoc.plaintext)
    init = text.split("__init__(self, ", 1)[1].split("\n", 1)[0]
    assert "feedback_slot: \"Literal['auto', 'text', 'messages', 'append']\" = 'auto'" in init
    assert "policy: 'Policy | None' = None" in init and "**kwargs" not in init


def test_the_chain_goes_by_position_or_by_name_and_unknown_options_are_refused() -> None:
    chain = tutorial_chain(make_model([]))
    assert GroundednessGuard(chain).chain is chain
    assert GroundednessGuard(chain=chain, markers=True).markers is True
    assert GroundednessGuard(policy=Policy.block()).policy == Policy.block()
    with pytest.raises(TypeError, match="polcy"):
        GroundednessGuard(chain, polcy=Policy.block())  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "options",
    [{"policy": "block"}, {"streaming": "words"}],
)
def test_bad_guard_options_are_configuration_errors(checker, options) -> None:
    from ground_integrations import ConfigurationError

    with pytest.raises(ConfigurationError):
        GroundednessGuard(checker=checker, **options)


def test_a_bad_check_option_is_a_configuration_error(checker) -> None:
    from ground_integrations import ConfigurationError
    from ground_integrations.langchain import GroundednessCheck

    with pytest.raises(ConfigurationError, match="domain"):
        GroundednessCheck(checker=checker, domain="Legal")
