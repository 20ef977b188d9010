"""Start-up warm-up: the server builds before it serves what every run's first use would otherwise build (each
pack's tool specs, the text comparison tables), so the first Diagnose after a start is not the slow one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from diagnosis_server.api.components import pack_tools_for
from diagnosis_server.api.warm_up import warm_up
from diagnosis_server.text import language, normalize
from diagnosis_server.tools import arguments
from diagnosis_server.tools.scenario import load_scenarios
from tests.support.api import HEURISTIC

from .conftest import ApiFactory

# Everything the warm-up fills, cleared before each test so that what an earlier test built does not count.
_CACHES: tuple[Any, ...] = (
    arguments.arguments_model,
    arguments._input_schema,
    normalize._invisible_table,
    normalize._skeleton_table,
    normalize._remembered,
    language.vocabulary,
    language.lexicon,
    language._letter_like_table,
)


def _cleared() -> None:
    for cache in _CACHES:
        cache.cache_clear()


def _misses(cache: Callable[..., Any]) -> int:
    return int(cache.cache_info().misses)  # type: ignore[attr-defined]


def _specs_of_every_pack(tools_for: Callable[[str], Any], names: list[str]) -> int:
    """How many tool schemas listing every pack's tools builds (what a run's Planner payload does)."""
    before = _misses(arguments._input_schema)
    for name in names:
        assert tools_for(name).toolset.specs()
    return _misses(arguments._input_schema) - before


def test_after_the_warm_up_a_run_builds_no_tool_schema_nor_text_table() -> None:
    packs = load_scenarios()
    tools_for = pack_tools_for(packs)
    _cleared()
    assert _specs_of_every_pack(tools_for, sorted(packs)) > 0  # cold: the schemas are built on first use
    _cleared()
    warm_up(tools_for, packs)
    assert _specs_of_every_pack(tools_for, sorted(packs)) == 0
    for table in (
        normalize._invisible_table,
        normalize._skeleton_table,
        language.vocabulary,
        language.lexicon,
        language._letter_like_table,
    ):
        assert table.cache_info().currsize == 1, table


async def test_the_server_warms_up_before_it_serves(api_factory: ApiFactory) -> None:
    _cleared()
    api = await api_factory(provider=HEURISTIC)
    assert _misses(arguments._input_schema) > 0  # built at start-up
    assert _specs_of_every_pack(api.running.orchestrator.tools_for, sorted(load_scenarios())) == 0
    assert normalize._skeleton_table.cache_info().currsize == 1
