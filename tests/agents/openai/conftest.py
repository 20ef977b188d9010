"""Fixtures of the openai provider tests: the fake endpoint and an environment without the machine's settings."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.settings import clean_environment

from .openai_fake_endpoint import FakeOpenAI


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No DIAGNOSIS_* or OPENAI_* variable of the machine leaks into a test."""
    clean_environment(monkeypatch, ("DIAGNOSIS_", "OPENAI_"))


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as endpoint:
        yield endpoint
    assert not endpoint.errors, endpoint.errors
