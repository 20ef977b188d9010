"""An observation says what one record shows: facts bound from records that never show them together (a pod of
the logs said to be the one the events show OOMKilled) are unsupported for the claim, never shown as a fact, and
the audit says where each was found (R-V-2, R-V-4)."""

from __future__ import annotations

import json

import pytest

from diagnosis.v1 import contracts_pb2 as c
from diagnosis_server.verification.classification_ceiling import guard_claim_checks
from diagnosis_server.verification.derivability import Record, derive

DIRECT = c.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
INFERENCE = c.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE
UNSUPPORTED = c.CLAIM_CLASSIFICATION_UNSUPPORTED

GATEWAY_LINE = Record("logs", "logs /lines/0", '{"pod":"edge-gw-6b5f4-p4r7t","message":"upstream=ledger status=502"}')
LEDGER_STATUS = Record(
    "events", "events /container_statuses/0", '{"pod":"ledger-7d8f9-x2k8q","reason":"OOMKilled","exitCode":137}'
)


def test_a_pod_bound_from_another_record_than_its_state_is_unsupported_and_located() -> None:
    derivation = derive(
        "pod edge-gw-6b5f4-p4r7t was OOMKilled",
        ["edge-gw-6b5f4-p4r7t", "OOMKilled"],
        scopes=[GATEWAY_LINE, LEDGER_STATUS],
    )
    assert derivation.classification == UNSUPPORTED and not derivation.fabricated
    assert derivation.apart == (("OOMKilled", "events /container_statuses/0"),)
    assert derivation.reason() == (
        "not together: no record it bound shows OOMKilled with edge-gw-6b5f4-p4r7t: OOMKilled only in "
        "events /container_statuses/0; a fact of one record is never said of another's"
    )


def test_the_same_pod_bound_from_its_own_record_is_direct() -> None:
    derivation = derive(
        "pod ledger-7d8f9-x2k8q was OOMKilled with exit code 137",
        ["ledger-7d8f9-x2k8q", "OOMKilled", "137"],
        scopes=[LEDGER_STATUS, GATEWAY_LINE],
    )
    assert derivation.classification == DIRECT and derivation.apart == ()


def test_a_fact_apart_from_the_others_is_named_with_them() -> None:
    """The gateway's pod and status stand together in the logs; the OOMKilled of the ledger's record does not."""
    derivation = derive(
        "pod edge-gw-6b5f4-p4r7t got status=502 and was OOMKilled",
        ["edge-gw-6b5f4-p4r7t", "upstream=ledger status=502", "OOMKilled"],
        scopes=[GATEWAY_LINE, LEDGER_STATUS],
    )
    assert derivation.classification == UNSUPPORTED
    assert derivation.apart == (("OOMKilled", "events /container_statuses/0"),)
    assert "shows OOMKilled with edge-gw-6b5f4-p4r7t, 502: OOMKilled only in events" in derivation.reason()


def test_the_records_of_one_output_may_be_named_together() -> None:
    """Two pods of one list, each its own record: an observation may name a list's elements together."""
    scopes = [
        Record("pods", "pods /items/0", '{"name":"qdrant-0","phase":"Pending"}'),
        Record("pods", "pods /items/2", '{"name":"qdrant-2","phase":"Pending"}'),
        LEDGER_STATUS,
    ]
    derivation = derive("pods qdrant-0 and qdrant-2 are Pending", ["qdrant-0", "qdrant-2"], scopes=scopes)
    assert derivation.classification == DIRECT, derivation.reason()


def test_a_fact_of_another_output_held_by_the_record_is_direct() -> None:
    """The events record names the gateway's pod: the two outputs show the facts together."""
    events = Record("events", "events /items/0", '{"involvedObject":{"name":"edge-gw-6b5f4-p4r7t"},"reason":"BackOff"}')
    derivation = derive(
        "pod edge-gw-6b5f4-p4r7t has a BackOff event", ["edge-gw-6b5f4-p4r7t", "BackOff"], scopes=[GATEWAY_LINE, events]
    )
    assert derivation.classification == DIRECT and derivation.apart == ()


def test_a_conclusion_may_join_records() -> None:
    derivation = derive(
        "the OOMKilled restarts of ledger likely cause the status=502 of edge-gw-6b5f4-p4r7t",
        ["OOMKilled", "upstream=ledger status=502", "edge-gw-6b5f4-p4r7t"],
        scopes=[LEDGER_STATUS, GATEWAY_LINE],
    )
    assert derivation.classification == INFERENCE and derivation.apart == ()


