"""The deterministic derivability checker behind the embedded Verifier and the guarded Verifier (R-V-1..R-V-5)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diagnosis.v1 import contracts_pb2 as c
from diagnosis_server.verification.derivability import concrete_facts, derive, derive_claim

DIRECT = c.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
INFERENCE = c.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE
OVERSTATED = c.CLAIM_CLASSIFICATION_OVERSTATED
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


@pytest.mark.parametrize(
    ("statement", "facts"),
    [
        ("checkout-api logged ERROR 503", ("checkout-api", "503")),  # a word of the vocabulary
        ("the CULPRIT is checkout-api", ("checkout-api",)),  # a causal word the vocabulary lacks
        ("THe checkout-api pod was OOMKilled", ("checkout-api", "OOMKilled")),  # a stop word, shift held too long
    ],
)
def test_an_english_word_in_capitals_is_not_a_fact(statement: str, facts: tuple[str, ...]) -> None:
    assert concrete_facts(statement) == facts


def test_a_fact_named_twice_is_one_fact() -> None:
    assert concrete_facts("checkout-api was OOMKilled, then OOMKilled again") == ("checkout-api", "OOMKilled")


def test_a_fact_written_right_after_a_closing_quote_is_still_a_fact() -> None:
    """Glued to a quoted string, an identifier is still checked: it cannot hide a fabrication (R-V-4)."""
    assert concrete_facts("pod 'checkout-1'OOMKilled") == ("checkout-1", "OOMKilled")
    assert derive("pod 'checkout-1'OOMKilled", ["checkout-1"]).missing == ("OOMKilled",)


QUOTE = 'checkout-api logged "connection refused by upstream"'


@pytest.mark.parametrize(
    ("matched", "others", "classification", "borrowed"),
    [
        (["checkout-api", "connection refused", "by upstream"], [], DIRECT, ()),
        # Another claim's evidence holds it: outside this claim's bound text, so unsupported for it (never shown).
        (["checkout-api"], ["connection refused", "by upstream"], UNSUPPORTED, ("connection refused by upstream",)),
        (["checkout-api"], ["connection refused by upstream"], UNSUPPORTED, ("connection refused by upstream",)),
    ],
    ids=["split-in-own", "split-in-others", "spaced-in-others"],
)
def test_a_quoted_line_is_found_across_items_and_spaces_in_own_or_other_evidence(
    matched: list[str], others: list[str], classification: int, borrowed: tuple[str, ...]
) -> None:
    """A statement split across lines or items is found in their concatenation without whitespace."""
    derivation = derive(QUOTE, matched, run_texts=others)
    assert (derivation.classification, derivation.borrowed, derivation.missing) == (classification, borrowed, ())


def test_all_facts_found_is_direct_a_missing_fact_is_fabricated_nothing_concrete_is_unsupported() -> None:
    """R-V-4: a statement naming a code its evidence does not hold fabricates it: contradicted, never inference."""
    statement = "checkout-api containers were OOMKilled (exit code 137)"
    assert derive(statement, ["Container checkout-api was OOMKilled (exit code 137)"]).classification == DIRECT
    partial = derive(statement, ["checkout-api crashed"])
    assert partial.classification == CONTRADICTED and "137" in partial.missing and "137" in partial.reason()
    assert partial.fabricated
    assert derive(statement, ["payments-api is fine"]).classification == CONTRADICTED
    assert derive(statement, []).classification == CONTRADICTED
    assert derive("things look bad", ["anything"]).classification == UNSUPPORTED  # nothing concrete to check


def test_an_error_code_found_nowhere_is_fabricated() -> None:
    """The R-V-4 defect: 'E4291' and 'payment vault' are in no evidence; some facts found is not enough."""
    statement = "checkout-api fails with error code E4291 from the payment vault"
    derivation = derive(statement, ["checkout-api", "status=503"])
    assert derivation.classification == CONTRADICTED and derivation.missing == ("E4291",)


@pytest.mark.parametrize(
    "statement",
    [
        "checkout-api containers were OOMKilled, which broke checkout",
        "checkout-api containers were OOMKilled because of the 512Mi limit",
        "the root cause is that checkout-api containers were OOMKilled",
        "checkout-api containers were OOMKilled due to the 512Mi limit",
        "checkout-api containers were OOMKilled; this led to the errors",
        "checkout-api containers were OOMKilled, which resulted in errors",
        "checkout-api containers were OOMKilled, therefore requests fail",
        "checkout-api containers were OOMKilled, which is why requests fail",
        "checkout-api containers were **OOMKilled**, which ＣＡＵＳＥＤ the errors",
        "checkout-api containers were OOMKilled, which c\u200baused the errors",
    ],
)
def test_causal_or_conclusive_language_is_never_an_observation(statement: str) -> None:
    evidence = ["Container checkout-api was OOMKilled; memory limit 512Mi", "errors"]
    assert derive(statement, evidence).classification == INFERENCE


def test_quoted_causal_words_are_evidence_not_a_conclusion() -> None:
    statement = 'checkout-api logged "Caused by: java.io.IOException: Broken pipe"'
    assert derive(statement, ["Caused by: java.io.IOException: Broken pipe", "checkout-api"]).classification == DIRECT


def test_words_beyond_the_evidence_and_the_vocabulary_are_overstated() -> None:
    evidence = ["checkout-api", "status=503"]
    assert derive("checkout-api returns 503 to its callers", evidence).classification == DIRECT
    # English words are the neutral lexicon's ("payment", "rejects"); a name the evidence lacks is not.
    overstated = derive("checkout-api returns 503 because the payment vaultd rejects tokens", evidence)
    assert overstated.classification == OVERSTATED and overstated.ungrounded == ("vaultd",)
    # The question's own words are the user's: they ground a statement's words, never its facts.
    question = "why does the payment vaultd reject checkout-api?"
    assert (
        derive(
            "checkout-api returns 503 as the payment vaultd rejects it", evidence, grounding=[question]
        ).classification
        == DIRECT
    )


def test_a_different_name_is_not_found() -> None:
    assert derive("checkout-svc returns 503", ["checkout-api", "503"]).classification == CONTRADICTED


@pytest.mark.parametrize(
    "spelled",
    [
        "ｃｈｅｃｋｏｕｔ-api returns 503",  # fullwidth letters
        "chеckout-api returns 503",  # a Cyrillic е
        "check\u200bout-api returns 503",  # a zero-width space
        "check\u00adout-api returns 503",  # a soft hyphen
        "**checkout-api** returns 503",  # markdown emphasis
    ],
)
def test_variant_spellings_of_a_fact_are_the_same_fact(spelled: str) -> None:
    assert derive(spelled, ["checkout-api", "status=503"]).classification == DIRECT


def test_matching_ignores_case_and_whitespace_for_names_and_quotes() -> None:
    assert derive('logged "No space left on device"', ["ENOSPC (no space  left on DEVICE)"]).classification == DIRECT


def test_numbers_match_as_whole_numbers() -> None:
    assert derive("orders-db reached 97 in use", ["orders-db", "1997"]).classification == UNSUPPORTED
    assert derive("orders-db reached 97 in use", ["orders-db", "0.97"]).classification == UNSUPPORTED
    assert derive("orders-db reached 97 in use", ["orders-db", "97"]).classification == DIRECT
    assert derive("expiry fell to -4218", ["-4218"]).classification == DIRECT


def test_a_unit_is_found_written_with_the_number_or_beside_it_in_another_binding() -> None:
    assert derive("p99 peaked at 4576.4 ms", ["p99", "4576.4", "ms"]).classification == DIRECT
    assert derive("took 2337 ms", ["slow request took 2337ms"]).classification == DIRECT
    assert derive("p99 peaked at 4576.4 ms", ["p99", "4576.4"]).classification == UNSUPPORTED


def test_a_unit_is_found_as_the_base_unit_suffix_of_a_metric_name_in_another_binding() -> None:
    """Prometheus names state their unit (``_seconds``, ``_milliseconds``/``_ms``, ``_bytes``): a sample and the
    series' name hold ``1.52 s``; a name of another unit, or a word that only contains the suffix, does not."""
    name = "grpc_server_handling_seconds:p99"
    assert derive("p99 rose from 0.14 s to 1.52 s", ["p99", "0.14", "1.52", name]).classification == DIRECT
    assert derive("p99 rose to 900 ms", ["p99", "900", "api_request_duration_p99_ms"]).classification == DIRECT
    assert derive("p99 rose to 1.52 ms", ["p99", "1.52", name]).classification == CONTRADICTED
    assert derive("p99 rose to 1.52 s", ["p99", "1.52", "p99_milliseconds"]).classification == CONTRADICTED
    assert derive("p99 rose to 1.52 s", ["p99", "1.52", "timeseconds"]).classification == UNSUPPORTED


