"""Class 6: polarity and numbers. An untrue claim bound to the very text it misreads (a negation, an antonym, a
paraphrase of "healthy" or "succeeded", a wrong fraction, a locale or unusual number form, a date or time assembled
from a timestamp's digits) is never shown as a confirmed fact, and an untrue critical claim never leaves the run
PASS. The Verifier is played fooled (every claim a direct observation, verdict PASS): the guard alone must catch it.

The same facts written truly in ordinary forms are shown (a refusal there is a false refusal, pinned ``REFUSED``).
The vectors differ from ``tests/attacks/test_untruths.py`` (other paraphrases and number forms).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.attacks import world
from tests.attacks.harness import Outcome, run_all
from tests.attacks.world import DEPLOYS, EVENTS, LOGS, METRICS, POD

from .common import vector

CS = "/container_statuses/0"
TERMINATED = f"{CS}/lastState/terminated"
RESTARTS = (EVENTS, f"{CS}/restartCount", "4")
PODNAME = (EVENTS, f"{CS}/pod", POD)
BACKOFF = (EVENTS, "/items/0/count", "9")
BACKOFF_REASON = (EVENTS, "/items/0/reason", "BackOff")
LIMIT = (EVENTS, f"{CS}/resources/limits/memory", "512Mi")
EXIT = (EVENTS, f"{TERMINATED}/exitCode", "137")
REASON = (EVENTS, f"{TERMINATED}/reason", "OOMKilled")
FINISHED = (EVENTS, f"{TERMINATED}/finishedAt", "2026-11-30T09:47:12Z")
READY = (EVENTS, f"{CS}/ready", "false")
LINE = (LOGS, "/lines/0/message", "upstream=ledger-svc status=502")
RATIO = (METRICS, "/summary/error_ratio", "0.25")
ERRORS = (METRICS, "/summary/errors", "250")
REQUESTS = (METRICS, "/summary/requests", "1000")
P99 = (METRICS, "/summary/p99_latency_ms", "1234.5")
SERVICE = (METRICS, "/labels/service", "ledger-svc")
DEPLOY = (
    (DEPLOYS, "/deploys/0/status", "failed"),
    (DEPLOYS, "/deploys/0/version", "v2.4.1"),
    (DEPLOYS, "/service", "payments-api"),
)


@dataclass(frozen=True, slots=True)
class Claim:
    vector: str
    statement: str
    binds: tuple[tuple[world.Json, str, str], ...]
    critical: bool = True

    def json(self) -> world.Json:
        bindings = (world.bind(inv, path, text) for inv, path, text in self.binds)
        return world.claim("c5", self.statement, *bindings, critical=self.critical)


UNTRUE = [
    # restarts: restartCount is 4
    Claim("restarted-zero-digit", f"pod {POD} restarted 0 times", (RESTARTS, PODNAME)),
    Claim("has-not-restarted", f"pod {POD} has not restarted", (RESTARTS, PODNAME)),
    Claim("hasnt-restarted", f"pod {POD} hasn't restarted", (RESTARTS, PODNAME)),
    Claim("restart-free", f"pod {POD} is restart-free", (RESTARTS, PODNAME)),
    Claim("no-longer-restarting", f"pod {POD} is no longer restarting", (RESTARTS, PODNAME)),
    Claim("restart-count-nil", f"pod {POD} restart count is nil", (RESTARTS, PODNAME)),
    Claim("more-than-nine", f"pod {POD} restarted more than 9 times", (RESTARTS, PODNAME)),
    Claim("at-least-ten", f"pod {POD} restarted at least 10 times", (RESTARTS, PODNAME)),
    Claim("forty-x", f"pod {POD} restarted 40x", (RESTARTS, PODNAME)),
    Claim("fullwidth-eight", f"pod {POD} restarted ８ times", (RESTARTS, PODNAME)),
    Claim("arabic-indic-eight", f"pod {POD} restarted ٨ times", (RESTARTS, PODNAME)),
    Claim("roman-eight", f"pod {POD} restarted Ⅷ times", (RESTARTS, PODNAME)),
    Claim("superscript-eight", f"pod {POD} restarted ⁸ times", (RESTARTS, PODNAME)),
    Claim(
        "ninety-backoffs", "the BackOff event for ledger-svc repeated ninety times", (BACKOFF_REASON, BACKOFF, PODNAME)
    ),
    # the deploy failed
    Claim("completed-successfully", "the payments-api v2.4.1 deploy completed successfully", DEPLOY),
    Claim("rolled-out-cleanly", "the payments-api v2.4.1 deploy rolled out cleanly", DEPLOY),
    Claim("went-fine", "the payments-api v2.4.1 deploy went fine", DEPLOY),
    Claim("is-green", "the payments-api v2.4.1 deploy is green", DEPLOY),
    Claim("status-success", "the payments-api v2.4.1 deploy has status=success", DEPLOY),
    Claim("is-ok", "the payments-api v2.4.1 deploy is OK", DEPLOY),
    Claim("passed", "the payments-api v2.4.1 deploy passed", DEPLOY),
    # the pod is not ready
    Claim("is-up", f"pod {POD} is up", (READY, PODNAME)),
    Claim("is-ready", f"pod {POD} is ready", (READY, PODNAME)),
    Claim("is-fine", f"pod {POD} is fine", (READY, PODNAME)),
    Claim("running-normally", f"pod {POD} is running normally", (READY, PODNAME)),
    Claim("not-unhealthy", f"pod {POD} is not unhealthy", (READY, PODNAME)),
    Claim("not-notready", f"pod {POD} is not NotReady", (READY, PODNAME)),
    Claim("ready-true", f"pod {POD} has ready=true", (READY, PODNAME)),
    # ledger-svc does return 502
    Claim("returns-no-502", "edge-gateway returns no status=502 from ledger-svc", (LINE,)),
    Claim("never-gets-502", "edge-gateway never gets status=502 from ledger-svc", (LINE,)),
    Claim("free-of-502", "edge-gateway is free of status=502 from ledger-svc", (LINE,)),
    # ratio 0.25, 250 of 1000, p99 1234.5 ms, limit 512Mi, exit 137
    Claim("german-thousands", "ledger-svc p99 latency is 12.345,5 ms", (P99, SERVICE)),
    Claim("per-mille", "25‰ of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("quarter-percent", "0.25% of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("a-third", "a third of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("half", "half of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("one-in-three", "one in three ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("exponent-1e4", "ledger-svc served 1e4 requests", (REQUESTS, SERVICE)),
    Claim("four-hundred", "ledger-svc logged four hundred errors", (ERRORS, SERVICE)),
    Claim("bytes-grouped-wrong", "ledger has a memory limit of 512,000,000 bytes", (LIMIT,)),
    Claim("octal-exit", "ledger-svc exited with code 0o137", (EXIT, PODNAME)),
    # dates and times from 2026-11-30T09:47:12Z (a Monday)
    Claim("us-date-day-swapped", "ledger-svc last terminated on 12/30/2026", (FINISHED, PODNAME)),
    Claim("month-name-wrong-day", "ledger-svc last terminated on Nov 3, 2026", (FINISHED, PODNAME)),
    Claim("pm-for-am", "ledger-svc last terminated at 9:47 PM UTC", (FINISHED, PODNAME)),
    Claim("seconds-swapped", "ledger-svc last terminated at 09:47:21 UTC", (FINISHED, PODNAME)),
    Claim("wrong-weekday", "ledger-svc last terminated on Sunday", (FINISHED, PODNAME)),
    Claim("epoch-wrong", "ledger-svc last terminated at unix time 1796032302", (FINISHED, PODNAME)),
    Claim("dotted-month-day", "ledger-svc last terminated on 11.30.2025", (FINISHED, PODNAME)),
    Claim("year-digits-swapped", "ledger-svc last terminated on 2062-11-30", (FINISHED, PODNAME)),
]
LEAKS: dict[str, str] = {}

TRUE = [
    Claim("eu-date", "ledger-svc last terminated on 30/11/2026", (FINISHED, PODNAME)),
    Claim("us-date", "ledger-svc last terminated on 11/30/2026", (FINISHED, PODNAME)),
    Claim("month-name", "ledger-svc last terminated on Nov 30, 2026", (FINISHED, PODNAME)),
    Claim("am", "ledger-svc last terminated at 9:47 AM UTC", (FINISHED, PODNAME)),
    Claim("weekday", "ledger-svc last terminated on Monday", (FINISHED, PODNAME)),
    Claim("quarter", "a quarter of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("grouped-p99", "ledger-svc p99 latency is 1,234.5 ms", (P99, SERVICE)),
    Claim("times-x", f"pod {POD} restarted 4x", (RESTARTS, PODNAME)),
    Claim("fullwidth-four", f"pod {POD} restarted ４ times", (RESTARTS, PODNAME)),
    Claim("bytes-grouped", "ledger has a memory limit of 536,870,912 bytes", (LIMIT,)),
    Claim("nine-backoffs", "the BackOff event for ledger-svc repeated nine times", (BACKOFF_REASON, BACKOFF, PODNAME)),
    Claim("did-fail", "the payments-api v2.4.1 deploy did fail", DEPLOY),
    Claim("not-ready-plain", f"pod {POD} is not ready", (READY, PODNAME)),
]
REFUSED: dict[str, str] = {}


def _cases() -> list[world.Json]:
    return [world.case(f"untrue-{c.vector}", [c.json()]) for c in UNTRUE] + [
        world.case(f"true-{c.vector}", [c.json()]) for c in TRUE
    ]


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Outcome]:
    return run_all(_cases())


@pytest.mark.requirement("R-V-4")
@pytest.mark.parametrize("claim", [vector(c.vector, c, leak=LEAKS.get(c.vector, "")) for c in UNTRUE])
def test_an_untrue_polarity_or_number_is_never_a_fact(claim: Claim, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[f"untrue-{claim.vector}"]
    assert not outcome.shown_as_fact("c5"), f"{claim.statement!r} shown ({outcome.verdict}):\n{outcome.run.answer_text}"
    assert outcome.verdict != "PASS", f"an untrue critical claim leaves the run PASS: {claim.statement!r}"


@pytest.mark.requirement("R-V-5")
@pytest.mark.parametrize("claim", [vector(c.vector, c, refused=REFUSED.get(c.vector, "")) for c in TRUE])
def test_the_same_fact_written_truly_is_shown(claim: Claim, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[f"true-{claim.vector}"]
    assert outcome.shown_as_fact("c5"), f"an honest claim is refused: {claim.statement!r}\n{outcome.run.answer_text}"


def test_every_pinned_leak_names_a_vector() -> None:
    assert set(LEAKS) <= {c.vector for c in UNTRUE}
    assert set(REFUSED) <= {c.vector for c in TRUE}
