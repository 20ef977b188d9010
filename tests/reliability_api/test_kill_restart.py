"""The server killed with SIGKILL in the middle of a run, then restarted on the same store.

`slow_serve.py` is `diagnosis serve` with the embedded heuristic agents each sleeping before they
answer, so a run is in flight when the kill lands (after its first event is committed). Nothing of the
dead process runs again; what the store holds is what it committed, node by node (R-S-3, R-S-4):

- restarted under the same DIAGNOSIS_INSTANCE_ID, the process has an identity of its own (the id is a
  prefix: two replicas given one id must never take each other's live runs for a previous life), so the
  run is swept like any other instance's once its heartbeat is older than DIAGNOSIS_ORPHAN_STALE_AFTER_S;
- restarted under another instance id, the run might be alive elsewhere: it stays RUNNING while the new
  instance has not yet seen its heartbeat unchanged for DIAGNOSIS_ORPHAN_STALE_AFTER_S (6 s here, on the new
  instance's monotonic clock; no stamp is compared with a clock), then the orphan sweep interrupts it. The
  sweep runs every SLOW_SERVE_HEARTBEAT_S.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, run_pb2
from diagnosis_server.store import INTERRUPTED
from tests.support.serve import ServeProcess, start_serve

from .helpers import assert_consistent, read_stored_run

QUESTION = "Why is checkout-api returning 503s?"
SLOW = {"SLOW_SERVE_AGENT_DELAY_S": "0.25"}


@pytest.fixture
def servers() -> Iterator[list[ServeProcess]]:
    started: list[ServeProcess] = []
    yield started
    for server in started:
        server.stop(timeout=10)


def _stub(channel: grpc.Channel) -> diagnosis_service_pb2_grpc.DiagnosisServiceStub:
    return diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)


def _kill_mid_run(server: ServeProcess) -> str:
    """Starts a run, waits for its first event, SIGKILLs the server; the run id. The stream fails, never
    ends as if the run were complete."""
    with grpc.insecure_channel(server.target) as channel:
        request = pb.DiagnoseRequest(question=QUESTION, context=pb.RequestContext(scenario="checkout-oom"))
        call = _stub(channel).Diagnose(request, timeout=30)
        started = next(call)
        assert started.WhichOneof("kind") == "started"
        assert next(call).WhichOneof("kind") == "event"
        server.kill()
        rest: list[pb.DiagnoseResponse] = []
        with pytest.raises(grpc.RpcError) as caught:
            rest.extend(call)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
        assert all(message.WhichOneof("kind") == "event" for message in rest)  # never the final run
    return started.run_id


def _assert_left_running(database: Path, run_id: str, owner: str) -> list[run_pb2.OrchestrationEvent]:
    stored = read_stored_run(database, run_id)
    assert stored.run.status == run_pb2.RUN_STATUS_RUNNING
    assert stored.owner.startswith(owner)
    assert stored.events, "the kill landed before the first event was committed"
    assert stored.run.orchestration_trace.terminal_node == run_pb2.NODE_NAME_UNSPECIFIED
    assert_consistent(stored)
    return stored.events


def _assert_interrupted(
    server: ServeProcess, database: Path, run_id: str, events: list[run_pb2.OrchestrationEvent]
) -> None:
    """FAILED (INTERRUPTED) over gRPC and in the file; its events exactly those committed before the kill."""
    with grpc.insecure_channel(server.target) as channel:
        stub = _stub(channel)
        run = stub.GetRun(pb.GetRunRequest(run_id=run_id), timeout=10).run
        assert run.status == run_pb2.RUN_STATUS_FAILED
        assert run.failure_reason == INTERRUPTED
        assert run.HasField("completed_at")
        watched = list(stub.WatchRun(pb.WatchRunRequest(run_id=run_id), timeout=10))
    assert [m.event for m in watched[:-1]] == events
    ended = watched[-1].ended
    assert (ended.status, ended.reason, ended.last_sequence) == (run_pb2.RUN_STATUS_FAILED, INTERRUPTED, len(events))
    stored = read_stored_run(database, run_id)
    assert stored.events == events  # nothing was appended after the kill
    assert_consistent(stored)


def _assert_new_runs_work(server: ServeProcess) -> None:
    with grpc.insecure_channel(server.target) as channel:
        request = pb.DiagnoseRequest(question=QUESTION, context=pb.RequestContext(scenario="checkout-oom"))
        final = list(_stub(channel).Diagnose(request, timeout=60))[-1].run
    assert final.status == run_pb2.RUN_STATUS_SUCCESS
    assert final.answer_text.strip()


def test_sigkill_mid_run_then_restart_as_the_same_instance_sweeps_it_once_stale(
    tmp_path: Path, servers: list[ServeProcess]
) -> None:
    database = tmp_path / "store.db"
    env = SLOW | {"DIAGNOSIS_INSTANCE_ID": "node-a"}
    servers.append(first := start_serve(tmp_path, database, env=env, slow=True, log_name="first.log"))
    run_id = _kill_mid_run(first)
    events = _assert_left_running(database, run_id, "node-a-")

    env |= {"DIAGNOSIS_ORPHAN_STALE_AFTER_S": "2", "SLOW_SERVE_HEARTBEAT_S": "0.1"}
    servers.append(second := start_serve(tmp_path, database, env=env, slow=True, log_name="second.log"))
    deadline = time.monotonic() + 15
    while read_stored_run(database, run_id).run.status == run_pb2.RUN_STATUS_RUNNING:
        assert time.monotonic() < deadline, second.log_text()[-3000:]
        time.sleep(0.1)
    _assert_interrupted(second, database, run_id, events)
    assert '"orphan_runs_interrupted"' in second.log_text()
    _assert_new_runs_work(second)


def test_sigkill_mid_run_then_another_instance_sweeps_the_stale_run(
    tmp_path: Path, servers: list[ServeProcess]
) -> None:
    database = tmp_path / "store.db"
    servers.append(first := start_serve(tmp_path, database, env=SLOW | {"DIAGNOSIS_INSTANCE_ID": "node-a"}, slow=True))
    run_id = _kill_mid_run(first)
    events = _assert_left_running(database, run_id, "node-a-")

    env = SLOW | {
        "DIAGNOSIS_INSTANCE_ID": "node-b",
        "SLOW_SERVE_HEARTBEAT_S": "0.1",
        # Long enough that a loaded machine's start-up, watch and replay stay well inside it.
        "DIAGNOSIS_ORPHAN_STALE_AFTER_S": "6",
    }
    servers.append(second := start_serve(tmp_path, database, env=env, slow=True, log_name="second.log"))
    with grpc.insecure_channel(second.target) as channel:
        stub = _stub(channel)
        # A watcher of the orphan follows it through the store (this instance does not run it).
        watch = stub.WatchRun(pb.WatchRunRequest(run_id=run_id), timeout=30)
        assert [next(watch).event for _ in events] == events
        time.sleep(0.5)  # several sweeps: another owner's run not yet watched unchanged for 6 s is left alone
        assert stub.GetRun(pb.GetRunRequest(run_id=run_id), timeout=10).run.status == run_pb2.RUN_STATUS_RUNNING

        ended = next(watch).ended  # the sweep interrupts it; the watcher sees how it ended
        assert (ended.status, ended.reason, ended.last_sequence) == (
            run_pb2.RUN_STATUS_FAILED,
            INTERRUPTED,
            len(events),
        )
    _assert_interrupted(second, database, run_id, events)
    assert read_stored_run(database, run_id).owner.startswith("node-a-")  # interrupted, not taken over
    _assert_new_runs_work(second)
