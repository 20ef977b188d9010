"""The detector library, each detector on a small hand-made pack (issue: the embedded default).

Every finding must be self-grounded: each binding resolves in its invocation's output with its matched
text there, and the statement's concrete facts are all in the matched texts (direct_observation).
"""

from __future__ import annotations

from collections.abc import Sequence

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.heuristic.diagnosis import assess, detect
from diagnosis_server.agents.heuristic.findings import CAUSE_CLAUSE, Finding, Role
from diagnosis_server.agents.heuristic.observations import Observation
from diagnosis_server.conversions import JsonObject, value_text
from diagnosis_server.gatekeeper.pointer import resolve
from diagnosis_server.tools.scenario import Scenario
from diagnosis_server.verification.derivability import derive

from ._packs import at, deploy, event, log, observe, pack, series, step, svc

DIRECT = contracts_pb2.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION


def grounded(findings: Sequence[Finding], observations: Sequence[Observation]) -> None:
    outputs = {o.invocation_id: o for o in observations}
    for finding in findings:
        for binding in finding.bindings:
            obs = outputs[binding.invocation_id]
            assert binding.tool_name == obs.tool_name
            assert binding.matched_text in value_text(resolve(obs.output, binding.raw_path)), binding
        derivation = derive(finding.statement, [b.matched_text for b in finding.bindings])
        assert derivation.classification == DIRECT, (finding.statement, derivation.reason())


async def grounded_findings(scenario: Scenario, calls: list[tuple[str, JsonObject]]) -> list[Finding]:
    """The detectors' findings over the observations of ``calls`` on ``scenario``, each checked grounded."""
    observations = await observe(scenario, calls)
    findings = detect(observations)
    grounded(findings, observations)
    return findings


def metric(name: str, service: str) -> tuple[str, JsonObject]:
    """The call reading the metric ``name`` of ``service``."""
    return ("metrics.query", {"metric": name, "service": service})


def warnings_of(service: str) -> tuple[str, JsonObject]:
    """The call reading the log lines of ``service`` at WARN and above."""
    return ("logs.search", {"service": service, "level": "WARN"})


def one(findings: Sequence[Finding], kind: str) -> Finding:
    matching = [f for f in findings if f.kind == kind]
    assert len(matching) == 1, [f.kind for f in findings]
    return matching[0]


async def test_oomkilled_and_backoff_events() -> None:
    scenario = pack(
        [svc("checkout-api")],
        events=[
            event(5, "checkout-api", "OOMKilled", "Container checkout-api was OOMKilled (exit code 137)", obj="p-1"),
            event(
                6, "checkout-api", "BackOff", "Back-off restarting failed container checkout-api in pod p-1", obj="p-1"
            ),
            event(
                7, "checkout-api", "BackOff", "Back-off restarting failed container cleanup in pod job-1", obj="job-1"
            ),
            event(8, "checkout-api", "OOMKilled", "Container checkout-api was OOMKilled (exit code 137)", obj="p-2"),
        ],
    )
    findings = await grounded_findings(scenario, [("k8s.events", {"service": "checkout-api"})])
    oom = one(findings, "oom")
    assert (oom.role, oom.service) == (Role.CAUSE, "checkout-api")
    assert "exit code 137" in oom.statement
    # A crash loop is about the workload of the pod the event names, whatever its container is called.
    crashloop = one(findings, "crashloop")
    assert crashloop.role is Role.SUPPORT and crashloop.service == "checkout-api"


async def test_error_rate_above_baseline_has_an_onset_and_a_spike_is_not_an_incident() -> None:
    rising = step(0.001, 0.2)
    spike = [0.001] * 9 + [0.3] + [0.001] * 10
    scenario = pack(
        [svc("api"), svc("web", depends_on=("api",))],
        metrics=[series("http_requests_error_rate", "api", rising), series("http_requests_error_rate", "web", spike)],
    )
    findings = await grounded_findings(
        scenario,
        [metric("http_requests_error_rate", "api"), metric("http_requests_error_rate", "web")],
    )
    symptom = next(f for f in findings if f.role is Role.SYMPTOM)
    assert symptom.service == "api" and at(10) in symptom.statement and "0.2" in symptom.statement
    healthy = [f for f in findings if f.role is Role.HEALTHY]
    assert [f.service for f in healthy] == ["web"]


