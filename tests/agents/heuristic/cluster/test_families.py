"""Each fault family diagnosed from its objects, through the whole graph, served as a pack and live: the likely
cause (the answer's summary) names the component and the fault's object together (issue: the whole cluster)."""

from __future__ import annotations

import pytest

from diagnosis.v1 import run_pb2
from tests.agents.heuristic._graph_runs import run_pack
from tests.agents.heuristic.cluster.incidents import FAMILIES
from tests.agents.heuristic.cluster.runs import run_live

RUNNERS = {"pack": run_pack, "live": run_live}


@pytest.mark.parametrize("how", sorted(RUNNERS))
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_likely_cause_names_the_component_and_the_object_that_shows_the_fault(family: str, how: str) -> None:
    build, words = FAMILIES[family]
    run, _ = RUNNERS[how](build())
    assert run.status == run_pb2.RUN_STATUS_SUCCESS, run.error
    summary = run.answer.summary
    for word in words:
        assert word in summary, (word, summary)
