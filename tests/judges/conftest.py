from __future__ import annotations

from collections.abc import Iterator

import pytest

from . import fake_services


@pytest.fixture
def service() -> Iterator[fake_services.FakeService]:
    svc = fake_services.start()
    yield svc
    svc.close()
