"""What the client tests know of the real server they start (``tests.support.serve``): its tokens, a finished run."""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis.v1 import diagnosis_service_pb2, run_pb2

# tenant -> token of the server started with DIAGNOSIS_AUTH_TOKENS.
AUTH_TOKENS = {"acme": "acme-token-1", "zenith": "zenith-token-2"}


@dataclass(frozen=True)
class FinishedRun:
    """A Diagnose stream read to its end, and its final run."""

    responses: list[diagnosis_service_pb2.DiagnoseResponse]
    run: run_pb2.DiagnosisRun