def test_a_conflicting_key_value_is_contradicted_unless_the_evidence_also_states_the_claimed_value() -> None:
    assert derive("status=503 from upstream", ["status=200"]).classification == CONTRADICTED
    assert derive("status=503 from upstream", ["status=200", "status=503"]).classification == DIRECT
    assert "status=503" in derive("status=503 from upstream", ["status=200"]).reason()


@pytest.mark.parametrize(
    ("statement", "evidence", "reason"),
    [
        (
            "status=200 from upstream",
            ["status=500", "status=502"],
            "contradicted: its evidence states otherwise: status=200 (evidence: 500, 502)",
        ),
        (
            "phase=Running now",
            ["phase=Pending"],
            "contradicted: its evidence states otherwise: phase=running (evidence: pending)",
        ),
    ],
)
def test_a_conflict_names_the_claimed_value_and_every_value_of_the_evidence(
    statement: str, evidence: list[str], reason: str
) -> None:
    """The reason is recorded for the claim's ceiling (R-P-1): values in their normalized, lowercase form."""
    assert derive(statement, evidence).reason() == reason


def test_derive_claim_observes_only_its_own_evidence_and_infers_from_the_runs() -> None:
    """A fact only another claim's evidence holds is not observed by this claim, nor a ground for its conclusion:
    unsupported for it (R-V-5). A fact no verified evidence holds is fabricated (R-V-4)."""
    claim = c.Claim(claim_id="c1", statement="checkout-api was OOMKilled")
    evidence = [
        c.VerifiedEvidence(claim_id="c2", matched_text="checkout-api OOMKilled"),
        c.VerifiedEvidence(claim_id="c1", matched_text="checkout-api"),
    ]
    derivation = derive_claim(claim, evidence)
    assert derivation.classification == UNSUPPORTED and derivation.borrowed == ("OOMKilled",)
    assert not derivation.fabricated
    assert derive_claim(claim, evidence[1:]).classification == CONTRADICTED


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
    assert derive("orders-db has 97 connections", ["orders-db", "97"]).classification == UNSUPPORTED
    assert derive("orders-db has 97 connections", ["orders-db", "97 connections"]).classification == DIRECT


