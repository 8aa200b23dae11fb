"""The postprocessor's options show in its signature (IDEs, ``help()``), one per field."""

from __future__ import annotations

import inspect
import pydoc

import pytest

from ground_integrations import ConfigurationError
from ground_integrations.llama_index import GroundednessPostprocessor


def test_every_field_is_a_keyword_parameter_with_the_fields_default() -> None:
    params = dict(inspect.signature(GroundednessPostprocessor.__init__).parameters)
    params.pop("self")
    assert all(p.kind is p.KEYWORD_ONLY for p in params.values())
    assert set(params) == set(GroundednessPostprocessor.model_fields)
    for name, field in GroundednessPostprocessor.model_fields.items():
        expected = None if field.default_factory is not None else field.default
        assert params[name].default == expected, name


def test_help_shows_the_options_and_bad_values_are_configuration_errors() -> None:
    text = pydoc.render_doc(GroundednessPostprocessor, renderer=pydoc.plaintext)
    assert "min_support: 'float' = 0.2" in text or "min_support: float = 0.2" in text
    with pytest.raises(ConfigurationError, match="min_support"):
        GroundednessPostprocessor(min_support=2.0)
    with pytest.raises(TypeError, match="min_suport"):
        GroundednessPostprocessor(min_suport=0.5)  # type: ignore[call-arg]
    restored = GroundednessPostprocessor.from_dict(
        GroundednessPostprocessor(min_support=0.4).to_dict()
    )
    assert restored.min_support == 0.4
