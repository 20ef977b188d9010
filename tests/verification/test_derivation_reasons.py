"""The reason a derivation gives, word for word: it is what the evaluation records for a claim's ceiling (R-P-1)."""

from __future__ import annotations

import pytest

from diagnosis.v1 import contracts_pb2 as c
from diagnosis_server.verification.derivability import Derivation

DIRECT = c.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
INFERENCE = c.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE
UNSUPPORTED = c.CLAIM_CLASSIFICATION_UNSUPPORTED
CONTRADICTED = c.CLAIM_CLASSIFICATION_CONTRADICTED
FACTS = ("checkout-api", "OOMKilled")


@pytest.mark.parametrize(
    ("derivation", "reason"),
    [
        (
            Derivation(CONTRADICTED, FACTS, FACTS, conflicts=("exit code 1", "exit code 2")),
            "evidence conflicts with exit code 1, exit code 2",
        ),
        (
            Derivation(CONTRADICTED, (*FACTS, "E4291", "vault-7"), FACTS, ()),
            "names E4291, vault-7, which its verified evidence does not contain",
        ),
        (
            Derivation(INFERENCE, (), (), (), causal=("because", "leads to")),
            "it concludes (because, leads to) from what its evidence names",
        ),
        (Derivation(UNSUPPORTED, (), (), ()), "the claim states no concrete fact to check"),
        (Derivation(DIRECT, (), (), (), causal=("because",)), "the claim states no concrete fact to check"),
        (
            Derivation(UNSUPPORTED, FACTS, FACTS, (), ungrounded=tuple(f"w{i}" for i in range(10))),
            "says more than its evidence: w0, w1, w2, w3, w4, w5, w6, w7",
        ),
        (
            Derivation(INFERENCE, FACTS, FACTS, (), causal=("because", "so")),
            "all of checkout-api, OOMKilled found; it concludes (because, so)",
        ),
        (
            Derivation(INFERENCE, (*FACTS, "503", "pod-1"), FACTS, (), borrowed=("503", "pod-1")),
            "its own evidence does not show 503, pod-1, which other verified evidence holds",
        ),
        (Derivation(DIRECT, FACTS, FACTS, ()), "all of checkout-api, OOMKilled found in the verified evidence"),
    ],
)
def test_each_derivation_says_why_in_the_words_of_its_first_finding(derivation: Derivation, reason: str) -> None:
    assert derivation.reason() == reason


def test_a_borrowed_fact_is_not_missing_and_not_a_fabrication() -> None:
    borrowed = Derivation(INFERENCE, (*FACTS, "503"), FACTS, (), borrowed=("503",))
    assert borrowed.missing == () and not borrowed.fabricated
    missing = Derivation(CONTRADICTED, (*FACTS, "503"), FACTS, ())
    assert missing.missing == ("503",) and missing.fabricated
    assert Derivation(CONTRADICTED, FACTS, FACTS, conflicts=("exit code 1",)).fabricated
