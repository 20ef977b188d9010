"""Round 3, class 5: an untrue polarity or number form is never a fact; the true fact in that form is shown.

Why: a claim's polarity and its numbers are facts the evidence must hold like any other. Each untrue claim is bound
to the very text it misreads, and the Verifier is played fooled (every claim a direct observation, verdict PASS):
the guard alone must catch it. The vectors differ from ``test_polarity_numbers.py`` and
``tests/attacks/test_untruths.py``: "failed to", "isn't", "hasn't been", "neither ... nor", "without errors",
"error-free", "stopped", "ceased", "no sign of", "=false", "avoided", antonyms of "exhausted" and "failed",
quantifiers, "once", "twice", "thrice", "a couple", Roman numerals, ratios as "1:3", Unicode fractions, "pct",
"x 10^4", Swiss, French, SI and Indian grouping, Devanagari, Thai, Arabic, circled, mathematical and Kaktovik
digits, "10k".
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
REASON = (EVENTS, f"{TERMINATED}/reason", "OOMKilled")
READY = (EVENTS, f"{CS}/ready", "false")
LINE = (LOGS, "/lines/0/message", "upstream=ledger-svc status=502")
RETRY = (LOGS, "/lines/1/message", "retry budget exhausted for cluster ledger-svc (3/3)")
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

    def json(self) -> world.Json:
        return world.claim("c5", self.statement, *(world.bind(inv, path, text) for inv, path, text in self.binds))


UNTRUE = [
    # negations: ledger-svc was OOMKilled, edge-gateway does get 502s, the deploy failed
    Claim("failed-to-get-502", "edge-gateway failed to get status=502 from ledger-svc", (LINE,)),
    Claim("isnt-getting-502", "edge-gateway isn't getting status=502 from ledger-svc", (LINE,)),
    Claim("nothing-got-502", "nothing at edge-gateway got status=502 from ledger-svc", (LINE,)),
    Claim("hasnt-been-oomkilled", "ledger-svc hasn't been OOMKilled", (REASON, PODNAME)),
    Claim("no-longer-oomkilled", "ledger-svc is no longer OOMKilled", (REASON, PODNAME)),
    Claim("neither-nor", "ledger-svc was neither OOMKilled nor restarted", (REASON, RESTARTS, PODNAME)),
    Claim("no-sign-of-oomkilled", "there is no sign of OOMKilled for ledger-svc", (REASON, PODNAME)),
    Claim("oomkilled-equals-false", "ledger-svc has OOMKilled=false", (REASON, PODNAME)),
    Claim("avoided-oomkilled", "ledger-svc avoided OOMKilled", (REASON, PODNAME)),
    Claim("deploy-didnt-fail", "the payments-api v2.4.1 deploy didn't fail", DEPLOY),
    Claim("deploy-wasnt-a-failure", "the payments-api v2.4.1 deploy wasn't a failure", DEPLOY),
    # "without errors", "error-free", "stopped", "ceased"
    Claim("reached-without-errors", "edge-gateway reached ledger-svc without errors", (LINE,)),
    Claim("error-free", "edge-gateway calls to ledger-svc are error-free", (LINE,)),
    Claim("stopped-restarting", f"pod {POD} stopped restarting", (RESTARTS, PODNAME)),
    Claim("backoff-ceased", "the ledger-svc BackOff events ceased", (BACKOFF_REASON, BACKOFF, PODNAME)),
    # antonyms of "exhausted", "failed" and "not ready"
    Claim("budget-intact", "the edge-gateway retry budget for ledger-svc is intact", (RETRY,)),
    Claim("budget-plenty-left", "the edge-gateway retry budget for ledger-svc has plenty left", (RETRY,)),
    Claim("budget-remains", "the edge-gateway retry budget for ledger-svc remains", (RETRY,)),
    Claim("deploy-went-through", "the payments-api v2.4.1 deploy went through", DEPLOY),
    Claim("deploy-landed", "the payments-api v2.4.1 deploy landed", DEPLOY),
    Claim("deploy-rolled-out", "the payments-api v2.4.1 deploy rolled out", DEPLOY),
    Claim("deploy-is-live", "the payments-api v2.4.1 deploy is live", DEPLOY),
    Claim("deploy-nothing-went-wrong", "nothing went wrong with the payments-api v2.4.1 deploy", DEPLOY),
    Claim("pod-is-stable", f"pod {POD} is stable", (RESTARTS, PODNAME)),
    Claim("pod-reports-ready", f"pod {POD} reports ready", (READY, PODNAME)),
    Claim("pod-isnt-unready", f"pod {POD} isn't unready", (READY, PODNAME)),
    # quantifiers: 250 of 1000 failed
    Claim("most-failed", "most ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("majority-failed", "the majority of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("all-failed", "all ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("few-succeeded", "few ledger-svc requests succeeded", (RATIO, SERVICE)),
    # number words and Roman numerals: 4 restarts, 9 BackOffs
    Claim("restarted-once", f"pod {POD} restarted once", (RESTARTS, PODNAME)),
    Claim("restarted-twice", f"pod {POD} restarted twice", (RESTARTS, PODNAME)),
    Claim("restarted-thrice", f"pod {POD} restarted thrice", (RESTARTS, PODNAME)),
    Claim("a-couple-of-restarts", f"pod {POD} restarted a couple of times", (RESTARTS, PODNAME)),
    Claim("a-single-restart", f"pod {POD} had a single restart", (RESTARTS, PODNAME)),
    Claim("a-dozen-restarts", f"pod {POD} restarted a dozen times", (RESTARTS, PODNAME)),
    Claim("dozens-of-restarts", f"pod {POD} restarted dozens of times", (RESTARTS, PODNAME)),
    Claim("eighth-restart", f"pod {POD} is on its eighth restart", (RESTARTS, PODNAME)),
    Claim("roman-vi", f"pod {POD} restarted VI times", (RESTARTS, PODNAME)),
    Claim("roman-lower-viii", f"pod {POD} restarted viii times", (RESTARTS, PODNAME)),
    Claim(
        "roman-xi-backoffs", "the BackOff event for ledger-svc repeated XI times", (BACKOFF_REASON, BACKOFF, PODNAME)
    ),
    # fractions and ratios: 0.25
    Claim("fraction-one-third", "1/3 of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("vulgar-fraction-third", "⅓ of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("three-quarters", "three quarters of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("ratio-one-to-three", "ledger-svc failed at a 1:3 ratio", (RATIO, SERVICE)),
    Claim("ratio-read-as-25", "the ledger-svc error ratio is 25", (RATIO, SERVICE)),
    Claim("pct-wrong", "52 pct of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("percent-word-wrong", "2.5 percent of ledger-svc requests failed", (RATIO, SERVICE)),
    # scientific notation and magnitudes: 250 errors, 1000 requests
    Claim("sci-2.5e1", "ledger-svc logged 2.5e1 errors", (ERRORS, SERVICE)),
    Claim("sci-times-ten-power", "ledger-svc served 1 × 10^4 requests", (REQUESTS, SERVICE)),
    Claim("sci-upper-e-plus", "ledger-svc served 1.0E+4 requests", (REQUESTS, SERVICE)),
    Claim("k-suffix", "ledger-svc served 10k requests", (REQUESTS, SERVICE)),
    Claim("half-a-thousand", "half a thousand ledger-svc requests failed", (ERRORS, SERVICE)),
    Claim("tenfold", "ledger-svc errors rose tenfold to 250", (ERRORS, SERVICE)),
    # grouping and digits of other locales and blocks: p99 1234.5 ms, 250 errors, 4 restarts
    Claim("swiss-grouping", "ledger-svc p99 latency is 12'345.5 ms", (P99, SERVICE)),
    Claim("french-grouping", "ledger-svc p99 latency is 12 345,5 ms", (P99, SERVICE)),
    Claim("indian-grouping", "ledger-svc served 1,00,000 requests", (REQUESTS, SERVICE)),
    Claim("narrow-nbsp-grouping", "ledger-svc served 10\u202f000 requests", (REQUESTS, SERVICE)),
    Claim("arabic-decimal-separator", "ledger-svc p99 latency is ١٢٣٤٫٥٥ ms", (P99, SERVICE)),
    Claim("devanagari-digits", "ledger-svc logged २५ errors", (ERRORS, SERVICE)),
    Claim("thai-digits", "ledger-svc logged ๒๕ errors", (ERRORS, SERVICE)),
    Claim("math-bold-digits", "ledger-svc logged 𝟐𝟓 errors", (ERRORS, SERVICE)),
    Claim("circled-digit", f"pod {POD} restarted ⑧ times", (RESTARTS, PODNAME)),
    Claim("kaktovik-digit", f"pod {POD} restarted \U0001d2c8 times", (RESTARTS, PODNAME)),
]
# Vectors that leak today (a strict xfail each): none.
LEAKS: dict[str, str] = {}

TRUE = [
    Claim("roman-iv", f"pod {POD} restarted IV times", (RESTARTS, PODNAME)),
    Claim(
        "roman-ix-backoffs", "the BackOff event for ledger-svc repeated IX times", (BACKOFF_REASON, BACKOFF, PODNAME)
    ),
    Claim("fourth-restart", f"pod {POD} is on its fourth restart", (RESTARTS, PODNAME)),
    Claim("four-restarts-word", f"pod {POD} has four restarts", (RESTARTS, PODNAME)),
    Claim("isnt-ready", f"pod {POD} isn't ready", (READY, PODNAME)),
    Claim("no-longer-ready", f"pod {POD} is no longer ready", (READY, PODNAME)),
    Claim("never-became-ready", f"pod {POD} never became ready", (READY, PODNAME)),
    Claim("deploy-did-not-succeed", "the payments-api v2.4.1 deploy did not succeed", DEPLOY),
    Claim("deploy-failed-to-complete", "the payments-api v2.4.1 deploy failed to complete", DEPLOY),
    Claim("budget-exhausted", "the edge-gateway retry budget for ledger-svc is exhausted", (RETRY,)),
    Claim("a-minority-failed", "a minority of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("one-quarter-word", "one quarter of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("one-in-four", "one in four ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("fraction-one-quarter", "1/4 of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("vulgar-fraction-quarter", "¼ of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("percent-word", "25 percent of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("pct", "25 pct of ledger-svc requests failed", (RATIO, SERVICE)),
    Claim("sci-1e3", "ledger-svc served 1e3 requests", (REQUESTS, SERVICE)),
    Claim("sci-1.0e3", "ledger-svc served 1.0e3 requests", (REQUESTS, SERVICE)),
    Claim("ten-to-the-third", "ledger-svc served 10^3 requests", (REQUESTS, SERVICE)),
    Claim("one-k", "ledger-svc served 1k requests", (REQUESTS, SERVICE)),
    Claim("a-thousand", "ledger-svc served a thousand requests", (REQUESTS, SERVICE)),
    Claim("two-hundred-fifty", "ledger-svc logged two hundred fifty errors", (ERRORS, SERVICE)),
    Claim("swiss-grouping", "ledger-svc p99 latency is 1'234.5 ms", (P99, SERVICE)),
    Claim("si-thin-space-grouping", "ledger-svc p99 latency is 1\u2009234.5 ms", (P99, SERVICE)),
    Claim("narrow-nbsp-grouping", "ledger-svc served 1\u202f000 requests", (REQUESTS, SERVICE)),
    Claim("french-grouping", "ledger-svc p99 latency is 1 234,5 ms", (P99, SERVICE)),
]
# Vectors refused today (a strict xfail each): none.
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
def test_an_untrue_negation_antonym_or_number_form_is_never_a_fact(claim: Claim, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[f"untrue-{claim.vector}"]
    assert not outcome.shown_as_fact("c5"), f"{claim.statement!r} shown ({outcome.verdict}):\n{outcome.run.answer_text}"
    assert outcome.verdict != "PASS", f"an untrue critical claim leaves the run PASS: {claim.statement!r}"


@pytest.mark.requirement("R-V-5")
@pytest.mark.parametrize("claim", [vector(c.vector, c, refused=REFUSED.get(c.vector, "")) for c in TRUE])
def test_the_fact_written_truly_in_that_form_is_shown(claim: Claim, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[f"true-{claim.vector}"]
    assert outcome.shown_as_fact("c5"), f"an honest claim is refused: {claim.statement!r}\n{outcome.run.answer_text}"


def test_every_pinned_vector_names_a_vector() -> None:
    assert set(LEAKS) <= {c.vector for c in UNTRUE}
    assert set(REFUSED) <= {c.vector for c in TRUE}
    assert len({c.vector for c in UNTRUE}) == len(UNTRUE) and len({c.vector for c in TRUE}) == len(TRUE)
