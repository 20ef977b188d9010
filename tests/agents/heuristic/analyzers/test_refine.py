"""From findings to claims: ``detect``, ``_refine`` and ``assess`` over live-shaped outputs.

What a settled pod's events said is over unless a caller blames its workload; a workload the question names keeps
its causes; the cluster's DNS server is the cause when callers fail to resolve and it logs failures; running, ready
pods are "no incident" evidence only when nothing else was found about their workload (R-V-1, R-A-2); a question
about workloads no output mentions gets critical no-data gaps and no claim (R-A-3, R-R-4). Every claim's bindings
resolve verbatim (R-C-1, R-GK-5).
"""

from __future__ import annotations

from collections.abc import Sequence

from diagnosis_server.agents.heuristic.analyzers.pods import settled_pods
from diagnosis_server.agents.heuristic.diagnosis import Assessment, _refine, assess, detect, unknown_subjects
from diagnosis_server.agents.heuristic.findings import CAUSE_CLAUSE, Role
from diagnosis_server.agents.heuristic.observations import Observation

from ._checks import assert_sound, check_binding, one, sound
from ._shapes import (
    container,
    event_list,
    instant,
    k8s_event,
    pack_event,
    pack_events,
    pod,
    pod_list,
    pod_logs,
    query,
    query_range,
    ranged,
)

BALER_PODS = ("hay-baler-5c7d8f9b6c-q8w2z", "hay-baler-5c7d8f9b6c-r4t6y")
PROBE = k8s_event(
    "Pod",
    BALER_PODS[0],
    "Unhealthy",
    'Readiness probe failed: Get "http://10.244.2.9:8080/healthz": context deadline exceeded (Client.Timeout '
    "exceeded while awaiting headers)",
    1,
)
CALLER = "grain-api-7d9f8c6b5d-q2w8z"
REFUSED = (
    '2025-02-11T06:42:00Z ERROR bale lookup failed: Get "http://hay-baler.greenfield.svc:8080/v1/bales": dial tcp '
    "10.96.14.2:8080: connect: connection refused"
)


def ready_balers() -> Observation:
    return pod_list(*(pod(name, app="hay-baler", containers=[container("hay-baler")]) for name in BALER_PODS))


def checked(observations: Sequence[Observation], subjects: Sequence[str] = ()) -> Assessment:
    """``assess``, with every finding and every claim's bindings checked against the outputs."""
    assessment = assess(observations, subjects=subjects)
    assert_sound(assessment.findings, observations)
    for claim in assessment.claims:
        assert claim.bindings, claim.statement
        for binding in claim.bindings:
            check_binding(binding, observations)
    return assessment


def roots(assessment: Assessment) -> list[str]:
    return [c.statement for c in assessment.claims if c.statement.endswith(CAUSE_CLAUSE)]


def test_a_settled_pods_events_are_over_and_no_incident_is_not_claimed() -> None:
    """A readiness probe failed on a pod that now runs ready: a red-herring candidate (hypothesis), and since
    something was found about hay-baler its ready pods do not make a "no incident" conclusion."""
    observations = [ready_balers(), event_list(PROBE)]
    assert settled_pods(observations) == set(BALER_PODS)
    probe = one(sound(_refine(detect(observations), settled_pods(observations)), observations), "probe")
    assert probe.role is Role.HYPOTHESIS

    assessment = checked(observations)
    assert not roots(assessment)
    assert not any(c.statement.startswith("No incident found") for c in assessment.claims)
    claim = next(c for c in assessment.claims if "fails its health probe" in c.statement)
    assert claim.hypothesis and not claim.critical
    assert [g.critical for g in assessment.gaps] == [True]


def test_a_settled_workload_its_callers_blame_keeps_its_cause() -> None:
    """The same probe, while grain-api's calls to hay-baler are refused: the workload is blamed, so what its pod
    reported still matters: it is the root cause, and the caller's link is critical."""
    observations = [ready_balers(), event_list(PROBE), pod_logs(CALLER, REFUSED)]
    refined = sound(_refine(detect(observations), settled_pods(observations)), observations)
    assert one(refined, "probe").role is Role.CAUSE
    assessment = checked(observations)
    (root,) = roots(assessment)
    assert root.startswith("hay-baler fails its health probe ('Readiness probe failed")
    link = next(c for c in assessment.claims if c.statement.startswith("grain-api calls to hay-baler fail"))
    assert link.critical and not link.hypothesis


