"""Whole-cluster snapshots (two apps, every object, the Normal events and old warnings real clusters hold), one
fault each of the scheduling, admission, start-up and infrastructure families, through the whole graph as packs and
live: the likely cause names the faulty component and the fault in its own words; a healthy cluster is "No
incident"; an ended warning beside a current fault is never the cause (issue: the whole cluster; R-V-4)."""

from __future__ import annotations

import pytest

from diagnosis.v1 import run_pb2
from tests.agents.heuristic._graph_runs import run_pack
from tests.agents.heuristic.cluster.realistic import CASES, hit, stated
from tests.agents.heuristic.cluster.runs import run_live

RUNNERS = {"pack": run_pack, "live": run_live}


@pytest.mark.parametrize("how", sorted(RUNNERS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_likely_cause_names_the_faulty_component_and_its_fault(name: str, how: str) -> None:
    case = CASES[name]
    run, _ = RUNNERS[how](case.pack())
    assert run.status == run_pb2.RUN_STATUS_SUCCESS, run.failure_reason
    component, fault = hit(case, run.answer.summary)
    assert component and fault, (case.component, case.fault, run.answer.summary)


def test_a_cause_is_read_in_its_own_words_not_in_the_text_it_quotes() -> None:
    summary = (
        "Likely cause (inferred from c1): rate cannot be scheduled: nodes have a taint: node a has taint b "
        '("0/4 nodes are available: 3 node(s) were unschedulable."), which explains the observed symptoms'
    )
    assert stated(summary) == "rate cannot be scheduled: nodes have a taint: node a has taint b"
    assert hit(CASES["cordoned"], summary) == (True, False)
