"""A claim's polarity is a fact its evidence must hold (``text.polarity``)."""

from __future__ import annotations

import pytest

from diagnosis_server.text.polarity import (
    NEGATIONS,
    _counts,
    as_negations,
    denied_values,
    polar_words,
    polarity,
    stances,
)


def test_an_antonym_of_the_evidence_is_a_conflict() -> None:
    assert polarity("the commit succeeded", ["commit failed: exit 1"]).conflicts == ("succeeded (evidence: failed)",)
    assert polarity("checkout-api is healthy", ["Unhealthy: Readiness probe failed"]).conflicts
    assert not polarity("checkout-api is unhealthy", ["Unhealthy: Readiness probe failed"]).conflicts


def test_a_negation_before_a_polar_word_turns_it_around_within_its_clause() -> None:
    assert not polarity("the pod is not ready", ['"ready": false']).conflicts
    assert polarity("the pod is ready", ["ready: false"]).conflicts
    # A negation in another clause does not reach it.
    assert stances("cannot be renewed (Failed)", quotes=False).stances == frozenset({("succeeded", False)})


def test_a_negated_number_needs_a_negative_state_in_the_evidence() -> None:
    assert polarity("ledger-svc does not return status=502", ["GET /pay status=502"]).missing == ("not",)
    assert not polarity("ledger-svc does not return status=502", ["no status=502 since 10:02"]).missing
    # A negation of no number or code is judged with the statement's other words.
    assert not polarity("checkout-api cannot write to its disk", ["ENOSPC"]).missing


def test_contractions_negate_too() -> None:
    assert polarity("checkout-api didn't return 502", ["status=502"]).missing == ("didn't",)


def test_a_negation_reaches_eight_words_back_and_a_false_value_two_words_on() -> None:
    assert stances("is not yet ready").stances == frozenset({("ready", False)})
    assert stances("not a b c ready").stances == frozenset({("ready", False)})
    assert stances("not a b c d e f g h ready").stances == frozenset({("ready", True)})  # nine words back: no
    assert stances("ready is false").stances >= {("ready", False)}
    assert stances("ready x y false").stances >= {("ready", True)}  # three words on: no


def test_a_negated_number_counts_within_six_words_of_its_clause() -> None:
    assert polarity("never returned status 502", ["status 502"]).missing == ("never",)
    # "nothing at edge-gateway got status=502": the subject's negation reaches the code at the clause's end
    assert polarity("nothing at edge-gateway got status=502", ["status=502"]).missing == ("nothing",)
    assert polarity("never a b c d e f 502", ["status 502"]).missing == ()
    assert polarity("nothing changed; ledger-svc got status=502", ["status=502"]).missing == ()
    # a name with a digit is no number past four words
    assert polarity("no kube-proxy pod runs on node kind-worker2", ["node: kind-worker2"]).missing == ()


def test_an_unknown_status_after_a_condition_turns_it_around() -> None:
    # A Kubernetes condition not known to hold ("Ready: Unknown", shown by kubectl as NotReady) is not held.
    assert stances("Ready: Unknown").stances == frozenset({("ready", False)})
    assert not polarity("worker-2 is not ready", ["Ready: Unknown"]).conflicts
    assert polarity("worker-2 is ready", ["Ready: Unknown"]).conflicts == ("ready (evidence: notready)",)


def test_the_polar_words_are_every_stance_word_and_every_negation() -> None:
    words = polar_words()
    assert {"healthy", "unhealthy", "succeeded", "failed", "ready", "notready"} <= words
    assert words >= NEGATIONS and "cluster" not in words


@pytest.mark.parametrize(
    ("name", "counts"),
    [
        ("restartCount", True),
        ("errors_total", True),
        ("num", True),  # a counting word, whatever its length
        ("replicas", True),
        ("pods", True),  # a plural of four letters
        ("ids", False),  # three letters: no plural it can be told from
        ("class", False),  # "ss" is no plural
        ("containerPort", False),
        ("memory", False),
        ("", False),
        ("__", False),
    ],
)
def test_a_field_counts_when_its_last_word_is_a_count_or_a_plural(name: str, counts: bool) -> None:
    assert _counts(name) is counts