async def test_deploy_right_before_the_onset_is_a_cause_with_version_errors_and_rollback() -> None:
    values = [0.001] * 15 + [0.3] * 6 + [0.001] * 9
    scenario = pack(
        [svc("payments-api")],
        metrics=[series("http_requests_error_rate", "payments-api", values)],
        deploys=[
            deploy(14.5, "payments-api", "v2.0.0", "refactor serializer"),
            deploy(20.2, "payments-api", "v1.9.9", "Rollback to v1.9.9"),
            deploy(10, "payments-api", "v1.9.8", "a deploy that another one followed"),
            deploy(1, "payments-api", "v1.9.7", "earlier routine deploy"),
        ],
        logs=[
            log(
                16,
                "payments-api",
                "ERROR",
                '{"version":"v2.0.0","panic":"invalid memory address or nil pointer '
                'dereference","stack":"/src/intent/serializer.go:88"}',
            ),
        ],
    )
    findings = await grounded_findings(
        scenario,
        [metric("http_requests_error_rate", "payments-api"), ("deploys.list", {}), warnings_of("payments-api")],
    )
    regression = one(findings, "deploy_regression")
    assert regression.role is Role.CAUSE and "v2.0.0" in regression.statement
    assert regression.strength == 4  # correlated, errors carry the version, recovery after the rollback
    errors = one(findings, "deploy_errors")
    assert "serializer.go:88" in errors.statement and "nil pointer dereference" in errors.statement
    assert one(findings, "rollback").role is Role.SUPPORT
    assert one(findings, "deploy_before_onset").role is Role.HYPOTHESIS


async def test_connection_pool_exhaustion_at_the_database_and_in_clients() -> None:
    scenario = pack(
        [svc("orders-api", depends_on=("orders-db",)), svc("orders-db", "database"), svc("inv-api")],
        metrics=[
            series("db_connections_in_use", "orders-db", step(60, 97), unit="count"),
            series("db_connections_max", "orders-db", [100] * 20, unit="count"),
            series("http_requests_error_rate", "orders-api", step(0.001, 0.2)),
        ],
        logs=[
            log(
                20,
                "orders-api",
                "ERROR",
                "HikariPool-1 - Connection is not available, request timed out after "
                "30000ms (total=15, active=15, idle=0, waiting=42)",
            ),
            log(
                21,
                "orders-db",
                "ERROR",
                "FATAL:  remaining connection slots are reserved for non-replication superuser connections",
            ),
            log(
                22,
                "inv-api",
                "ERROR",
                "sqlalchemy.exc.TimeoutError: QueuePool limit of size 10 overflow 5 reached, "
                "connection timed out, timeout 30.00",
            ),
        ],
    )
    calls: list[tuple[str, JsonObject]] = [
        metric("http_requests_error_rate", "orders-api"),
        metric("db_connections_in_use", "orders-db"),
        metric("db_connections_max", "orders-db"),
        warnings_of("orders-api"),
        warnings_of("orders-db"),
        warnings_of("inv-api"),
    ]
    observations = await observe(scenario, calls)
    findings = detect(observations)
    grounded(findings, observations)
    assert one(findings, "db_exhausted").role is Role.CAUSE
    assert {f.service for f in findings if f.kind == "app_pool"} == {"orders-api", "inv-api"}
    assert one(findings, "db_slots").service == "orders-db"

    claims = assess(observations).claims
    root = [c for c in claims if CAUSE_CLAUSE in c.statement]
    assert len(root) == 1 and root[0].statement.startswith("orders-db") and root[0].critical
    hikari = next(c for c in claims if "Connection is not available" in c.statement)
    assert hikari.critical and not hikari.hypothesis  # a client of the full database: a link


async def test_client_pool_exhaustion_without_a_full_database_is_only_a_hypothesis() -> None:
    scenario = pack(
        [svc("inv-api", depends_on=("inv-db",)), svc("inv-db", "database")],
        metrics=[
            series("http_requests_error_rate", "inv-api", step(0.001, 0.2)),
            series("db_connections_in_use", "inv-db", [40] * 20, unit="count"),
            series("db_connections_max", "inv-db", [200] * 20, unit="count"),
        ],
        logs=[
            log(
                20,
                "inv-api",
                "ERROR",
                "QueuePool limit of size 10 overflow 5 reached, connection timed out, timeout 30.00",
            )
        ],
    )
    observations = await observe(
        scenario,
        [
            metric("http_requests_error_rate", "inv-api"),
            metric("db_connections_in_use", "inv-db"),
            metric("db_connections_max", "inv-db"),
            warnings_of("inv-api"),
        ],
    )
    assessment = assess(observations)
    pool = next(c for c in assessment.claims if "QueuePool" in c.statement)
    assert pool.hypothesis and not pool.critical
    assert not any(CAUSE_CLAUSE in c.statement for c in assessment.claims)
    assert [g.critical for g in assessment.gaps] == [True]