def test_one_record_or_a_fact_no_record_holds_alone_decides_nothing() -> None:
    assert derive("edge-gw-6b5f4-p4r7t was OOMKilled", ["edge-gw-6b5f4-p4r7t", "OOMKilled"]).apart == ()
    # "512Mi" stands in no single record: it takes no part.
    scopes = [Record("a", "a /items/0", '{"pod":"cart-1"}'), Record("b", "b /items/0", '{"limit":"512"}')]
    assert derive("cart-1 has a 512Mi limit", ["cart-1", "512", "Mi"], scopes=scopes).apart == ()


OUTPUTS = {
    "inv-ev": {
        "namespace": "payments",
        "container_statuses": [
            {"pod": "ledger-7d8f9-x2k8q", "lastState": {"terminated": {"reason": "OOMKilled"}}},
        ],
    },
    "inv-lg": {"service": "edge-gw", "lines": [{"pod": "edge-gw-6b5f4-p4r7t", "message": "status=502"}]},
    "inv-pods": {
        "items": [
            {
                "name": "ingest-7c9d-r44qw",
                "image": "ghcr.io/acme/ingest:v3.2.0",
                "waiting": {
                    "reason": "ErrImagePull",
                    "message": "failed to pull image: failed to authorize: GET https://ghcr.io/token: 401 Unauthorized",
                },
                "long": "x " * 3000 + "403 Forbidden",
            }
        ]
    },
}


def _verifier_input(
    statement: str, bindings: list[tuple[str, str, str]]
) -> tuple[c.VerifierInput, dict[tuple[str, str], str]]:
    evidence = [
        c.VerifiedEvidence(claim_id="c1", source_invocation_id=inv, tool_name=inv, raw_path=path, matched_text=text)
        for inv, path, text in bindings
    ]
    values = {(inv, ""): json.dumps(output) for inv, output in OUTPUTS.items()}
    values |= {(inv, path): text for inv, path, text in bindings}
    vi = c.VerifierInput(
        verified_executor_output=c.VerifiedExecutorOutput(
            claims=[c.Claim(claim_id="c1", statement=statement, critical=True)]
        ),
        verified_evidence=evidence,
        gatekeeper_audit=c.GatekeeperResult(checked_bindings=[c.CheckedBinding(claim_id="c1", passed=True)]),
    )
    return vi, values


REASON = ("inv-ev", "/container_statuses/0/lastState/terminated/reason", "OOMKilled")


@pytest.mark.parametrize(
    ("statement", "pod", "classification"),
    [
        ("pod edge-gw-6b5f4-p4r7t was OOMKilled", ("inv-lg", "/lines/0/pod", "edge-gw-6b5f4-p4r7t"), UNSUPPORTED),
        ("pod ledger-7d8f9-x2k8q was OOMKilled", ("inv-ev", "/container_statuses/0/pod", "ledger-7d8f9-x2k8q"), DIRECT),
        # A value outside any list stands for its whole output: the logs' service is not the one OOMKilled.
        ("edge-gw saw ledger-7d8f9-x2k8q OOMKilled", ("inv-lg", "/service", "edge-gw"), UNSUPPORTED),
    ],
)
def test_the_guard_reads_each_bound_record_from_its_recorded_output(
    statement: str, pod: tuple[str, str, str], classification: int
) -> None:
    ledger = ("inv-ev", "/container_statuses/0/pod", "ledger-7d8f9-x2k8q")
    vi, values = _verifier_input(statement, [REASON, pod] + ([ledger] if "saw" in statement else []))
    checks = [c.ClaimCheck(claim_id="c1", classification=DIRECT, critical=True)]
    output, fabricated = guard_claim_checks(c.VerifierOutput(claim_checks=checks), vi, values)
    assert output.claim_checks[0].classification == classification, output.classification_changes
    assert not fabricated
    if classification == UNSUPPORTED and "pod edge-gw" in statement:
        reason = output.classification_changes[0].reason
        assert "shows OOMKilled with edge-gw-6b5f4-p4r7t" in reason
        assert "OOMKilled only in inv-ev (inv-ev) /container_statuses/0" in reason


MESSAGE = ("inv-pods", "/items/0/waiting/message", "failed to pull image: failed to authorize")
POD = ("inv-pods", "/items/0/name", "ingest-7c9d-r44qw")


