"""Property-based calls generated from the service's OpenAPI document: no 5xx, ever."""

from __future__ import annotations

from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402

from .conftest import KEY  # noqa: E402


def test_generated_requests_get_no_server_error(embedded_url: str) -> None:
    schema = schemathesis.openapi.from_url(f"{embedded_url}/openapi.json")
    headers = {"Authorization": f"Bearer {KEY}", "Ocp-Apim-Subscription-Key": KEY}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 7
    seen: list[int] = []
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=25,
            deadline=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def call(case: Any) -> None:
            response = case.call(base_url=embedded_url, headers=headers, timeout=60)
            seen.append(response.status_code)
            case.validate_response(response, checks=[not_a_server_error])

        call()
    assert all(code < 500 for code in seen)
    assert {200, 400} <= set(seen)  # both accepted and refused bodies were generated
