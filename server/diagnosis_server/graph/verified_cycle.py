"""A cycle's completed verification, kept when an evidence retry starts: the answer no failed retry discards."""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.material import AllowedMaterial


@dataclass(frozen=True, slots=True)
class VerifiedCycle:
    """What one cycle's Verifier completed: its input (with the Gatekeeper audit and ceiling it rests on, R-C-5),
    its output and verdicts, and the material the answer may use."""

    cycle: int
    verifier_input: contracts_pb2.VerifierInput
    verifier_output: contracts_pb2.VerifierOutput
    model_verdict: int
    effective_verdict: int
    allowed_material: AllowedMaterial | None
    # Statements of that cycle's Executor claims the material does not allow (the Composer guard's only).
    excluded_statements: tuple[str, ...] = ()

    @property
    def gatekeeper_result(self) -> contracts_pb2.GatekeeperResult:
        return self.verifier_input.gatekeeper_audit

    @property
    def verdict_ceiling(self) -> int:
        return self.verifier_input.verdict_ceiling
