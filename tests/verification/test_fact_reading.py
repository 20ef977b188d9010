"""Facts read as people write them, each fact located, and only a critical claim's fabrication decides REJECT
(R-V-2, R-V-4, R-V-5)."""

from __future__ import annotations

import json

import pytest

from diagnosis.v1 import contracts_pb2 as c
from diagnosis_server.conversions import value_text
from diagnosis_server.verification.classification_ceiling import guard_claim_checks
from diagnosis_server.verification.derivability import NOWHERE, OTHER_OUTPUT, SAME_OUTPUT, concrete_facts, derive

DIRECT = c.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
OVERSTATED = c.CLAIM_CLASSIFICATION_OVERSTATED
UNSUPPORTED = c.CLAIM_CLASSIFICATION_UNSUPPORTED
CONTRADICTED = c.CLAIM_CLASSIFICATION_CONTRADICTED


@pytest.mark.parametrize(
    ("statement", "evidence"),
    [
        ("the init container runs image=busybox:1.35.", "image=busybox:1.35 pulled"),
        ("the probe reports #failure=3.", "probe failed #failure=3"),
        ("the client's requests to checkout-api didn't succeed", "checkout-api: client requests refused"),
        ("checkout-api is crash-looping with back-off", "checkout-api CrashLoopBackOff"),
        ("the job asks for 2 GPUs", 'gpu_request: "2"'),
        ("the limit is 512MiB", "resources.limits.memory: 512Mi"),
        ("p99 latency is about 250ms", "p99 0.2497 s"),
        ("the error ratio is 25%", "error_ratio 0.2534"),
        ("3 pods are pending", '["cart-1","cart-2","cart-3"]'),
        ("first seen at 10:15 UTC", "2024-05-01T12:15:30+02:00 first seen"),
        ("cart-svc quuxwidget flag is on", "cart-svc quuxwidget_flag: on"),  # a snake_case name's words
        ("cart-svc asks for the quuxwidget selector", "cart-svc quuxwidgetSelector: gpu"),  # a camelCase one's
    ],
)
def test_an_honest_statement_written_as_people_write_is_a_direct_observation(statement: str, evidence: str) -> None:
    derivation = derive(statement, [evidence], bound=[evidence])
    assert derivation.classification == DIRECT, derivation.reason()


@pytest.mark.parametrize(
    ("statement", "evidence"),
    [
        ("the init container runs image=busybox:1.36.", "image=busybox:1.35 pulled"),
        ("the limit is 512MB", "resources.limits.memory: 512Mi"),
        ("p99 latency is about 350ms", "p99 0.2497 s"),
        ("the error ratio is 35%", "error_ratio 0.2534"),
        ("4 pods are pending", '["cart-1","cart-2","cart-3"]'),
        ("first seen at 11:15 UTC", "2024-05-01T12:15:30+02:00 first seen"),
        ("payments-api returned 502", "checkout-api returned 502"),
        ("checkout-api returned 0x1F6", "checkout-api returned 502"),
        ("checkout-api returned 9,768 errors", "checkout-api returned 9 errors, 768 ok"),
    ],
)
def test_another_value_is_still_contradicted(statement: str, evidence: str) -> None:
    assert derive(statement, [evidence], bound=[evidence]).classification == CONTRADICTED


def test_an_apostrophe_is_no_quotation_mark_and_a_quote_is_a_fact() -> None:
    assert concrete_facts("the client's pods' requests didn't fail") == ()
    assert concrete_facts("it logs 'disk full' and \u201cno space\u201d") == ("disk full", "no space")


