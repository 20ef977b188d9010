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
            "contradicted: its evidence states otherwise: exit code 1, exit code 2",
        ),
        (
            Derivation(CONTRADICTED, (*FACTS, "E4291", "vault-7"), FACTS, (), invented=("E4291", "vault-7")),
            "fabricated: it names E4291, vault-7, which its verified evidence does not hold",
        ),
        (
            Derivation(INFERENCE, (), (), (), causal=("because", "leads to")),
            "it concludes (because, leads to) from what its evidence names",
        ),
        (Derivation(UNSUPPORTED, (), (), ()), "nothing to check: the claim states no concrete fact"),
        (
            Derivation(UNSUPPORTED, (), (), (), causal=("because",)),
            "nothing to check: the claim states no concrete fact",
        ),
        (Derivation(DIRECT, (), (), ()), "an absence its evidence shows (an empty list or a zero count)"),
        (
            Derivation(UNSUPPORTED, FACTS, FACTS, (), ungrounded=tuple(f"w{i}" for i in range(10))),
            "overstated: says more than its evidence: w0, w1, w2, w3, w4, w5, w6, w7",
        ),
        (
            Derivation(INFERENCE, FACTS, FACTS, (), causal=("because", "so")),
            "all of checkout-api, OOMKilled found; it concludes (because, so)",
        ),
        (
            Derivation(INFERENCE, (*FACTS, "503", "pod-1"), FACTS, (), borrowed=("503", "pod-1")),
            "a conclusion: 503, pod-1 from the run's other evidence or the question",
        ),
        (
            Derivation(UNSUPPORTED, (*FACTS, "503"), FACTS, (), borrowed=("503",)),
            "not bound: it states 503 (another claim's evidence) as observed; only a conclusion may rest on them",
        ),
        (Derivation(DIRECT, FACTS, FACTS, ()), "all of checkout-api, OOMKilled found in the verified evidence"),
    ],
)
def test_each_derivation_says_why_in_the_words_of_its_first_finding(derivation: Derivation, reason: str) -> None:
    assert derivation.reason() == reason


def test_a_borrowed_fact_is_not_missing_and_not_a_fabrication() -> None:
    borrowed = Derivation(INFERENCE, (*FACTS, "503"), FACTS, (), borrowed=("503",))
    assert borrowed.missing == () and not borrowed.fabricated
    missing = Derivation(CONTRADICTED, (*FACTS, "E503"), FACTS, (), invented=("E503",))
    assert missing.missing == ("E503",) and missing.fabricated
    unshown = Derivation(UNSUPPORTED, (*FACTS, "503"), FACTS, (), unshown=("503",))
    assert unshown.missing == ("503",) and not unshown.fabricated
    assert Derivation(CONTRADICTED, FACTS, FACTS, conflicts=("exit code 1",)).fabricated