async def test_disk_nearly_full_and_no_space_left_on_device() -> None:
    scenario = pack(
        [svc("search-es", "database")],
        metrics=[
            series("disk_used_ratio", "search-es", step(0.80, 0.993), labels={"pod": "es-2", "capacity": "100Gi"})
        ],
        logs=[
            log(30, "search-es", "WARN", "[es-0] flood stage disk watermark [95%] exceeded on [es-2]"),
            log(31, "search-es", "ERROR", "cannot write to file /data/x.flb: ENOSPC (No space left on device)"),
        ],
    )
    findings = await grounded_findings(
        scenario,
        [metric("disk_used_ratio", "search-es"), warnings_of("search-es")],
    )
    disk = [f for f in findings if f.kind == "disk_full"]
    assert len(disk) == 2 and all(f.role is Role.CAUSE for f in disk)
    assert any("100Gi" in f.statement for f in disk) and any("ENOSPC" in f.statement for f in disk)
    assert one(findings, "disk_flood_stage").role is Role.SUPPORT


async def test_certificate_expired_in_a_callers_log_and_in_the_expiry_metric() -> None:
    scenario = pack(
        [svc("accounts-api", depends_on=("partner-auth",)), svc("partner-auth")],
        metrics=[
            series(
                "tls_certificate_expiry_seconds",
                "partner-auth",
                [1200.0 - 300 * i for i in range(20)],
                unit="seconds",
                labels={"secret": "partner-auth-tls", "not_after": at(4)},
            )
        ],
        logs=[
            log(
                10,
                "accounts-api",
                "ERROR",
                'token exchange failed upstream=partner-auth err="tls: failed to verify '
                'certificate: x509: certificate has expired or is not yet valid"',
            ),
        ],
    )
    findings = await grounded_findings(
        scenario,
        [metric("tls_certificate_expiry_seconds", "partner-auth"), warnings_of("accounts-api")],
    )
    assert one(findings, "cert_expired").service == "partner-auth"
    expired = one(findings, "tls_expired")
    assert (expired.role, expired.service) == (Role.CAUSE, "partner-auth")


async def test_dependency_latency_with_callers_timing_out_is_the_cause() -> None:
    scenario = pack(
        [svc("catalog-api", depends_on=("pricing-svc",)), svc("pricing-svc")],
        metrics=[
            series("http_request_duration_p99_ms", "pricing-svc", step(90.0, 3000.0), unit="ms"),
            series("http_requests_error_rate", "catalog-api", step(0.001, 0.2)),
        ],
        logs=[
            log(
                15,
                "catalog-api",
                "ERROR",
                'msg="price lookup failed" upstream=pricing-svc err="context deadline '
                'exceeded (Client.Timeout exceeded while awaiting headers)"',
            ),
        ],
    )
    observations = await observe(
        scenario,
        [
            metric("http_requests_error_rate", "catalog-api"),
            metric("http_request_duration_p99_ms", "pricing-svc"),
            warnings_of("catalog-api"),
        ],
    )
    findings = detect(observations)
    grounded(findings, observations)
    assert one(findings, "dep_latency").service == "pricing-svc"
    assert one(findings, "timeout").blamed == "pricing-svc"
    root = [c for c in assess(observations).claims if CAUSE_CLAUSE in c.statement]
    assert len(root) == 1 and root[0].statement.startswith("pricing-svc")


async def test_failed_mount_evictions_and_node_events() -> None:
    scenario = pack(
        [svc("warehouse-gateway")],
        events=[
            event(5, None, "NodeNotSchedulable", "Node n-1 status is now: NodeNotSchedulable", kind="Node", obj="n-1"),
            event(6, "warehouse-gateway", "Evicted", "The node was low on resource: memory.", obj="wg-1"),
            event(
                7,
                "warehouse-gateway",
                "FailedMount",
                'MountVolume.SetUp failed for volume "config" : configmap "wg-config" not found',
                obj="wg-2",
            ),
        ],
    )
    findings = await grounded_findings(scenario, [("k8s.events", {})])
    mount = one(findings, "failed_mount")
    assert (mount.role, mount.service, mount.strength) == (Role.CAUSE, "warehouse-gateway", 4)
    # An eviction is a failure mechanism of its own (it can be the cause), weaker than a volume that cannot mount.
    evicted = one(findings, "evicted")
    assert evicted.role is Role.CAUSE and evicted.strength < mount.strength
    assert all(f.service for f in findings)  # a node event names no service: no finding about it