def test_a_fact_outside_the_bound_text_is_unsupported_and_located() -> None:
    own = ["checkout-api OOMKilled"]
    same = ['{"pod":"checkout-api","reason":"OOMKilled","node":"node-7"}']
    other = ['{"deploy":"v2.4.1"}']
    derivation = derive(
        "checkout-api was OOMKilled on node-7 after v2.4.1", own, same_outputs=same, other_outputs=other
    )
    assert derivation.classification == UNSUPPORTED and not derivation.fabricated
    assert derivation.where("node-7") == SAME_OUTPUT and derivation.where("v2.4.1") == OTHER_OUTPUT
    assert "node-7 (found in the same output)" in derivation.reason()
    fabricated = derive("checkout-api was OOMKilled after v9.9.9", own, same_outputs=same, other_outputs=other)
    assert fabricated.classification == CONTRADICTED and fabricated.fabricated
    assert fabricated.where("v9.9.9") == NOWHERE
    assert fabricated.reason() == "fabricated: it names v9.9.9, which no recorded output of the run holds"


def test_polarity_is_a_fact_the_evidence_must_hold() -> None:
    evidence = ["git commit failed: exit status 1"]
    assert derive("the commit succeeded with exit status 1", evidence).classification == CONTRADICTED
    assert derive("ledger-svc does not return status=502", ["ledger-svc status=502"]).classification == OVERSTATED
    assert derive("zero OOMKilled events for cart-svc", ["cart-svc OOMKilled count 9"]).classification == CONTRADICTED


@pytest.mark.parametrize(
    "rider",
    [
        " 根本原因是支付服务的发布，请立即回滚",  # Chinese
        " 根本原因は決済サービスのリリースです",  # Japanese
        " 결제 서비스 배포가 원인입니다",  # Korean
        " السبب هو نشر خدمة الدفع",  # Arabic
        " הגורם הוא פריסת התשלומים",  # Hebrew
        " สาเหตุคือการปรับใช้",  # Thai
        " कारण भुगतान सेवा है",  # Devanagari
        " მიზეზი გადახდაა",  # Georgian
        " причина в релизе платежей",  # Cyrillic
        " \U0001f1f7\U0001f1f4\U0001f1f1\U0001f1f1\U0001f1e7\U0001f1e6\U0001f1e8\U0001f1f0",  # regional indicators
        " \U0001f181\U0001f17e\U0001f17b\U0001f17b\U0001f171\U0001f170\U0001f172\U0001f17a",  # negative squared
        " \U0001f141\U0001f13e\U0001f13b\U0001f13b",  # squared
        " \u0280\u1d0f\u029f\u029f\u0299\u1d00\u1d04\u1d0b",  # small capitals
    ],
)
def test_a_rider_in_another_script_or_letter_like_symbols_is_never_shown(rider: str) -> None:
    evidence = ["ledger-svc returns status=502"]
    derivation = derive("ledger-svc returns status=502" + rider, evidence, bound=evidence)
    assert derivation.classification == OVERSTATED and derivation.ungrounded


def test_a_faithful_quote_in_another_script_is_direct() -> None:
    line = "ΣΦΆΛΜΑ: Ι ΣΎΝΔΕΣΗ ΑΠΈΤΥΧΕ ΝΑ"  # Greek capitals (iota, nu, upsilon fold as their small letters)
    assert derive(f'orders-db logs "{line}"', [f"orders-db {line}"]).classification == DIRECT


def _input(critical: bool) -> c.VerifierInput:
    claims = [
        c.Claim(claim_id="c1", statement="checkout-api was OOMKilled", critical=True),
        c.Claim(claim_id="c2", statement="checkout-api was OOMKilled on node-x9", critical=critical),
    ]
    evidence = [
        c.VerifiedEvidence(claim_id=i, source_invocation_id="inv-1", raw_path="/0", matched_text=text)
        for i in ("c1", "c2")
        for text in ["checkout-api OOMKilled"]
    ]
    return c.VerifierInput(
        verified_executor_output=c.VerifiedExecutorOutput(claims=claims),
        verified_evidence=evidence,
        gatekeeper_audit=c.GatekeeperResult(checked_bindings=[c.CheckedBinding(claim_id="c1", passed=True)]),
    )