def test_a_workload_the_question_names_keeps_its_causes() -> None:
    """A failed probe (strength 2) on a workload with no symptom read is a hypothesis, unless the question names
    that workload: the user reports trouble with it."""
    observations = [event_list(PROBE)]
    assert one(sound(_refine(detect(observations)), observations), "probe").role is Role.HYPOTHESIS
    named = sound(_refine(detect(observations), subjects=["hay-baler"]), observations)
    assert one(named, "probe").role is Role.CAUSE
    # Through assess, with a recorded pack's events (their records carry the service).
    recorded = [
        pack_events(pack_event(1, "hay-baler", "Pod", BALER_PODS[0], PROBE["reason"], PROBE["message"])),
    ]
    (root,) = roots(checked(recorded, subjects=["hay-baler"]))
    assert root.startswith("hay-baler fails its health probe")
    assert not roots(checked(recorded))


def test_a_workload_only_events_mention_is_not_unknown() -> None:
    """``why did silo-compactor fail?``: the Job's pods were cleaned up; its events remain."""
    observations = [
        ready_balers(),
        event_list(
            k8s_event(
                "Job",
                "silo-compactor",
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit",
                5,
                component="job-controller",
            )
        ),
    ]
    assessment = assess(observations, subjects=["silo-compactor"])
    assert not any(g.subject for g in assessment.gaps)
    (root,) = roots(assessment)
    assert root.startswith("silo-compactor job failed")


def test_cluster_dns_failures_are_the_cause_when_callers_cannot_resolve() -> None:
    """Callers fail to resolve (``EAI_AGAIN``) while CoreDNS logs its upstream timing out: the DNS server is the
    cause (strength 4), quoting its own failure, not each name the callers asked for."""
    coredns = pod_logs(
        "coredns-5d78c9869d-h2kq7",
        "[ERROR] plugin/errors: 2 api.partner.example. A: read udp 10.244.0.7:45678->169.254.169.254:53: i/o timeout",
        container_name="coredns",
    )
    caller = pod_logs(CALLER, "2025-02-11T06:42:00Z ERROR Error: getaddrinfo EAI_AGAIN api.partner.example")
    observations = [caller, coredns]
    findings = detect(observations)
    assert_sound(findings, observations)
    dns_server = next(f for f in findings if f.service == "coredns")
    assert (dns_server.kind, dns_server.role, dns_server.strength) == ("dns", Role.CAUSE, 4)
    assert dns_server.statement.startswith("coredns fails DNS lookups (")
    (root,) = roots(checked(observations))
    assert root.startswith("coredns fails DNS lookups")

    # Without a caller failing to resolve, CoreDNS's own timeout line is only its calls failing.
    alone = sound(detect([coredns]), [coredns])
    assert [(f.kind, f.role) for f in alone] == [("timeout", Role.SUPPORT)]


def test_coredns_answering_nxdomain_is_not_a_dns_failure() -> None:
    """grain-api calls ``weather-feed``, a name that does not exist; CoreDNS correctly answers NXDOMAIN for it. The
    cause is the caller's configuration, not the DNS server."""
    caller = pod_logs(
        CALLER,
        "2025-02-11T06:42:00Z ERROR quote failed: dial tcp: lookup weather-feed.greenfield.svc.cluster.local on "
        "10.96.0.10:53: no such host",
    )
    coredns = pod_logs(
        "coredns-5d78c9869d-h2kq7",
        '[INFO] 10.244.3.27:41234 - 4821 "A IN weather-feed.greenfield.svc.cluster.local. udp 71 false 512" '
        "NXDOMAIN qr,aa,rd 164 0.000181s",
        container_name="coredns",
    )
    (root,) = roots(assess([caller, coredns]))
    assert root.startswith("grain-api calls a host name that does not exist")


def test_running_ready_pods_and_a_healthy_error_rate_are_no_incident() -> None:
    """Nothing found but health: every pod runs ready and the error rate stayed within its baseline. The
    conclusion says both, and rests on the healthy findings' own bindings."""
    rate = query_range(
        "hay_baler_error_rate",
        ranged({"__name__": "hay_baler_error_rate", "service": "hay-baler"}, [0.002, 0.003] * 10),
    )
    observations = [ready_balers(), rate]
    assessment = checked(observations)
    conclusion = assessment.claims[-1]
    assert conclusion.critical and conclusion.statement == (
        "No incident found for hay-baler: their headline signals stayed within baseline and their pods are running "
        "with their containers ready"
    )
    assert not assessment.gaps

    pods_only = checked([ready_balers()])
    assert pods_only.claims[-1].statement == (
        "No incident found for hay-baler: their pods are running with their containers ready"
    )