async def test_healthy_signals_are_the_critical_claims_when_nothing_is_wrong() -> None:
    scenario = pack(
        [svc("web")],
        metrics=[
            series("http_requests_error_rate", "web", [0.001, 0.002] * 10),
            series("http_request_duration_p99_ms", "web", [300.0, 320.0] * 10, unit="ms"),
        ],
        logs=[log(3, "web", "WARN", "a client request body is buffered to a temporary file")],
    )
    observations = await observe(
        scenario,
        [metric("http_requests_error_rate", "web"), metric("http_request_duration_p99_ms", "web"), warnings_of("web")],
    )
    assessment = assess(observations)
    grounded(assessment.findings, observations)
    *healthy, conclusion = assessment.claims
    assert len(healthy) == 2 and all(c.critical and "within its baseline" in c.statement for c in healthy)
    # The conclusion is a claim of its own, resting on the healthy signals' own recorded values.
    assert conclusion.critical and conclusion.statement.startswith("No incident found for web")
    assert set(conclusion.bindings) <= {b for c in healthy for b in c.bindings}
    assert not assessment.gaps


async def test_failing_dependency_without_a_cause_gives_a_critical_parseable_gap() -> None:
    scenario = pack(
        [svc("inventory-api", depends_on=("warehouse-gateway",)), svc("warehouse-gateway")],
        metrics=[series("http_requests_error_rate", "inventory-api", step(0.001, 0.2))],
        logs=[
            log(
                12,
                "inventory-api",
                "ERROR",
                "reserve failed: Server error '503 Service Unavailable' for url "
                "'http://warehouse-gateway.logistics.svc:8080/v2/reservations'",
            ),
        ],
    )
    observations = await observe(
        scenario,
        [
            ("topology.dependencies", {"service": "inventory-api"}),
            metric("http_requests_error_rate", "inventory-api"),
            warnings_of("inventory-api"),
        ],
    )
    assessment = assess(observations)
    grounded(assessment.findings, observations)
    assert not any(CAUSE_CLAUSE in c.statement for c in assessment.claims)
    link = next(c for c in assessment.claims if "warehouse-gateway" in c.statement)
    assert link.critical and "503 Service Unavailable" in link.statement
    (gap,) = assessment.gaps
    assert gap.critical
    calls = {(c.tool_name, c.argument("service"), c.argument("metric")) for c in gap.calls}
    assert ("k8s.events", "warehouse-gateway", None) in calls
    assert ("metrics.query", "warehouse-gateway", None) in calls
    assert ("metrics.query", "inventory-api", "http_requests_error_rate") in calls


async def test_callers_504s_on_a_slow_dependency_make_its_latency_the_cause() -> None:
    scenario = pack(
        [svc("web-bff", depends_on=("catalog-api",)), svc("catalog-api")],
        metrics=[series("http_request_duration_p99_ms", "catalog-api", step(120.0, 2500.0), unit="ms")],
        logs=[
            log(15, "web-bff", "INFO", '10.0.0.1 - - "GET /api/products/1 HTTP/1.1" 504 167 upstream=catalog-api:8080'),
        ],
    )
    findings = await grounded_findings(
        scenario,
        [
            metric("http_request_duration_p99_ms", "catalog-api"),
            ("logs.search", {"service": "web-bff", "query": '" 5'}),
        ],
    )
    link = one(findings, "timeout")
    assert link.blamed == "catalog-api" and "504" in link.statement
    assert one(findings, "dep_latency").service == "catalog-api"


async def test_a_named_latency_series_is_stated_with_its_family_word() -> None:
    """``http_server_request_duration_p99`` does not say "latency": the statement says it, then the exact name read
    (bound), and stays a direct observation of its bindings; a name that says it already is stated alone."""
    scenario = pack(
        [svc("ledger-api"), svc("quotes-api")],
        metrics=[
            series("http_server_request_duration_p99", "ledger-api", step(120, 2400), unit="ms"),
            series("quotes_latency_p99_ms", "quotes-api", step(80, 1900), unit="ms"),
        ],
    )
    findings = await grounded_findings(
        scenario,
        [metric("http_server_request_duration_p99", "ledger-api"), metric("quotes_latency_p99_ms", "quotes-api")],
    )
    by_service = {f.service: f for f in findings if f.role is Role.SYMPTOM}
    assert by_service["ledger-api"].statement.startswith(
        "ledger-api latency (http_server_request_duration_p99) rose above its baseline to a peak of 2400 ms"
    )
    assert by_service["quotes-api"].statement.startswith("quotes-api quotes_latency_p99_ms rose above its baseline")