@pytest.mark.parametrize(
    ("statement", "binding", "classification"),
    [
        # The bound message, cut short by the model, holds the code in its tail: a fact of the value it bound.
        ("ingest-7c9d-r44qw cannot pull its image (401 Unauthorized)", MESSAGE, DIRECT),
        ("ingest-7c9d-r44qw cannot pull its image (404 Unauthorized)", MESSAGE, c.CLAIM_CLASSIFICATION_CONTRADICTED),
        # A neighbouring field of the record it did not bind stays outside its evidence.
        ("ingest-7c9d-r44qw cannot pull ghcr.io/acme/ingest:v3.2.0", MESSAGE, UNSUPPORTED),
        # An object bound by an excerpt is no one value's text; nor is a string longer than a line.
        (
            "ingest-7c9d-r44qw cannot pull: 401 Unauthorized",
            ("inv-pods", "/items/0/waiting", "ErrImagePull"),
            UNSUPPORTED,
        ),
        ("ingest-7c9d-r44qw cannot pull: 403 Forbidden", ("inv-pods", "/items/0/long", "x x x"), UNSUPPORTED),
    ],
)
def test_a_fact_of_the_whole_string_an_excerpt_was_bound_from_is_its_own(
    statement: str, binding: tuple[str, str, str], classification: int
) -> None:
    vi, values = _verifier_input(statement, [POD, binding])
    checks = [c.ClaimCheck(claim_id="c1", classification=DIRECT, critical=True)]
    output, _ = guard_claim_checks(c.VerifierOutput(claim_checks=checks), vi, values)
    assert output.claim_checks[0].classification == classification, output.classification_changes


def _pods(*reasons: str) -> str:
    return json.dumps([{"name": f"cart-{i}", "reason": r} for i, r in enumerate(reasons, start=1)])


THREE_OOM = _pods("OOMKilled", "OOMKilled", "OOMKilled")
ONE_DONE = _pods("OOMKilled", "Completed", "OOMKilled")


@pytest.mark.parametrize(
    ("statement", "covered", "classification"),
    [
        ("all 3 pods are OOMKilled", THREE_OOM, DIRECT),  # every item of the list it bound whole shows it
        ("every pod is OOMKilled", THREE_OOM, DIRECT),
        ("all 3 pods are OOMKilled", ONE_DONE, c.CLAIM_CLASSIFICATION_OVERSTATED),  # one item is Completed
        ("all pods are OOMKilled", "", c.CLAIM_CLASSIFICATION_OVERSTATED),  # no list shows every pod
        ("every pod is OOMKilled", "", c.CLAIM_CLASSIFICATION_OVERSTATED),
        ("all 4 pods are OOMKilled", THREE_OOM, c.CLAIM_CLASSIFICATION_CONTRADICTED),  # another count
        ('the pods log "all replicas OOMKilled"', "", c.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION),  # quoted: evidence
    ],
)
def test_a_scope_word_is_said_only_where_the_evidence_shows_every_item(
    statement: str, covered: str, classification: int
) -> None:
    evidence = ["OOMKilled", "all replicas OOMKilled"] if "log" in statement else ["OOMKilled"]
    derivation = derive(statement, evidence, covered=[covered] if covered else [])
    assert derivation.classification == classification, derivation.reason()


def test_a_scope_word_the_evidence_says_is_grounded() -> None:
    assert derive("all replicas of cart-svc are OOMKilled", ["cart-svc: all replicas OOMKilled"]).ungrounded == ()
    assert derive("the pods are always OOMKilled", ["OOMKilled"]).ungrounded == ("always",)
    assert derive("the pods are definitely OOMKilled", ["OOMKilled"]).ungrounded == ("definitely",)


PODS = {
    "inv-list": {
        "items": [
            {"name": "cart-1", "reason": "OOMKilled"},
            {"name": "cart-2", "reason": "OOMKilled"},
            {"name": "cart-3", "reason": "OOMKilled"},
        ]
    }
}


