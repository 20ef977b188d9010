"""Fixtures for the tool tests: the bundled packs and a minimal pack with its toolset."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnosis_server.tools.base import Toolset
from diagnosis_server.tools.builtin import builtin_toolset
from diagnosis_server.tools.scenario import Scenario, load_scenario, load_scenarios

from ._helpers import minimal_pack, write_pack


@pytest.fixture(scope="session")
def bundled() -> dict[str, Scenario]:
    return load_scenarios()


@pytest.fixture
def mini(tmp_path: Path) -> Scenario:
    return load_scenario(write_pack(tmp_path, minimal_pack()))


@pytest.fixture
def mini_tools(mini: Scenario) -> Toolset:
    return builtin_toolset(mini)