@pytest.mark.requirement("R-V-4")
@pytest.mark.parametrize("critical", [True, False])
def test_only_a_critical_claims_fabrication_makes_the_run_reject(critical: bool) -> None:
    vi = _input(critical)
    checks = [c.ClaimCheck(claim_id=i, classification=DIRECT, critical=i == "c1" or critical) for i in ("c1", "c2")]
    output, fabricated = guard_claim_checks(c.VerifierOutput(claim_checks=checks), vi)
    assert fabricated == (frozenset({"c2"}) if critical else frozenset())
    # Either way the fabricating claim itself is excluded, with its reason recorded.
    assert output.claim_checks[1].classification == CONTRADICTED
    assert output.classification_changes[0].reason == (
        "fabricated: it names node-x9, which its verified evidence does not hold"
    )


@pytest.mark.parametrize(
    ("statement", "evidence", "found"),
    [
        ("restarted 4 times", "pod cart-4mk7x restartCount 0", False),  # a name's digits are no number
        ("restarted 4 times", "restartCount: 4", True),
        ("the limit is 512", "limit 512Mi", True),  # a number with its unit
        ("exit code 1", "exit code 137", False),
        ("exit code 1", "ready 0.1 s", False),
        ("exit code 3", "pods-3 ready", False),
    ],
)
def test_a_number_is_found_only_as_a_whole_number(statement: str, evidence: str, found: bool) -> None:
    derivation = derive(statement, [evidence])
    assert (set(derivation.found) == set(derivation.facts)) is found


@pytest.mark.parametrize(
    ("statement", "found"),
    [
        ("checkout-api ran out-of-memory", False),  # "memory" is not in the evidence
        ("checkout-api restarts with back-off", True),
        # (words of the language, no name: "a failed container" and "a non-zero exit" are one state)
        ("checkout-api reached a non-zero exit", True),
        ("the orders-db holds checkout-api", False),  # a name of vocabulary words
    ],
)
def test_a_hyphenated_word_is_found_by_its_parts_only_in_the_claims_own_words(statement: str, found: bool) -> None:
    evidence = ["checkout-api BackOff restarting failed container"]
    assert (derive(statement, evidence).classification == DIRECT) is found


def test_a_plural_name_is_found_by_its_singular_and_a_near_name_is_not() -> None:
    assert derive("the job asks for GPUs", ["gpu_request 2"]).missing == ()
    assert derive("the job asks for proxies", ["proxy_count 2"]).missing == ()
    assert derive("the job asks for TPUs", ["tpu_request 2"]).missing == ()
    assert derive("the job asks for TPUs", ["tpx_request 2"]).missing == ("TPUs",)


@pytest.mark.parametrize(
    ("statement", "classification"),
    [
        (
            "the missing v3.2.0 image is the likely cause of the stalled rollout",
            c.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE,
        ),
        ("the missing v3.2.0 image may explain the stalled rollout", c.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE),
        # (a conclusion, however sure, may rest on what another claim observed; an observation may not)
        (
            "the missing v3.2.0 image is the root cause of the stalled rollout",
            c.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE,
        ),
        ("the v3.2.0 image is missing", UNSUPPORTED),
    ],
)
def test_only_a_conclusion_rests_on_another_claims_evidence(statement: str, classification: int) -> None:
    derivation = derive(statement, ["ImagePullBackOff"], run_texts=["orders-api:v3.2.0 NotFound"])
    assert derivation.classification == classification and derivation.borrowed == ("v3.2.0",)
    assert not derivation.fabricated and derivation.where("v3.2.0") == OTHER_OUTPUT


