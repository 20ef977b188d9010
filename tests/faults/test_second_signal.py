"""A second SIGTERM during the shutdown grace: the grace ends at once, and the runs still going are marked
FAILED (INTERRUPTED) before the process exits (it used to die at once, leaving them RUNNING)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import grpc

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, run_pb2
from diagnosis_server.store import INTERRUPTED
from tests.reliability_api.helpers import read_stored_run
from tests.support.serve import start_serve


def test_second_sigterm_interrupts_runs_before_exiting(tmp_path: Path) -> None:
    database = tmp_path / "store.db"
    env = {"SLOW_SERVE_AGENT_DELAY_S": "5", "DIAGNOSIS_SHUTDOWN_GRACE_S": "120"}
    server = start_serve(tmp_path, database, env=env, slow=True)
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
            request = pb.DiagnoseRequest(question="Why is checkout-api returning 503s?")
            call = stub.Diagnose(request, timeout=60)
            run_id = next(call).run_id
            server.process.send_signal(signal.SIGTERM)
            time.sleep(0.5)
            assert server.process.poll() is None  # in its grace, waiting for the run
            started = time.monotonic()
            server.process.send_signal(signal.SIGTERM)
            code = server.process.wait(timeout=20)
            assert time.monotonic() - started < 15  # not the 120 s grace
    finally:
        server.stop(timeout=5)
    assert code == 0
    stored = read_stored_run(database, run_id)
    assert (stored.run.status, stored.run.failure_reason) == (run_pb2.RUN_STATUS_FAILED, INTERRUPTED)
    assert '"shutdown_hurried"' in server.log_text()
