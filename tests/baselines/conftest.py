"""Fixtures: the fake suite registered for the duration of a test module only."""

from __future__ import annotations

import pytest

from tests.eval import fake_suite


@pytest.fixture(autouse=True)
def fake_registered():
    fake_suite.register()
    yield fake_suite.FAKE_ENV_ID
    fake_suite.unregister()