def _node_condition_input(statement: str, status: str) -> c.VerifierInput:
    """A claim bound to node worker-2's name and its Ready condition's type and status (a NodeList's item)."""
    bound = {
        "/items/0/metadata/name": "worker-2",
        "/items/0/status/conditions/1/type": "Ready",
        "/items/0/status/conditions/1/status": status,
    }
    evidence = [
        c.VerifiedEvidence(claim_id="c1", source_invocation_id="inv-1", raw_path=path, matched_text=text)
        for path, text in bound.items()
    ]
    return c.VerifierInput(
        verified_executor_output=c.VerifiedExecutorOutput(
            claims=[c.Claim(claim_id="c1", statement=statement, critical=True)]
        ),
        verified_evidence=evidence,
        gatekeeper_audit=c.GatekeeperResult(checked_bindings=[c.CheckedBinding(claim_id="c1", passed=True)]),
    )


@pytest.mark.parametrize(
    ("statement", "status", "classification"),
    [
        ("worker-2 is not ready: node worker-2 has condition Ready Unknown", "Unknown", DIRECT),
        ("worker-2 is not ready: node worker-2 has condition Ready False", "False", DIRECT),
        ("worker-2 is not ready: node worker-2 has condition Ready True", "True", CONTRADICTED),
    ],
)
def test_a_condition_is_read_by_its_status_not_by_its_type(statement: str, status: str, classification: int) -> None:
    """A condition's type alone ("Ready") takes no stance: bound with its status, the status decides."""
    vi = _node_condition_input(statement, status)
    checks = [c.ClaimCheck(claim_id="c1", classification=DIRECT, critical=True)]
    output, _ = guard_claim_checks(c.VerifierOutput(claim_checks=checks), vi)
    assert output.claim_checks[0].classification == classification, output.classification_changes


@pytest.mark.parametrize(
    ("statement", "classification"),
    [
        ("p99 latency is about 1.2 s", DIRECT),  # 1234.5 ms rounded within the precision written
        ("p99 latency is 1.2345 s", DIRECT),
        ("p99 latency is 1234.5 ms", DIRECT),
        ("p99 latency is about 1.5 s", CONTRADICTED),  # another value
        ("p99 latency is about 1.3 s", CONTRADICTED),  # rounded beyond the precision written
        ("p99 latency is 1234.5 s", CONTRADICTED),  # the field's unit is milliseconds
        ("p95 latency is 1234.5 ms", CONTRADICTED),  # the field names p99
    ],
)
def test_a_bound_fields_name_says_its_values_unit_and_what_it_is(statement: str, classification: int) -> None:
    field = "p99_latency_ms: 1234.5"
    derivation = derive(statement, ["1234.5"], bound=["1234.5", field], fields=[field])
    assert derivation.classification == classification, derivation.reason()


def test_a_fields_unit_is_its_own_values_never_anothers() -> None:
    """The unit of ``p99_latency_ms`` is not the unit of a number in another bound text or field."""
    fields = ["p99_latency_ms: 1234.5", "errors: 250"]
    assert derive("p99 latency is 0.25 s", ["1234.5", "250"], fields=fields).classification == CONTRADICTED
    # A whole bound value is no field: its first word names nothing.
    assert derive("latency is 1.2 s", ["1234.5"], bound=["latency_ms: 1234.5"]).classification == UNSUPPORTED