@pytest.mark.parametrize(
    ("statement", "indexes", "classification"),
    [
        ("all 3 pods are OOMKilled", (0, 1, 2), DIRECT),  # it bound a value of every element
        # (the records it bound of one list, each showing it: "all" of those it names)
        ("all pods are OOMKilled", (0, 1), DIRECT),
        ("3 pods are OOMKilled", (0, 1), UNSUPPORTED),  # a count it did not bind: not shown, not fabricated
        ("all 2 pods are OOMKilled", (0, 1), DIRECT),  # the ones it bound, counted
    ],
)
def test_the_guard_reads_a_list_bound_whole_as_showing_every_item(
    statement: str, indexes: tuple[int, ...], classification: int
) -> None:
    bindings = [("inv-list", f"/items/{i}/reason", "OOMKilled") for i in indexes]
    evidence = [
        c.VerifiedEvidence(claim_id="c1", source_invocation_id=inv, tool_name="pods", raw_path=path, matched_text=text)
        for inv, path, text in bindings
    ]
    values = {("inv-list", ""): json.dumps(PODS["inv-list"])} | {(inv, path): text for inv, path, text in bindings}
    vi = c.VerifierInput(
        verified_executor_output=c.VerifiedExecutorOutput(
            claims=[c.Claim(claim_id="c1", statement=statement, critical=True)]
        ),
        verified_evidence=evidence,
        gatekeeper_audit=c.GatekeeperResult(checked_bindings=[c.CheckedBinding(claim_id="c1", passed=True)]),
    )
    checks = [c.ClaimCheck(claim_id="c1", classification=DIRECT, critical=True)]
    output, _ = guard_claim_checks(c.VerifierOutput(claim_checks=checks), vi, values)
    assert output.claim_checks[0].classification == classification, output.classification_changes


@pytest.mark.parametrize(
    ("statement", "evidence", "ungrounded"),
    [
        ("cart-1 never fails its probe", "cart-1 Running", ("never",)),  # at no time: beyond one reading
        # a hyphenated scope word is words, no name (and "never failing" is a success the evidence does not say)
        ("cart-1 is never-failing", "cart-1 Running", ("succeeded", "never")),
        ("cart-1 is always-on", "cart-1 Running", ("always",)),
        ("cart-1 never retried the upload", "cart-1: upload never retried", ()),  # the evidence says it
        ("cart-1 reached a non-zero exit", "cart-1 non-zero exit", ()),  # no scope word
    ],
)
def test_never_and_scope_compounds_are_said_only_where_the_evidence_says_them(
    statement: str, evidence: str, ungrounded: tuple[str, ...]
) -> None:
    derivation = derive(statement, [evidence], bound=[evidence])
    assert derivation.ungrounded == ungrounded, derivation.reason()
    expected = c.CLAIM_CLASSIFICATION_OVERSTATED if ungrounded else DIRECT
    assert derivation.classification == expected and not derivation.fabricated


def _exited(*codes: int) -> list[Record]:
    return [
        Record("pods", f"pods /items/{i}", f"name: export-{i}\nexitCode: {code}", f"/items/{i}")
        for i, code in enumerate(codes)
    ]


@pytest.mark.parametrize(
    ("codes", "classification"),
    [
        ((1, 1, 1, 1), DIRECT),  # each record states the bound field
        ((1, 1, 1, 137), c.CLAIM_CLASSIFICATION_OVERSTATED),  # one exited otherwise
        ((1, 1, 1, 11), c.CLAIM_CLASSIFICATION_OVERSTATED),  # "exitCode: 11" is no "exitCode: 1"
    ],
)
def test_all_of_a_number_is_shown_where_every_record_it_bound_states_the_bound_field(
    codes: tuple[int, ...], classification: int
) -> None:
    records = _exited(*codes)
    fields = [f"exitCode: {code}" for code in codes if code == 1]
    bound = [str(code) for code in codes if code == 1]
    derivation = derive(
        "all 4 export pods exited with code 1", bound, bound=bound, fields=fields, scopes=records, counts={4}
    )
    assert derivation.classification == classification, derivation.reason()


def _restarts(*pairs: tuple[str, int]) -> list[Record]:
    return [
        Record("pods", f"pods /items/{i}", f"name: {pod}\nrestartCount: {count}", f"/items/{i}", (pod,))
        for i, (pod, count) in enumerate(pairs)
    ]


@pytest.mark.parametrize(
    ("statement", "contradicted"),
    [
        ("restartCount 9 in planner-a and 3 in planner-b", False),
        ("restartCount 9 in planner-b and 3 in planner-a", True),  # each value said of the other's pod
        ("restartCount 9 in planner-a", False),
    ],
)
def test_a_value_said_of_another_records_name_is_contradicted(statement: str, contradicted: bool) -> None:
    records = _restarts(("planner-a", 9), ("planner-b", 3))
    fields = ["name: planner-a", "restartCount: 9", "name: planner-b", "restartCount: 3"]
    bound = ["planner-a", "9", "planner-b", "3"]
    derivation = derive(statement, bound, bound=bound, fields=fields, scopes=records)
    assert (derivation.classification == c.CLAIM_CLASSIFICATION_CONTRADICTED) is contradicted, derivation.reason()
