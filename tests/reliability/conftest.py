from __future__ import annotations

import os

import pytest

# `make soak` sets DIAGNOSIS_PROPERTY_EXAMPLES=10000; `make test` runs the default.
PROPERTY_EXAMPLES = int(os.environ.get("DIAGNOSIS_PROPERTY_EXAMPLES", "2000"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "property: hypothesis property tests (make soak runs them at 10,000 examples)")
