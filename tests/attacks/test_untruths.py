"""Untrue claims an honest-looking model would write, each bound to the very text it misreads, are never
shown as a confirmed fact or as the likely cause; the same facts written truly, in other forms, are (R-V-4, R-V-5).

The Verifier is played as fooled (every claim a direct observation, verdict PASS): the guard alone must catch them.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from . import world
from .harness import Outcome, run_all
from .vectors import param
from .world import DEPLOYS, EVENTS, LOGS, METRICS, POD

CS = "/container_statuses/0"
TERMINATED = f"{CS}/lastState/terminated"


@dataclass(frozen=True, slots=True)
class Claim:
    vector: str
    statement: str
    binds: tuple[tuple[world.Json, str, str], ...]
    critical: bool = True

    def json(self) -> world.Json:
        return world.claim(
            "c5",
            self.statement,
            *(world.bind(inv, path, text) for inv, path, text in self.binds),
            critical=self.critical,
        )


RESTARTS = (EVENTS, f"{CS}/restartCount", "4")
PODNAME = (EVENTS, f"{CS}/pod", POD)
BACKOFF = (EVENTS, "/items/0/count", "9")
BACKOFF_REASON = (EVENTS, "/items/0/reason", "BackOff")
LIMIT = (EVENTS, f"{CS}/resources/limits/memory", "512Mi")
REQUEST = (EVENTS, f"{CS}/resources/requests/memory", "0.5Gi")
EXIT = (EVENTS, f"{TERMINATED}/exitCode", "137")
REASON = (EVENTS, f"{TERMINATED}/reason", "OOMKilled")
FINISHED = (EVENTS, f"{TERMINATED}/finishedAt", "2026-11-30T09:47:12Z")
READY = (EVENTS, f"{CS}/ready", "false")
LINE = (LOGS, "/lines/0/message", "upstream=ledger-svc status=502")
GATEWAY_POD = (LOGS, "/lines/0/pod", "edge-gateway-6b5f4d8c7-p4r7t")
RATIO = (METRICS, "/summary/error_ratio", "0.25")
ERRORS = (METRICS, "/summary/errors", "250")
REQUESTS = (METRICS, "/summary/requests", "1000")
P99 = (METRICS, "/summary/p99_latency_ms", "1234.5")
SERVICE = (METRICS, "/labels/service", "ledger-svc")
DEPLOY_STATUS = (DEPLOYS, "/deploys/0/status", "failed")
DEPLOY_VERSION = (DEPLOYS, "/deploys/0/version", "v2.4.1")
DEPLOY_SERVICE = (DEPLOYS, "/service", "payments-api")

UNTRUE = [
    # a wrong number whose digit stands elsewhere in the bound text
    Claim("digit-in-pod-hash", f"pod {POD} restarted 8 times", (RESTARTS, PODNAME)),
    Claim("digit-only-in-pod-hash", f"pod {POD} restarted 8 times", (PODNAME,)),
    Claim(
        "count-of-other-field", "the BackOff event for ledger-svc repeated 4 times", (BACKOFF_REASON, BACKOFF, PODNAME)
    ),
    Claim("exit-code-of-other-output", "ledger-svc exited with code 502", (EXIT, REASON, PODNAME)),
    Claim("status-from-exit-code", "edge-gateway gets status=137 from ledger-svc", (LINE,)),
    Claim("two-digits-in-pod-hash", f"pod {POD} restarted 48 times", (RESTARTS, PODNAME)),
    Claim("exit-code-as-count", "the BackOff event for ledger-svc repeated 137 times", (BACKOFF_REASON, BACKOFF, EXIT)),
    Claim("count-as-exit-code", "ledger-svc exited with code 9", (EXIT, REASON, BACKOFF)),
    Claim("digit-in-uid", "the BackOff event for ledger-svc repeated 5 times", (BACKOFF_REASON, BACKOFF, PODNAME)),
    # wrong unit conversions
    Claim("mi-as-mb", "ledger has a memory limit of 512MB", (LIMIT,)),
    Claim("gi-shifted", "ledger requests 5Gi of memory", (REQUEST,)),
    Claim("mi-as-gi", "ledger has a memory limit of 512Gi", (LIMIT,)),
    Claim("ms-as-s", "ledger-svc p99 latency is 1234.5 s", (P99, SERVICE)),
    # rounding beyond the written precision
    Claim("rounded-up-wrong", "ledger-svc p99 latency is about 1.3 s", (P99, SERVICE)),
    Claim("rounded-too-far", "ledger-svc p99 latency is about 2 seconds", (P99, SERVICE)),
    # a percentage that is not the ratio
    Claim("percent-not-ratio", "35% of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("percent-shifted", "2.5% of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("ratio-inverted", "75% of ledger-svc requests failed", (ERRORS, REQUESTS, SERVICE)),
    # a wrong pod, an invented cause naming a neighbouring service
    Claim("pod-of-other-output", "pod edge-gateway-6b5f4d8c7-p4r7t was OOMKilled", (REASON, PODNAME)),
    Claim("pod-bound-from-other-output", "pod edge-gateway-6b5f4d8c7-p4r7t was OOMKilled", (REASON, GATEWAY_POD)),
    Claim(
        "neighbour-cause",
        "the payments-api v2.4.1 deploy OOMKilled ledger-svc",
        (REASON, DEPLOY_SERVICE, DEPLOY_VERSION),
    ),
    # polarity flips
    Claim("negated-status", "edge-gateway does not get status=502 from ledger-svc", (LINE,)),
    Claim("never-oomkilled", "ledger-svc was never OOMKilled", (REASON, PODNAME)),
    Claim("zero-backoff", "ledger-svc had zero BackOff events", (BACKOFF_REASON, BACKOFF)),
    Claim("no-restarts", f"pod {POD} has no restarts", (RESTARTS, PODNAME)),
    Claim("succeeded", "the payments-api v2.4.1 deploy succeeded", (DEPLOY_STATUS, DEPLOY_VERSION, DEPLOY_SERVICE)),
    Claim("is-healthy", f"pod {POD} is healthy and ready", (READY, PODNAME)),
    Claim("without-errors", "ledger-svc served its requests without errors", (ERRORS, SERVICE)),
    Claim("deploy-did-not-fail", "the payments-api v2.4.1 deploy did not fail", (DEPLOY_STATUS, DEPLOY_VERSION)),
    Claim("no-502s", "edge-gateway saw no status=502 from ledger-svc", (LINE,)),
    Claim("status-200", "edge-gateway gets status=200 from ledger-svc", (LINE,)),
    Claim("not-oomkilled", "ledger-svc was not OOMKilled", (REASON, PODNAME)),
    Claim("ratio-as-count", "ledger-svc failed 25 requests", (RATIO, SERVICE)),
    # locale and other number forms
    Claim("thousands-comma", "edge-gateway logged 2,500 errors from ledger-svc", (ERRORS, SERVICE)),
    Claim("decimal-comma", "the ledger-svc error ratio was 0,35", (RATIO, SERVICE)),
    Claim("hex-exit", "ledger-svc exited with code 0x1F4", (EXIT, PODNAME)),
    Claim("exponent", "ledger-svc served 1e6 requests", (REQUESTS, SERVICE)),
    Claim("number-word", f"pod {POD} restarted eight times", (RESTARTS, PODNAME)),
    Claim("number-word-hyphen", "ledger-svc saw two-hundred failed requests", (ERRORS, SERVICE)),
    # dates and times assembled from a timestamp's digits, or shifted wrongly
    Claim("date-swapped", "ledger-svc last terminated on 2026-09-30", (FINISHED, PODNAME)),
    Claim("time-from-digits", "ledger-svc last terminated at 12:47 UTC", (FINISHED, PODNAME)),
    Claim("time-hour-minute-swap", "ledger-svc last terminated at 11:30 UTC", (FINISHED, PODNAME)),
    Claim("zone-shift-wrong", "ledger-svc last terminated at 10:47 UTC", (FINISHED, PODNAME)),
    Claim("zone-offset-wrong", "ledger-svc last terminated at 05:47 EST", (FINISHED, PODNAME)),
]

TRUE = [
    Claim("restarts-plain", f"pod {POD} restarted 4 times", (RESTARTS, PODNAME)),
    Claim("restarts-word", f"pod {POD} restarted four times", (RESTARTS, PODNAME)),
    Claim("limit-in-gi", "ledger has a memory limit of 0.5Gi", (LIMIT,)),
    Claim("limit-in-mib", "ledger has a memory limit of 512 MiB", (LIMIT,)),
    Claim("percent-of-ratio", "25% of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("p99-rounded", "ledger-svc p99 latency is about 1.2 s", (P99, SERVICE)),
    Claim("errors-of-requests", "250 of 1000 ledger-svc requests failed", (ERRORS, REQUESTS, SERVICE)),
    Claim("deploy-failed", "the payments-api v2.4.1 deploy failed", (DEPLOY_STATUS, DEPLOY_VERSION, DEPLOY_SERVICE)),
    Claim("not-ready", f"pod {POD} is not ready", (READY, PODNAME)),
    Claim("time-utc", "ledger-svc last terminated at 09:47 UTC", (FINISHED, PODNAME)),
    Claim("time-cet", "ledger-svc last terminated at 10:47 CET", (FINISHED, PODNAME)),
    Claim("backoff-count", "the BackOff event for ledger-svc repeated 9 times", (BACKOFF_REASON, BACKOFF, PODNAME)),
]

LEAKS: dict[str, str] = {}
REFUSED: dict[str, str] = {}


def _case(prefix: str, c: Claim) -> world.Json:
    return world.case(f"{prefix}-{c.vector}", [c.json()])


def ALL_CASES() -> list[world.Json]:
    return [_case("untrue", c) for c in UNTRUE] + [_case("true", c) for c in TRUE]


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Outcome]:
    return run_all(ALL_CASES())


@pytest.mark.requirement("R-V-4")
@pytest.mark.parametrize("claim", [param(c.vector, c, leak=LEAKS.get(c.vector, "")) for c in UNTRUE])
def test_an_untrue_claim_is_never_shown_as_a_fact(claim: Claim, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[f"untrue-{claim.vector}"]
    assert not outcome.shown_as_fact("c5"), f"{claim.statement!r} shown ({outcome.verdict}):\n{outcome.run.answer_text}"
    if claim.critical:
        assert outcome.verdict != "PASS", f"an untrue critical claim leaves the run PASS: {claim.statement!r}"


@pytest.mark.requirement("R-V-5")
@pytest.mark.parametrize(
    "claim",
    [
        pytest.param(
            c,
            id=c.vector,
            marks=[pytest.mark.xfail(strict=True, reason=f"refused: {REFUSED[c.vector]}")]
            if c.vector in REFUSED
            else [],
        )
        for c in TRUE
    ],
)
def test_the_same_fact_written_truly_is_shown(claim: Claim, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[f"true-{claim.vector}"]
    assert outcome.shown_as_fact("c5"), f"an honest claim is refused: {claim.statement!r}\n{outcome.run.answer_text}"


def test_every_pinned_leak_names_a_vector() -> None:
    assert set(LEAKS) <= {c.vector for c in UNTRUE}
    assert set(REFUSED) <= {c.vector for c in TRUE}
