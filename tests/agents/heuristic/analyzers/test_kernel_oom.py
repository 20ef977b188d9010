"""The kernel's OOM killer joined to a workload by pid: a Node's ``OOMKilling`` event ("Memory cgroup out of memory:
Killed process <pid> (<name>)", from node-problem-detector's kernel monitor) and the workload's own line saying
that pid died of SIGKILL. The cause binds both sides verbatim (R-C-1, R-GK-5) and states only what they hold
(R-V-1, R-V-4).
"""

from __future__ import annotations

from collections.abc import Sequence

from diagnosis_server.agents.heuristic.analyzers.kernel_oom import kernel_oom_findings
from diagnosis_server.agents.heuristic.diagnosis import detect
from diagnosis_server.agents.heuristic.findings import Finding, Role
from diagnosis_server.agents.heuristic.observations import Observation, log_lines

from ._checks import assert_sound, one, sound
from ._shapes import event_list, k8s_event, loki, pack_event, pack_events, pod_logs

NODE = "pool-b-node-3"
KILL = (
    "Memory cgroup out of memory: Killed process 31877 (celery) total-vm:2104552kB, anon-rss:1522340kB, "
    "file-rss:10924kB, shmem-rss:0kB, UID:1000 pgtables:3412kB oom_score_adj:984"
)
CELERY_LOST = (
    "[2025-02-11 06:52:01,532: ERROR/MainProcess] Process 'ForkPoolWorker-3' pid:31877 exited with 'signal 9 (SIGKILL)'"
)
WORKER_POD = "thresher-worker-7d9f8c6b5d-q2w8z"


def node_oom(message: str = KILL, kind: str = "Node", name: str = NODE) -> Observation:
    return event_list(k8s_event(kind, name, "OOMKilling", message, 12, component="kernel-monitor"))


def joined(observations: Sequence[Observation]) -> list[Finding]:
    lines = [line for obs in observations for line in log_lines(obs)]
    return kernel_oom_findings(observations, lines)


def test_a_node_oom_kill_and_the_workloads_sigkilled_pid_are_one_cause() -> None:
    """celery's "pid:31877 exited with 'signal 9 (SIGKILL)'" and the node's "Killed process 31877 (celery)": the
    workload's processes were killed when memory ran out, a cause of strength 4 about the workload."""
    observations = [
        node_oom(),
        pod_logs(WORKER_POD, "[2025-02-11 06:51:58,001: INFO/MainProcess] Task accepted", CELERY_LOST),
    ]
    findings = joined(observations)
    assert_sound(findings, observations)
    finding = one(findings, "oom")
    assert (finding.role, finding.service, finding.strength) == (Role.CAUSE, "thresher-worker", 4)
    assert finding.detail == "Memory cgroup out of memory: Killed process 31877 (celery)"
    assert f"node {NODE} reports OOMKilling" in finding.statement
    paths = [b.raw_path for b in finding.bindings]
    assert paths == ["/pod", "/items/0/involvedObject/name", "/items/0/reason", "/items/0/message", "/lines/1"]
    assert "pid:31877" in finding.bindings[-1].matched_text


def test_a_gunicorn_worker_sent_sigkill_in_loki_is_joined_with_its_time() -> None:
    """gunicorn's arbiter writes "Worker (pid:N) was sent SIGKILL! Perhaps out of memory?"; a Loki line carries
    its time, which is the cause's onset; a pack's Node record is read like a core/v1 Event."""
    line = "[2025-02-11 06:52:01 +0000] [1] [ERROR] Worker (pid:40112) was sent SIGKILL! Perhaps out of memory?"
    observations = [
        pack_events(
            pack_event(
                12, None, "Node", NODE, "OOMKilling", "Memory cgroup out of memory: Killed process 40112 (gunicorn)"
            )
        ),
        loki(({"app": "grain-api", "namespace": "greenfield"}, [(12.1, line)])),
    ]
    findings = joined(observations)
    assert_sound(findings, observations)
    finding = one(findings, "oom")
    assert finding.service == "grain-api"
    assert finding.onset is not None and finding.onset.strftime("%H:%M:%S") == "06:52:06"
    assert finding.bindings[0].raw_path == "/data/result/0/stream/app"
    assert finding.bindings[1].raw_path == "/events/0/object"


def test_no_join_without_the_same_pid_a_sigkill_or_a_node() -> None:
    """Another pid, a SIGTERM, no node event, or an OOMKilling about something other than a Node: no cause."""
    other_pid = CELERY_LOST.replace("31877", "31878")
    sigterm = CELERY_LOST.replace("'signal 9 (SIGKILL)'", "'signal 15 (SIGTERM)'")
    assert joined([node_oom(), pod_logs(WORKER_POD, other_pid)]) == []
    assert joined([node_oom(), pod_logs(WORKER_POD, sigterm)]) == []
    assert joined([pod_logs(WORKER_POD, CELERY_LOST)]) == []
    assert joined([node_oom(kind="Pod", name=WORKER_POD), pod_logs(WORKER_POD, CELERY_LOST)]) == []
    # A node event whose message names no killed process is no join either.
    assert joined([node_oom("System OOM encountered"), pod_logs(WORKER_POD, CELERY_LOST)]) == []


def test_one_cause_per_workload() -> None:
    second = CELERY_LOST.replace("ForkPoolWorker-3", "ForkPoolWorker-5")
    observations = [node_oom(), pod_logs(WORKER_POD, CELERY_LOST, second)]
    assert len(sound(joined(observations), observations)) == 1


def test_detect_states_the_kill_about_the_workload_not_the_node() -> None:
    """Through ``detect``: the node's event is no finding of its own (a Node is no workload); the join is."""
    observations = [node_oom(), pod_logs(WORKER_POD, CELERY_LOST)]
    findings = detect(observations)
    assert_sound(findings, observations)
    assert all(f.service != NODE for f in findings)
    oom = one(findings, "oom")
    assert (oom.service, oom.role) == ("thresher-worker", Role.CAUSE)
