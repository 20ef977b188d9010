"""Full-graph runs where an old OOMKilled sits beside the incident (``window.stale_termination``, R-V-4, R-A-2).

label-printer's container was OOMKilled three days before the question's window and has run since, its restart
counter flat over the window: a red herring. The incident is picker-api's: its database refuses connections. The
old kill may be shown as context, never as a cause (a red herring stated as a cause is a false confirmed statement).
With the same pod's counter rising in the window, the kill is the incident and the run names it.
"""

from __future__ import annotations

from diagnosis.v1 import run_pb2
from tests.agents.heuristic._graph_runs import run_pack
from tests.incidents.corpus.kit import Pack, container, running, status, terminated

NAMESPACE = "fulfilment"
PRINTER_IMAGE = "registry.acme.io/fulfilment/label-printer:2.0.3"
PICKER_IMAGE = "registry.acme.io/fulfilment/picker:4.2.1"
PRINTER_POD = "label-printer-5c7d9b6f48-q8x2m"
THREE_DAYS = 3 * 24 * 60


def _pack(name: str, question: str, printer_restarts: list[float]) -> Pack:
    pack = Pack(
        name,
        title=name,
        description="Written by a test: an old OOMKilled beside the incident.",
        question=question,
        start="2025-09-02T08:00:00Z",
        minutes=30,
    )
    pack.service("picker-api", "http", namespace=NAMESPACE, depends_on=["picker-db"])
    pack.service("picker-db", "database", namespace=NAMESPACE)
    pack.service("label-printer", "http", namespace=NAMESPACE)
    pack.truth(kind="written_by_a_test", summary="not judged: each test asserts its own outcome")
    oom = terminated(pack, "OOMKilled", 137, started=-THREE_DAYS - 90, finished=-THREE_DAYS)
    pack.pod(
        PRINTER_POD,
        NAMESPACE,
        labels={"app": "label-printer", "pod-template-hash": "5c7d9b6f48"},
        node="worker-a.k8s.acme.internal",
        containers=[container("printer", PRINTER_IMAGE)],
        statuses=[
            status(
                pack,
                "printer",
                PRINTER_IMAGE,
                state=running(pack, -THREE_DAYS + 0.5),
                restarts=int(printer_restarts[-1]),
                last=oom,
            )
        ],
        created=-THREE_DAYS - 600,
        owner=("ReplicaSet", "label-printer-5c7d9b6f48"),
        ip="10.42.1.40",
    )
    pack.pod(
        "picker-api-7b9f6c5d84-h2kq9",
        NAMESPACE,
        labels={"app": "picker-api", "pod-template-hash": "7b9f6c5d84"},
        node="worker-b.k8s.acme.internal",
        containers=[container("api", PICKER_IMAGE)],
        statuses=[status(pack, "api", PICKER_IMAGE, state=running(pack, -600))],
        created=-600.5,
        owner=("ReplicaSet", "picker-api-7b9f6c5d84"),
        ip="10.42.1.31",
    )
    restarts = {
        "__name__": "kube_pod_container_status_restarts_total",
        "namespace": NAMESPACE,
        "pod": PRINTER_POD,
        "container": "printer",
        "job": "kube-state-metrics",
    }
    pack.series(restarts, printer_restarts, every=30 / (len(printer_restarts) - 1))
    errors = [0.001] * 12 + [0.31] * 19
    pack.metric("http_requests_error_rate", "picker-api", "ratio", errors)
    pack.metric("http_requests_error_rate", "label-printer", "ratio", [0.001] * 31)
    for minute in range(12, 30):
        pack.log(
            minute + 0.2,
            "picker-api",
            "ERROR",
            'psycopg2.OperationalError: connection to server at "picker-db" (10.96.14.3), port 5432 failed: '
            "Connection refused",
        )
    return pack


def _stated(run: run_pb2.DiagnosisRun) -> list[str]:
    """Everything the answer states: its summary, confirmed facts and possible directions."""
    answer = run.answer
    return [answer.summary, *(f.text for f in answer.confirmed_facts), *(d.text for d in answer.possible_directions)]


def test_an_old_oom_kill_beside_the_incident_is_never_stated_as_its_cause() -> None:
    run, _ = run_pack(_pack("stale-oom-beside-refusals", "Why is picker-api returning 500s?", [4.0] * 31))
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    assert "OOMKilled" not in run.answer.summary, run.answer.summary
    facts = [f.text for f in run.answer.confirmed_facts]
    assert any("picker-db" in text and "Connection refused" in text for text in facts), facts
    old = [text for text in _stated(run) if "OOMKilled" in text]
    assert old, "the old kill is context the answer may show"
    for text in old:
        # Shown at most as what happened, with when it finished: never as the explanation.
        assert "explains" not in text and "finished at 2025-08-30" in text, text


def test_the_same_kill_with_restarts_rising_in_the_window_is_the_incident() -> None:
    rising = [1.0] * 10 + [2.0] * 10 + [4.0] * 11
    run, _ = run_pack(_pack("oom-in-window", "Why is label-printer restarting?", rising))
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    assert "label-printer" in run.answer.summary and "OOMKilled" in run.answer.summary, run.answer.summary