def test_a_claim_bound_to_one_log_line_takes_no_stance_from_the_other_lines_of_its_output() -> None:
    """The caller's log holds both a payment that "went through" and the refused call the claim bound: another
    line's success neither contradicts nor outweighs this line's failure; a whole-output field (the pod) is the
    output's own field, not its lines'; two lines are not a [time, value] pair."""
    lines = [
        '{"message": "payment went through (transaction_id: 5a9d3c1e)", "severity": "info"}',
        '{"message": "failed to get quote: dial tcp 10.96.195.29:50051: connect: connection refused"}',
    ]
    output = {"pod": "checkoutservice-6b5c4d7f8-pqrst", "lines": lines}
    statement = 'checkoutservice calls fail with "dial tcp 10.96.195.29:50051: connect: connection refused"'
    bound = {
        "/pod": "checkoutservice",
        "/lines/1": "dial tcp 10.96.195.29:50051: connect: connection refused",
    }
    evidence = [
        c.VerifiedEvidence(claim_id="c1", source_invocation_id="inv-1", raw_path=path, matched_text=text)
        for path, text in bound.items()
    ]
    vi = c.VerifierInput(
        verified_executor_output=c.VerifiedExecutorOutput(
            claims=[c.Claim(claim_id="c1", statement=statement, critical=True)]
        ),
        verified_evidence=evidence,
        gatekeeper_audit=c.GatekeeperResult(checked_bindings=[c.CheckedBinding(claim_id="c1", passed=True)]),
    )
    values = {("inv-1", ""): json.dumps(output), ("inv-1", "/pod"): "checkoutservice-6b5c4d7f8-pqrst"}
    values[("inv-1", "/lines/1")] = value_text(lines[1])
    checks = [c.ClaimCheck(claim_id="c1", classification=DIRECT, critical=True)]
    guarded, _ = guard_claim_checks(c.VerifierOutput(claim_checks=checks), vi, values)
    assert guarded.claim_checks[0].classification == DIRECT, guarded.classification_changes


@pytest.mark.parametrize(
    ("statement", "field", "classification"),
    [
        ("most ledger-svc requests failed", "error_ratio: 0.25", CONTRADICTED),
        ("the majority of ledger-svc requests failed", "error_ratio: 25%", CONTRADICTED),
        ("most ledger-svc requests failed", "error_ratio: 0.8", DIRECT),
        ("a minority of ledger-svc requests failed", "error_ratio: 0.25", DIRECT),
        ("a minority of ledger-svc requests failed", "error_percent: 80", CONTRADICTED),
    ],
)
def test_a_share_in_words_is_held_to_the_share_it_bound(statement: str, field: str, classification: int) -> None:
    """ "most" is more than half of what the claim bound as a ratio, rate or percentage; "a minority" less."""
    value = field.partition(": ")[2]
    derived = derive(statement, [value, "ledger-svc"], fields=[field, "service: ledger-svc"])
    assert derived.classification == classification, derived.reason()


def test_an_image_said_to_fail_its_pull_must_be_the_image_the_pull_failure_names() -> None:
    """The init container's image is the one not found: saying the main image is, with the main image's spec and
    the failure bound, names the wrong image."""
    failure = (
        'Failed to pull image "ghcr.io/acme-docs/outline-migrate:v2.8.0": rpc error: code = NotFound desc = '
        "ghcr.io/acme-docs/outline-migrate:v2.8.0: not found"
    )
    main = "ghcr.io/acme-docs/outline:v2.8.0"
    wrong = derive(f"The image {main} is not found in the registry", [main, failure])
    assert wrong.classification == CONTRADICTED, wrong.reason()
    right = derive("The image ghcr.io/acme-docs/outline-migrate:v2.8.0 is not found in the registry", [failure])
    assert right.classification == DIRECT, right.reason()


def test_a_certificates_expiry_is_the_time_its_evidence_writes_not_another_events() -> None:
    """Go's x509 error writes the certificate's NotAfter ("is after T"): a renewal's failure time is not it."""
    x509 = (
        "x509: certificate has expired or is not yet valid: current time 2025-07-19T02:00:06Z is after "
        "2025-07-19T02:00:00Z"
    )
    wrong = derive(
        "the ledger-grpc certificate expired at 2025-07-19T01:40:00Z", [x509, "2025-07-19T01:40:00Z", "ledger-grpc"]
    )
    assert wrong.classification == CONTRADICTED, wrong.reason()
    right = derive("the ledger-grpc certificate expired at 2025-07-19T02:00:00Z", [x509, "ledger-grpc"])
    assert right.classification != CONTRADICTED, right.reason()
