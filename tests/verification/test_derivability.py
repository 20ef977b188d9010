"""The deterministic derivability checker behind the embedded Verifier and the guarded Verifier (R-V-1..R-V-5)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from diagnosis.v1 import contracts_pb2 as c
from diagnosis_server.verification.derivability import concrete_facts, derive, derive_claim

DIRECT = c.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
INFERENCE = c.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE
UNSUPPORTED = c.CLAIM_CLASSIFICATION_UNSUPPORTED
CONTRADICTED = c.CLAIM_CLASSIFICATION_CONTRADICTED


def test_facts_are_identifiers_codes_quoted_strings_timestamps_and_numbers_with_units() -> None:
    facts = concrete_facts(
        'checkout-api was OOMKilled (exit code 137) at 2024-10-08T09:42:18Z against 512Mi; "No space left on device" '
        "at serializer.go:88 with ENOSPC, x509 and p99 4576.4 ms"
    )
    assert facts == (
        "No space left on device",
        "2024-10-08T09:42:18Z",
        "checkout-api",
        "OOMKilled",
        "serializer.go:88",
        "ENOSPC",
        "x509",
        "p99",
        "137",
        "512Mi",
        "4576.4ms",
    )


def test_a_timestamp_is_one_fact_and_its_parts_are_not_numbers() -> None:
    assert concrete_facts("first above it at 2024-07-22T15:38:00.250Z") == ("2024-07-22T15:38:00.250Z",)


def test_a_fact_inside_another_is_checked_once() -> None:
    assert concrete_facts("pod checkout-api-7f9c6d8b5-x2k4p of checkout-api") == ("checkout-api-7f9c6d8b5-x2k4p",)


def test_all_facts_found_is_direct_some_is_inference_none_is_unsupported() -> None:
    statement = "checkout-api containers were OOMKilled (exit code 137)"
    assert derive(statement, ["Container checkout-api was OOMKilled (exit code 137)"]).classification == DIRECT
    partial = derive(statement, ["checkout-api OOMKilled"])
    assert partial.classification == INFERENCE and partial.missing == ("137",) and "137" in partial.reason()
    assert derive(statement, ["payments-api is fine"]).classification == UNSUPPORTED
    assert derive(statement, []).classification == UNSUPPORTED
    assert derive("things look bad", ["anything"]).classification == UNSUPPORTED  # nothing concrete to check


def test_matching_ignores_case_and_whitespace_for_names_and_quotes() -> None:
    assert derive('logged "No space left on device"', ["ENOSPC (no space  left on DEVICE)"]).classification == DIRECT


def test_numbers_match_as_whole_numbers() -> None:
    assert derive("orders-db reached 97 in use", ["orders-db", "1997"]).classification == INFERENCE
    assert derive("orders-db reached 97 in use", ["orders-db", "0.97"]).classification == INFERENCE
    assert derive("orders-db reached 97 in use", ["orders-db", "97"]).classification == DIRECT
    assert derive("expiry fell to -4218", ["-4218"]).classification == DIRECT


def test_a_unit_is_found_written_with_the_number_or_beside_it_in_another_binding() -> None:
    assert derive("p99 peaked at 4576.4 ms", ["p99", "4576.4", "ms"]).classification == DIRECT
    assert derive("took 2337 ms", ["slow request took 2337ms"]).classification == DIRECT
    assert derive("p99 peaked at 4576.4 ms", ["p99", "4576.4"]).classification == INFERENCE


def test_a_conflicting_key_value_is_contradicted_unless_the_evidence_also_states_the_claimed_value() -> None:
    assert derive("status=503 from upstream", ["status=200"]).classification == CONTRADICTED
    assert derive("status=503 from upstream", ["status=200", "status=503"]).classification == DIRECT
    assert "status=503" in derive("status=503 from upstream", ["status=200"]).reason()


def test_derive_claim_uses_only_the_claims_own_evidence() -> None:
    claim = c.Claim(claim_id="c1", statement="checkout-api was OOMKilled")
    evidence = [
        c.VerifiedEvidence(claim_id="c2", matched_text="checkout-api OOMKilled"),
        c.VerifiedEvidence(claim_id="c1", matched_text="checkout-api"),
    ]
    assert derive_claim(claim, evidence).classification == INFERENCE


_NAMES = st.from_regex(r"[a-z]{3,8}-[a-z]{2,6}", fullmatch=True)
_NUMBERS = st.decimals(min_value=1, max_value=100000, places=2).map(str)


@given(st.lists(_NAMES, min_size=1, max_size=4), st.lists(_NUMBERS, max_size=3))
def test_a_statement_of_facts_copied_from_the_evidence_is_a_direct_observation(
    names: list[str], numbers: list[str]
) -> None:
    statement = " and ".join([*(f"service {n} failed" for n in names), *(f"a value of {v}" for v in numbers)])
    assert derive(statement, [*names, *numbers]).classification == DIRECT
    # Without any of its evidence it is never a direct observation.
    assert derive(statement, ["unrelated text"]).classification != DIRECT


def test_a_count_unit_must_be_shown_too() -> None:
    assert derive("orders-db has 97 connections", ["orders-db", "97"]).classification == INFERENCE
    assert derive("orders-db has 97 connections", ["orders-db", "97 connections"]).classification == DIRECT