def test_ready_pods_of_a_workload_callers_fail_on_are_no_all_clear() -> None:
    """Ready pods say a workload serves now, not that nothing happened to it: with a caller's refused calls to
    hay-baler there is no "No incident found for hay-baler"."""
    assessment = checked([ready_balers(), pod_logs(CALLER, REFUSED)])
    assert not any(c.statement.startswith("No incident found") for c in assessment.claims)


def test_error_lines_of_a_service_whose_error_rate_is_healthy_are_only_hypotheses() -> None:
    """A stray ERROR line on grain-api while its error rate stayed within its baseline: noise, not a symptom."""
    rate = query_range(
        "grain_api_error_rate",
        ranged({"__name__": "grain_api_error_rate", "service": "grain-api"}, [0.002, 0.003] * 10),
    )
    line = pod_logs(CALLER, "2025-02-11T06:42:00Z ERROR failed to warm quote cache for region eu-north: 3 misses")
    refined = sound(_refine(detect([rate, line])), [rate, line])
    assert one(refined, "error_log").role is Role.HYPOTHESIS


def test_a_certificate_that_cannot_be_renewed_is_a_cause_when_callers_see_it_expired() -> None:
    """cert-manager's failed renewal is support alone; with callers reporting the certificate expired
    (``cause_with``) it becomes a cause of strength 3 or more."""
    renewal = event_list(
        k8s_event(
            "CertificateRequest",
            "silo-gateway-tls-7",
            "Failed",
            'The certificate request has failed to complete and will be retried: issuer "letsencrypt-prod" not ready',
            2,
            component="cert-manager",
        )
    )
    caller = pod_logs(
        CALLER,
        '2025-02-11T06:42:00Z ERROR Get "https://silo-gateway.greenfield.svc:8443/v1/silos": tls: failed to verify '
        "certificate: x509: certificate has expired or is not yet valid",
    )
    gateway = pod_list(pod("silo-gateway-6b8d9c7f5d-p4q7r", app="silo-gateway"))
    alone = sound(_refine(detect([renewal, gateway])), [renewal, gateway])
    assert one(alone, "cert_renewal").role is Role.SUPPORT
    observations = [renewal, caller, gateway]
    refined = sound(_refine(detect(observations), settled_pods(observations)), observations)
    renewal_finding = one(refined, "cert_renewal")
    assert (renewal_finding.role, renewal_finding.service) == (Role.CAUSE, "silo-gateway")
    assert renewal_finding.strength >= 3
    checked(observations)


def test_a_question_about_workloads_no_output_mentions_gets_no_data_gaps() -> None:
    """The question names ``seedbank`` and ``silo-gateway``; the outputs are about hay-baler only: no claim about
    anything else, one critical gap per subject."""
    observations = [ready_balers(), event_list(PROBE)]
    assessment = assess(observations, subjects=["seedbank", "silo-gateway"])
    assert assessment.claims == ()
    assert [(g.subject, g.critical) for g in assessment.gaps] == [("seedbank", True), ("silo-gateway", True)]
    assert all(g.description == f"no output of the calls made mentions {g.subject}" for g in assessment.gaps)
    # One subject the data knows: an ordinary assessment, no no-data gap.
    known = assess(observations, subjects=["seedbank", "hay-baler"])
    assert known.claims and not any(g.subject for g in known.gaps)


def test_an_unmatched_hyphenated_word_beside_a_known_name_part_is_not_a_workload_without_data() -> None:
    """ "Why are baler sign-ups failing?": "sign-ups" is taken for a name on its form, but the question's word
    "baler" names hay-baler by a part: the answer is an ordinary assessment, not "no data about sign-ups"."""
    observations = [ready_balers(), event_list(PROBE)]
    question = "Why are baler sign-ups failing after the re-index?"
    assessment = assess(observations, subjects=["sign-ups"], question=question)
    assert assessment.claims and not any(g.subject for g in assessment.gaps)
    assert unknown_subjects(["sign-ups"], observations, question) == []