@pytest.mark.requirement("R-V-4")
@pytest.mark.parametrize(
    "statement",
    ["the deploy went fine", "the deploy is green", "the deploy is OK", "the deploy rolled out cleanly", "pod x is up"],
)
def test_all_is_well_in_everyday_words_is_said_only_over_a_good_state(statement: str) -> None:
    assert polarity(statement, ["status: failed"]).missing or polarity(statement, ["status: failed"]).conflicts
    assert not polarity(statement, ["status: succeeded"]).missing
    assert not polarity(statement, ["ready: true"]).missing


def test_up_since_and_scaled_up_take_no_stance() -> None:
    assert not polarity("both containers have been up since 16:02:06", ["status: failed"]).missing
    assert not polarity("the deployment scaled up to 5 replicas", ["status: failed"]).missing


@pytest.mark.parametrize(
    ("statement", "denied"),
    [
        ("pod cart-1 has not restarted", True),
        ("pod cart-1 hasn't restarted", True),
        ("pod cart-1 never restarted", True),
        ("pod cart-1 has not restarted since 10:02", False),  # a while the count does not cover
    ],
)
def test_a_negated_verb_of_a_counted_field_above_zero_is_denied(statement: str, denied: bool) -> None:
    assert bool(denied_values(statement, ["restartCount: 4"])) is denied
    assert not denied_values(statement, ["restartCount: 0"])


def test_a_urls_path_and_query_take_no_stance() -> None:
    """Consul's ``?passing=1`` is a parameter's name, not a call that succeeded."""
    line = 'consul: Get "http://consul:8500/v1/health/service/srv-geo?passing=1": dial tcp: connection refused'
    assert polarity("search calls to consul fail", [line]).conflicts == ()
    assert polarity("search calls to consul fail", ["GET /orders passed"]).conflicts != ()


def test_no_errors_is_denied_by_a_bound_text_that_writes_one() -> None:
    line = "upstream prematurely closed connection upstream=ledger-svc status=502"
    assert polarity("edge-gateway reached ledger-svc without errors", [line]).conflicts
    assert polarity("edge-gateway calls to ledger-svc are error-free", [line]).conflicts
    # A zero count of errors, or a call that wrote none, holds it.
    assert polarity("the export ran without errors", ["errors: 0", "status=200"]).conflicts == ()


def test_a_bound_value_written_as_a_flag_that_is_off_is_denied() -> None:
    assert polarity("ledger-svc has OOMKilled=false", ["reason: OOMKilled"]).conflicts
    assert polarity("ledger-svc has OOMKilled: no", ["reason: OOMKilled"]).conflicts
    # the value itself, and a field that is false where the evidence says so, are no denial
    assert polarity("ledger-svc was OOMKilled", ["reason: OOMKilled"]).conflicts == ()
    assert polarity("ledger-svc has ready=false", ["ready: false"]).conflicts == ()
    assert polarity("pod ledger-svc-0 is no longer ready", ["pod: ledger-svc-0", "ready: false"]).conflicts == ()
    assert polarity("wiki-postgres: no warnings.", ["service: wiki-postgres"]).conflicts == ()
    assert polarity("events show FailedScheduling: 0/5 nodes", ["reason: FailedScheduling"]).conflicts == ()
    assert (
        polarity("clickhouse-0 is Pending (PodScheduled=False)", ["type: PodScheduled", "status: False"]).conflicts
        == ()
    )


def test_nothing_went_wrong_is_all_is_well_which_a_failed_status_denies() -> None:
    failed = ["status: failed", "version: v2.4.1"]
    assert polarity("nothing went wrong with the v2.4.1 deploy", failed).missing == ("fine",)
    assert polarity("nothing went wrong with the v2.4.1 deploy", ["status: succeeded"]) == polarity("x", [])


def test_removed_is_denied_by_the_record_that_says_the_thing_was_kept() -> None:
    summary = "Rename Service payment-gateway to payments-gateway (old name kept as ExternalName until Friday)"
    statement = "the rename removed the old name payment-gateway"
    bound = ["Rename Service payment-gateway to payments-gateway"]
    assert polarity(statement, bound, records=[summary]).missing == ("removed",)
    assert polarity(statement, [summary]).conflicts == ("removed (evidence: kept)",)
    # Where nothing says it was kept, "removed" is an ordinary word of an answer, not a fact to bind.
    assert polarity(statement, bound, records=["Rename Service payment-gateway to payments-gateway"]) == polarity(
        "x", []
    )
    assert "removed" not in polar_words() and "kept" not in polar_words()