@pytest.mark.requirement("R-V-2")
@pytest.mark.parametrize(
    ("statement", "bound", "classification"),
    [
        ("No deploys in the window.", ["total: 0"], DIRECT),
        ("Nothing deployed in the window.", ["[]"], DIRECT),
        ("no deploys.", ["0"], DIRECT),
        ("No deploys in the window.", ["total: 3"], UNSUPPORTED),  # a count above zero shows no absence
        ("Deploys happened in the window.", ["total: 0"], UNSUPPORTED),  # no absence said
        ("No deploys, so the release is not the cause.", ["total: 0"], UNSUPPORTED),  # a conclusion, no fact
        ("No deploys in the window, definitely.", ["total: 0"], UNSUPPORTED),  # an intensity word it cannot ground
    ],
)
def test_an_absence_bound_to_a_zero_count_or_an_empty_list_is_observed(
    statement: str, bound: list[str], classification: int
) -> None:
    derivation = derive(statement, bound, bound=bound, grounding=["deploys window"])
    assert derivation.classification == classification, derivation.reason()


def test_a_structured_lines_fields_quoted_as_one_message_are_found_part_by_part() -> None:
    line = '{"level":"fatal","msg":"invalid configuration","error":"required key SMTP_RELAY_HOST missing value"}'
    joined = 'it dies with "invalid configuration: required key SMTP_RELAY_HOST missing value"'
    assert derive(joined, [line]).classification == DIRECT
    assert derive(joined.replace("RELAY_HOST", "PORT"), [line]).classification != DIRECT
    # a part of one word is no field of its own
    assert derive('it dies with "configuration: required key SMTP_RELAY_HOST"', [line]).classification != DIRECT
