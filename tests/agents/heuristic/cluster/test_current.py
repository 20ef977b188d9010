"""A cause must be current: a FailedCreate whose ReplicaSet now has its pods ready, and a FailedScheduling the pod
got past, are context with their time, never the likely cause (issue: the whole cluster, item 5); a control-plane
component that is down is named when pods wait with no scheduling event."""

from __future__ import annotations

import pytest

from diagnosis.v1 import run_pb2
from tests.agents.heuristic._graph_runs import run_pack
from tests.agents.heuristic.cluster import incidents
from tests.agents.heuristic.cluster.runs import run_live

RUNNERS = {"pack": run_pack, "live": run_live}


def _stated(run: run_pb2.DiagnosisRun) -> list[str]:
    answer = run.answer
    return [answer.summary, *(f.text for f in answer.confirmed_facts), *(d.text for d in answer.possible_directions)]


@pytest.mark.parametrize("how", sorted(RUNNERS))
def test_a_failed_create_whose_replicaset_has_its_pods_is_context_with_its_time(how: str) -> None:
    run, _ = RUNNERS[how](incidents.old_failed_create_beside_a_crash())
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    summary = run.answer.summary
    assert "payments" not in summary and "quota" not in summary, summary
    old = [text for text in _stated(run) if "FailedCreate" in text or "exceeded quota" in text]
    for text in old:
        assert "explains" not in text, text
    assert any("2 of 2 pods ready" in text and "last reported at" in text for text in old), old


@pytest.mark.parametrize("how", sorted(RUNNERS))
def test_a_failed_scheduling_the_pod_got_past_is_never_the_cause(how: str) -> None:
    run, _ = RUNNERS[how](incidents.scheduled_after_failed_scheduling())
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    for text in _stated(run):
        assert not ("cannot be scheduled" in text and "explains" in text), text
    assert "cannot be scheduled" not in run.answer.summary, run.answer.summary


@pytest.mark.parametrize("how", sorted(RUNNERS))
def test_pods_pending_with_no_scheduling_event_name_the_scheduler_that_is_down(how: str) -> None:
    run, _ = RUNNERS[how](incidents.kube_scheduler_down())
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    summary = run.answer.summary
    assert "kube-scheduler" in summary and "not running" in summary, summary
    assert "recommender-7c9d5f8b6a-k4m2p" in summary and "no scheduling event" in summary, summary


def test_a_container_throttled_at_its_cpu_limit_is_the_cause_with_its_counters_and_limit() -> None:
    run, invocations = run_pack(incidents.cpu_throttled())
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    summary = run.answer.summary
    assert "cartservice" in summary and "CPU limit" in summary and "500m" in summary, summary
    assert "container_cpu_cfs_throttled_periods_total" in summary, summary
    queries = {i.arguments.fields["query"].string_value for i in invocations if i.tool_name == "prometheus.query_range"}
    assert 'container_cpu_cfs_throttled_periods_total{pod=~"cartservice-.*"}' in queries