def test_a_hyphenated_name_is_still_unknown_when_only_its_own_parts_match() -> None:
    """ "hay-silo" shares "hay" with hay-baler, and "seed-drill" names nothing: the words inside the unmatched names
    do not count, so both stay workloads the data does not know."""
    observations = [ready_balers(), event_list(PROBE)]
    question = "Why did the hay-silo and seed-drill cronjobs fail last night?"
    assert unknown_subjects(["hay-silo", "seed-drill"], observations, question) == ["hay-silo", "seed-drill"]
    assessment = assess(observations, subjects=["hay-silo", "seed-drill"], question=question)
    assert assessment.claims == ()
    assert [g.subject for g in assessment.gaps] == ["hay-silo", "seed-drill"]


HIKARI_TIMEOUT = (
    "2025-02-11T06:44:00.318Z ERROR 1 --- [grain-api] [nio-8080-exec-37] o.h.engine.jdbc.spi.SqlExceptionHelper   : "
    "HikariPool-1 - Connection is not available, request timed out after 30000ms (total=10, active=10, idle=0, "
    "waiting=42)"
)


def hikari(service: str, active: float, *, pending: float = 0) -> Observation:
    """Micrometer's HikariCP gauges of ``service``'s pool over ten minutes: active, max (10) and pending."""
    labels = {"pool": "HikariPool-1", "job": service, "namespace": "greenfield"}
    return query_range(
        '{__name__=~"hikaricp_connections_(active|max|pending)"}',
        ranged({"__name__": "hikaricp_connections_active", **labels}, [4.0] * 5 + [active] * 5),
        ranged({"__name__": "hikaricp_connections_max", **labels}, [10.0] * 10),
        ranged({"__name__": "hikaricp_connections_pending", **labels}, [0.0] * 5 + [pending] * 5),
    )


def test_a_pool_timeout_with_its_own_pool_at_its_size_is_a_cause() -> None:
    """HikariCP's "Connection is not available" in grain-api's log and grain-api's own pool series at its size
    (active 10 of max 10, requests waiting) agree: the pool is the cause, its series back it; the database (within
    its limit elsewhere) does not make it the database's doing."""
    observations = [pod_logs(CALLER, HIKARI_TIMEOUT), hikari("grain-api", 10, pending=38)]
    findings = sound(_refine(detect(observations)), observations)
    pool = one(findings, "app_pool")
    assert (pool.role, pool.service) == (Role.CAUSE, "grain-api") and pool.strength >= 3
    assert one(findings, "app_pool_full").role is Role.SUPPORT
    assessment = checked(observations)
    pooled = [c for c in assessment.claims if "runs out of connections in its connection pool" in c.statement]
    assert any(c.critical for c in pooled)


def test_a_pool_timeout_stays_a_direction_without_its_own_pool_series_at_its_size() -> None:
    """The same timeout with the pool's series under its size, or with another workload's pool full: no agreement
    within the workload, so the timeout is only a direction (client-side pool trouble without a full database)."""
    for series in (hikari("grain-api", 6), hikari("hay-baler", 10, pending=20)):
        observations = [pod_logs(CALLER, HIKARI_TIMEOUT), series]
        assert one(sound(_refine(detect(observations)), observations), "app_pool").role is Role.HYPOTHESIS


def test_unavailable_replicas_make_a_strong_cause_the_root() -> None:
    """kube-state-metrics reports hay-baler's replicas unavailable while its pods cannot mount their secret: the
    workload is symptomatic, so the mount failure is the root cause."""
    unavailable = query(
        "kube_deployment_status_replicas_unavailable",
        instant(
            {
                "__name__": "kube_deployment_status_replicas_unavailable",
                "job": "kube-state-metrics",
                "deployment": "hay-baler",
            },
            2,
        ),
    )
    mount = event_list(
        k8s_event(
            "Pod",
            BALER_PODS[1],
            "FailedMount",
            'MountVolume.SetUp failed for volume "tls" : secret "hay-baler-tls" not found',
            3,
        )
    )
    assessment = checked([unavailable, mount])
    (root,) = roots(assessment)
    assert root == (
        'hay-baler pods cannot start (\'MountVolume.SetUp failed for volume "tls" : secret "hay-baler-tls" '
        "not found')" + CAUSE_CLAUSE
    )
    symptom = next(c for c in assessment.claims if "kube_deployment_status_replicas_unavailable" in c.statement)
    assert symptom.critical
