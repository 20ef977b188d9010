"""The Verifier's vocabulary: claim classifications as enum values and as the words of its JSON reply."""

from __future__ import annotations

from diagnosis.v1 import contracts_pb2

C = contracts_pb2.ClaimClassification

DIRECT = C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
INFERENCE = C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE
OVERSTATED = C.CLAIM_CLASSIFICATION_OVERSTATED
UNSUPPORTED = C.CLAIM_CLASSIFICATION_UNSUPPORTED
EXTERNAL = C.CLAIM_CLASSIFICATION_EXTERNAL_UNKNOWN
CONTRADICTED = C.CLAIM_CLASSIFICATION_CONTRADICTED

# The classifications a Verifier reply may give, as it spells them.
CLASSIFICATION_WORDS = (
    "direct_observation",
    "reasonable_inference",
    "overstated",
    "unsupported",
    "external_unknown",
    "contradicted",
)