def test_keeps_doing_something_is_going_on_not_keeping_a_thing() -> None:
    assert stances(as_negations("the pod keeps restarting")).stances == frozenset()
    assert not polarity("the old pod was deleted", ["the job kept retrying"]).conflicts


def test_a_weak_word_of_success_conflicts_only_with_evidence_of_the_other_stance() -> None:
    assert polarity("the v2.4.1 deploy landed", ["status: failed"]).conflicts == ("succeeded (evidence: failed)",)
    assert polarity("the v2.4.1 deploy rolled out", ["status: failed"]).conflicts
    assert polarity("the v2.4.1 deploy is live", ["status: failed"]).conflicts
    assert polarity("the v2.4.1 deploy landed", ["status: succeeded"]) == polarity("x", [])
    # needing no stance of its own: "pods landed on node-7", "the pod remains Pending"
    assert polarity("the pods landed on node-7", ["node-7"]) == polarity("x", [])
    assert polarity("the pod remains Pending", ["Pending"]) == polarity("x", [])
    assert polarity("the retry budget remains", ["retry budget exhausted"]).conflicts
    assert not polarity("the v2.4.1 deploy never landed", ["status: failed"]).conflicts


def test_stable_and_ceased_are_said_only_where_the_evidence_shows_them() -> None:
    assert polarity("pod cart-1 is stable", ["restartCount: 4"]).missing == ("stable",)
    assert polarity("pod cart-1 is stable", ["restartCount: 0"]) == polarity("x", [])
    assert polarity("the BackOff events ceased", ["BackOff", "count: 9"]).missing == ("ceased",)
    assert polarity("the BackOff events ceased", ["BackOff events ceased at 10:02"]) == polarity("x", [])


def test_denying_the_blame_denies_no_number_that_follows() -> None:
    ready = ["fulfillment-redis-master-0", "ready: true"]
    assert polarity("redis isn't the problem: fulfillment-redis-master-0 is ready", ready) == polarity("x", [])
    # a denial of a number is still one
    assert polarity("fulfillment-redis-master-0 isn't restarting 4 times", ["restartCount: 4"]).missing


def test_a_weak_word_beside_the_other_stance_speaks_of_another_thing() -> None:
    said = ["ScalingReplicaSet: Scaled up replica set web-7d9 to 3", "Readiness probe failed"]
    statement = "the web rollout completed at 10:02 and its new pods fail their readiness probe"
    assert polarity(statement, said).conflicts == ()


@pytest.mark.parametrize(
    ("statement", "denies"),
    [
        ("the deploy is not v2", True),  # a word with a digit right after the negation
        ("the deploy is not a v2", True),
        ("the deploy is not a b c v2", True),  # four words on
        ("the deploy is not a b c d v2", False),  # five: out of reach for a word with a digit
        ("the deploy is not a b c d 5xx", True),  # a number (a digit first) reaches six
        ("the deploy is not a b c d e f 5xx", False),
    ],
)
def test_a_bare_negation_denies_a_word_with_a_digit_within_four_words_a_number_within_six(
    statement: str, denies: bool
) -> None:
    assert (polarity(statement, ["v2", "5xx"]).missing != ()) is denies


@pytest.mark.parametrize(
    "statement",
    ["web-1 is not (v1.7.0) ready", "web-1 is not (v1.7.0 (canary)) ready", "not (a) (b) ready"],
)
def test_a_negation_reads_past_parentheses_nested_or_not(statement: str) -> None:
    assert stances(statement).stances == frozenset({("ready", False)})


def test_a_conditions_value_after_its_noun_turns_it_around() -> None:
    assert stances("their Ready condition is False").stances >= {("ready", False)}
    assert stances("the ready status: false").stances >= {("ready", False)}
    assert stances("its Ready condition is True").stances >= {("ready", True)}
    unready = ["Running", "Ready", "False", "containers with unready status: [server]"]
    assert polarity("the pods are Running but their Ready condition is False", unready).conflicts == ()
