"""TLS errors (expired, unknown authority, hostname mismatch), full disks, and bad rollouts."""

from __future__ import annotations

from tests.incidents.corpus.kit import Pack, container, running, status, suffix


def ledger_grpc_cert_expired() -> Pack:
    """An internal gRPC server certificate expires because cert-manager could not renew it; Go and Java clients."""
    p = Pack(
        "ledger-grpc-cert-expired",
        title="Settlement calls failing overnight",
        description=(
            "ledger-grpc (Go, gRPC with TLS) is called by settlement-batch (Java) and payouts-worker (Go). Its "
            "certificate is issued by cert-manager from the internal Vault PKI. Recorded: Prometheus, Loki, events."
        ),
        question="Every call to ledger-grpc has failed since 02:00. What changed?",
        start="2025-07-19T01:40:00Z",
        minutes=50,
    )
    p.service("settlement-batch", "worker", namespace="finance", depends_on=["ledger-grpc"])
    p.service("payouts-worker", "worker", namespace="finance", depends_on=["ledger-grpc"])
    p.service("ledger-grpc", "http", namespace="finance", depends_on=["ledger-db"])
    p.service("ledger-db", "database", namespace="finance")
    expiry = 1752890400  # 2025-07-19T02:00:00Z
    cm = {
        "job": "cert-manager",
        "namespace": "finance",
        "issuer_group": "cert-manager.io",
        "issuer_kind": "ClusterIssuer",
        "issuer_name": "vault-internal",
    }
    p.series(
        {"__name__": "certmanager_certificate_expiration_timestamp_seconds", **cm, "name": "ledger-grpc-tls"},
        [expiry] * 50,
    )
    p.series(
        {"__name__": "certmanager_certificate_renewal_timestamp_seconds", **cm, "name": "ledger-grpc-tls"},
        [expiry - 8 * 3600] * 50,
    )
    p.series(
        {"__name__": "certmanager_certificate_ready_status", **cm, "name": "ledger-grpc-tls", "condition": "False"},
        [1] * 50,
    )
    p.series(
        {"__name__": "certmanager_certificate_expiration_timestamp_seconds", **cm, "name": "payouts-worker-tls"},
        [expiry + 41 * 86400] * 50,
    )
    p.series(
        {
            "__name__": "grpc_client_handled_total",
            "namespace": "finance",
            "job": "payouts-worker",
            "grpc_service": "ledger.v1.Ledger",
            "grpc_method": "Post",
            "grpc_code": "Unavailable",
        },
        [0] * 20 + [(m - 20) * 140 for m in range(20, 50)],
    )
    p.series(
        {
            "__name__": "grpc_client_handled_total",
            "namespace": "finance",
            "job": "payouts-worker",
            "grpc_service": "ledger.v1.Ledger",
            "grpc_method": "Post",
            "grpc_code": "OK",
        },
        [880_000 + m * 150 if m < 20 else 883_000 for m in range(50)],
    )
    p.event(
        0.0,
        "finance",
        "CertificateRequest",
        "ledger-grpc-tls-19",
        "Failed",
        "Vault failed to sign certificate: failed to sign certificate by vault: Error making API request.\n\nURL: "
        "PUT https://vault.internal.acme.net:8200/v1/pki_int/sign/ledger\nCode: 403. Errors:\n\n* permission "
        "denied",
        type="Warning",
        component="cert-manager-certificaterequests-issuer-vault",
        api_version="cert-manager.io/v1",
        count=1,
    )
    p.event(
        0.5,
        "finance",
        "Certificate",
        "ledger-grpc-tls",
        "Issuing",
        "The certificate request has failed to complete and will be retried: Vault failed to sign certificate: "
        "failed to sign certificate by vault: Code: 403. Errors: * permission denied",
        type="Warning",
        component="cert-manager-certificates-issuing",
        api_version="cert-manager.io/v1",
        count=6,
        last=48.0,
    )
    pw = {
        "namespace": "finance",
        "app": "payouts-worker",
        "container": "worker",
        "pod": f"payouts-worker-{suffix('pw', length=10)}-{suffix('pw')}",
    }
    p.stream(
        pw,
        [
            (
                20.1 + k * 0.9,
                f'time={p.clock(20.1 + k * 0.9)} level=ERROR msg="ledger post failed" err="rpc '
                'error: code = Unavailable desc = connection error: desc = \\"transport: '
                "authentication handshake failed: tls: failed to verify certificate: x509: "
                "certificate has expired or is not yet valid: current time "
                f'{p.clock(20.1 + k * 0.9, "%Y-%m-%dT%H:%M:%SZ")} is after 2025-07-19T02:00:00Z\\""',
            )
            for k in range(30)
        ]
        + [
            (2.0 + k * 3, f'time={p.clock(2.0 + k * 3)} level=INFO msg="ledger post ok" payout=po_{9000 + k}')
            for k in range(6)
        ],
    )
    sb = {
        "namespace": "finance",
        "app": "settlement-batch",
        "container": "batch",
        "pod": f"settlement-batch-{suffix('sb', length=10)}-{suffix('sb')}",
    }
    p.stream(
        sb,
        [
            (
                21.0 + k * 3.1,
                f"{p.clock(21.0 + k * 3.1)} ERROR 1 --- [settlement-batch] [pool-2-thread-1] "
                "c.a.settlement.LedgerClient : ledger call failed: io.grpc.StatusRuntimeException: "
                "UNAVAILABLE: io exception\nCaused by: javax.net.ssl.SSLHandshakeException: PKIX "
                "path validation failed: java.security.cert.CertPathValidatorException: validity "
                "check failed\nCaused by: java.security.cert.CertificateExpiredException: "
                "NotAfter: Sat Jul 19 02:00:00 UTC 2025",
            )
            for k in range(9)
        ],
    )
    p.stream(
        {"namespace": "finance", "app": "ledger-db", "pod": "ledger-db-0", "container": "postgres"},
        [(30.0, "2025-07-19 02:10:00.118 UTC [71] LOG:  checkpoint complete: wrote 12 buffers (0.0%)")],
    )
    p.truth(
        kind="tls_expired",
        service="ledger-grpc",
        summary=(
            "ledger-grpc's serving certificate ledger-grpc-tls expired at 02:00: cert-manager tried to renew it "
            "since 18:00 but Vault refused to sign (403 permission denied after a policy change), so clients fail "
            "the TLS handshake ('x509: certificate has expired or is not yet valid', Java "
            "CertificateExpiredException). ledger-db and the payouts-worker certificate are fine."
        ),
        key_evidence=["certificate has expired or is not yet valid", "CertificateExpiredException"],
    )
    return p


def identity_unknown_authority() -> Pack:
    """A renewed certificate served without its intermediate: four clients, four wordings; browsers still fine."""
    p = Pack(
        "identity-unknown-authority",
        title="Services can't validate tokens",
        description=(
            "identity-provider serves OIDC discovery and JWKS at https://id.acme.internal. Its certificate was "
            "renewed from the new internal intermediate CA this morning. Browsers log in fine. Recorded with the "
            "built-in tools."
        ),
        question="Since this morning several services can't validate logins against identity-provider. Why?",
        start="2025-03-18T08:45:00Z",
        minutes=40,
    )
    p.service("identity-provider", "http", namespace="identity")
    p.service("orders-api", "http", namespace="orders", depends_on=["identity-provider"])
    p.service("reporting", "http", namespace="analytics", depends_on=["identity-provider"])
    p.service("ml-scoring", "http", namespace="ml", depends_on=["identity-provider"])
    p.service("support-desk", "http", namespace="support", depends_on=["identity-provider"])
    p.service("web-login", "http", namespace="identity", depends_on=["identity-provider"])
    p.k8s_event(
        5.0,
        "identity",
        "Certificate",
        "id-acme-internal",
        "Issuing",
        "The certificate has been successfully issued",
        service="identity-provider",
    )
    p.k8s_event(
        5.2,
        "identity",
        "Pod",
        f"identity-provider-{suffix('idp', length=10)}-{suffix('idp')}",
        "Killing",
        "Stopping container server",
        service="identity-provider",
    )
    p.k8s_event(
        5.3,
        "identity",
        "Pod",
        f"identity-provider-{suffix('idp', length=10)}-{suffix('idp2')}",
        "Started",
        "Started container server",
        service="identity-provider",
    )
    for k in range(12):
        m = 6.0 + k * 2.6
        p.log(
            m,
            "orders-api",
            "ERROR",
            '{"level":"error","msg":"jwks fetch failed","url":"https://id.acme.internal/'
            '.well-known/jwks.json","error":"Get \\"https://id.acme.internal/.well-known/'
            'jwks.json\\": tls: failed to verify certificate: x509: certificate signed by '
            'unknown authority"}',
        )
        p.log(
            m + 0.3,
            "reporting",
            "ERROR",
            f"{p.clock(m + 0.3)} ERROR 1 --- [reporting] [nio-8080-exec-2] o.s.s.o.s.r.a.JwtAuthenticationProvider "
            ": Failed to retrieve JWK set: javax.net.ssl.SSLHandshakeException: PKIX path building failed: "
            "sun.security.provider.certpath.SunCertPathBuilderException: unable to find valid certification path "
            "to requested target",
        )
        p.log(
            m + 0.6,
            "ml-scoring",
            "ERROR",
            "requests.exceptions.SSLError: HTTPSConnectionPool(host='id.acme.internal', port=443): Max retries "
            "exceeded with url: /.well-known/openid-configuration (Caused by SSLError(SSLCertVerificationError(1, "
            "'[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local issuer certificate "
            "(_ssl.c:1006)')))",
        )
        p.log(
            m + 0.9,
            "support-desk",
            "ERROR",
            "Error: unable to verify the first certificate\n    at TLSSocket."
            "onConnectSecure (node:_tls_wrap:1674:34) {\n  code: "
            "'UNABLE_TO_VERIFY_LEAF_SIGNATURE'\n}",
        )
    for k in range(10):
        p.log(1.0 + k * 3.8, "web-login", "INFO", f"POST /login 302 {45 + k}ms (session established)")
    p.log(3.0, "identity-provider", "INFO", "Listening on :8443 (TLS, chain: leaf only)")
    p.log(
        5.4,
        "identity-provider",
        "INFO",
        "Listening on :8443 (TLS, certificate serial 6f:1e:0c:2a, issuer CN=Acme Internal Issuing CA 2025)",
    )
    p.log(20.0, "reporting", "WARN", "HikariPool-1 - Thread starvation or clock leap detected (housekeeper delta=58s)")
    p.metric("http_requests_error_rate", "orders-api", "ratio", [0.001] * 6 + [0.24] * 34)
    p.metric("http_requests_error_rate", "web-login", "ratio", [0.002] * 40)
    p.truth(
        kind="tls_unknown_authority",
        service="identity-provider",
        summary=(
            "identity-provider's renewed certificate is served without the new intermediate (Acme Internal Issuing "
            "CA 2025) in its chain; clients that trust only the root cannot build a path: Go 'x509: certificate "
            "signed by unknown authority', Java 'PKIX path building failed', Python 'unable to get local issuer "
            "certificate', Node 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'. Browsers fetch the intermediate themselves, so "
            "web logins work. reporting's Hikari warning is unrelated."
        ),
        key_evidence=["certificate signed by unknown authority", "PKIX path building failed"],
    )
    return p


def search_hostname_mismatch() -> Pack:
    """Clients get the ingress controller's default certificate: the Ingress names a TLS Secret that doesn't exist."""
    p = Pack(
        "search-hostname-mismatch",
        title="Internal search calls failing TLS",
        description=(
            "search-api is published at https://search.internal.acme.net through ingress-nginx; catalog-sync "
            "(Python) and recs (Go) call it. The search team renamed secrets during a cleanup yesterday. Recorded "
            "from Loki."
        ),
        question="catalog-sync and recs can't call search-api over HTTPS any more. What's wrong?",
        start="2025-05-14T10:00:00Z",
        minutes=30,
    )
    p.service("search-api", "http", namespace="search")
    p.service("ingress-nginx", "http", namespace="ingress", depends_on=["search-api"])
    p.service("catalog-sync", "worker", namespace="catalog", depends_on=["ingress-nginx"])
    p.service("recs", "http", namespace="recs", depends_on=["ingress-nginx"])
    ctrl = {
        "namespace": "ingress",
        "app": "ingress-nginx",
        "container": "controller",
        "pod": f"ingress-nginx-controller-{suffix('in2', length=10)}-{suffix('in2')}",
    }
    p.stream(
        ctrl,
        [
            (
                2.0 + k * 6,
                f"W0514 10:{int(2 + k * 6):02d}:03.118221       7 controller.go:1372] Error getting "
                'SSL certificate "search/search-internal-tls": local SSL certificate '
                "search/search-internal-tls was not found. Using default certificate",
            )
            for k in range(5)
        ]
        + [
            (
                1.0,
                'I0514 10:01:00.004118       7 event.go:377] Event(v1.ObjectReference{Kind:"Ingress", '
                "Namespace:\"search\", Name:\"search-api\", ...}): type: 'Normal' reason: 'Sync' Scheduled for "
                "sync",
            )
        ],
    )
    cs = {
        "namespace": "catalog",
        "app": "catalog-sync",
        "container": "sync",
        "pod": f"catalog-sync-{suffix('cs2', length=10)}-{suffix('cs2')}",
    }
    p.stream(
        cs,
        [
            (
                3.0 + k * 2.2,
                f"{p.clock(3.0 + k * 2.2, '%Y-%m-%d %H:%M:%S,{ms}')} ERROR sync.push: reindex "
                "request failed: requests.exceptions.SSLError: HTTPSConnectionPool(host='search."
                "internal.acme.net', port=443): Max retries exceeded with url: /v1/index (Caused by "
                'SSLError(SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate '
                "verify failed: Hostname mismatch, certificate is not valid for "
                "'search.internal.acme.net'. (_ssl.c:1006)\")))",
            )
            for k in range(12)
        ],
    )
    rc = {
        "namespace": "recs",
        "app": "recs",
        "container": "recs",
        "pod": f"recs-{suffix('rc', length=10)}-{suffix('rc')}",
    }
    p.stream(
        rc,
        [
            (
                3.5 + k * 2.6,
                f'time={p.clock(3.5 + k * 2.6)} level=ERROR msg="search call failed" err="Get '
                '\\"https://search.internal.acme.net/v1/similar?sku=81220\\": tls: failed to verify '
                "certificate: x509: certificate is valid for ingress.local, not "
                'search.internal.acme.net"',
            )
            for k in range(10)
        ]
        + [(20.0, 'time=2025-05-14T10:20:00.000Z level=WARN msg="feature store slow" took=880ms')],
    )
    p.stream(
        {
            "namespace": "search",
            "app": "search-api",
            "container": "api",
            "pod": f"search-api-{suffix('sa4', length=10)}-{suffix('sa4')}",
        },
        [(2.0 + k * 3, f"INFO GET /v1/similar?sku={81000 + k} 200 {14 + k}ms (via mesh)") for k in range(9)],
    )
    p.truth(
        kind="tls_hostname_mismatch",
        service="search-api",
        summary=(
            "search-api's Ingress still names TLS Secret search/search-internal-tls, which was renamed in "
            "yesterday's cleanup; ingress-nginx falls back to its default certificate (SAN ingress.local), so HTTPS "
            "clients reject it: Python 'Hostname mismatch, certificate is not valid for "
            "'search.internal.acme.net'', Go 'x509: certificate is valid for ingress.local, not "
            "search.internal.acme.net'. search-api itself serves fine in-mesh; recs' feature-store warning is "
            "unrelated."
        ),
        key_evidence=["Hostname mismatch, certificate is not valid for", "Using default certificate"],
    )
    return p


def orders_pg_disk_full() -> Pack:
    """WAL fills the volume behind an inactive replication slot; Postgres PANICs; clients see recovery mode."""
    p = Pack(
        "orders-pg-disk-full",
        title="orders-pg down: clients see recovery mode",
        description=(
            "orders-pg (Postgres 16, 200Gi volume) is the orders database; a Debezium connector in kafka-connect "
            "streams its changes through replication slot debezium_orders and was paused for a schema review last "
            "week. Recorded: Prometheus (kubelet volume stats, postgres-exporter), Loki."
        ),
        question="orders-pg keeps crashing and clients say 'the database system is in recovery mode'. Why?",
        start="2025-09-09T03:00:00Z",
        minutes=50,
    )
    p.service("orders-api", "http", namespace="orders", depends_on=["orders-pg"])
    p.service("orders-pg", "database", namespace="orders")
    p.service("kafka-connect", "worker", namespace="streaming", depends_on=["orders-pg"])
    p.service("search-sync", "worker", namespace="search")
    vol = {
        "namespace": "orders",
        "persistentvolumeclaim": "data-orders-pg-0",
        "job": "kubelet",
        "metrics_path": "/metrics",
    }
    avail = [max(0, int(6.2e9 - m * 2.9e8)) for m in range(50)]
    p.series({"__name__": "kubelet_volume_stats_available_bytes", **vol}, avail)
    p.series({"__name__": "kubelet_volume_stats_capacity_bytes", **vol}, [214748364800] * 50)
    p.series(
        {
            "__name__": "pg_replication_slots_pg_wal_lsn_diff",
            "slot_name": "debezium_orders",
            "active": "false",
            "job": "postgres-exporter",
            "instance": "orders-pg-0",
        },
        [int(1.91e11 + m * 2.9e8) for m in range(50)],
    )
    p.series(
        {"__name__": "pg_up", "job": "postgres-exporter", "instance": "orders-pg-0"},
        [1] * 22 + [0, 0, 1, 0, 0, 0, 1, 0] + [0] * 20,
    )
    pg = {"namespace": "orders", "app": "orders-pg", "pod": "orders-pg-0", "container": "postgres"}
    lines = [
        (
            21.4,
            '2025-09-09 03:21:24.118 UTC [1894] PANIC:  could not write to file "pg_wal/xlogtemp.1894": No '
            "space left on device",
        ),
        (21.41, "2025-09-09 03:21:24.201 UTC [1] LOG:  server process (PID 1894) was terminated by signal 6: Aborted"),
        (21.42, "2025-09-09 03:21:24.201 UTC [1] LOG:  terminating any other active server processes"),
        (21.5, "2025-09-09 03:21:30.004 UTC [1] LOG:  all server processes terminated; reinitializing"),
        (
            21.6,
            "2025-09-09 03:21:36.551 UTC [2210] LOG:  database system was interrupted; last known up at "
            "2025-09-09 03:20:11 UTC",
        ),
        (22.0, "2025-09-09 03:22:00.118 UTC [2213] FATAL:  the database system is in recovery mode"),
        (24.1, "2025-09-09 03:24:06.004 UTC [2210] LOG:  database system is ready to accept connections"),
        (
            25.2,
            '2025-09-09 03:25:12.771 UTC [2301] PANIC:  could not write to file "pg_wal/xlogtemp.2301": No '
            "space left on device",
        ),
    ]
    lines += [
        (m, f"2025-09-09 03:{m:02d}:00.118 UTC [71] LOG:  checkpoint complete: wrote {4000 + m * 30} buffers")
        for m in range(0, 20, 5)
    ]
    lines += [
        (
            10.0,
            '2025-09-09 03:10:00.004 UTC [71] WARNING:  replication slot "debezium_orders" is inactive '
            "and retains 178 GB of WAL",
        )
    ]
    p.stream(pg, lines)
    api = {
        "namespace": "orders",
        "app": "orders-api",
        "container": "api",
        "pod": f"orders-api-{suffix('oa4', length=10)}-{suffix('oa4')}",
    }
    p.stream(
        api,
        [
            (
                22.0 + k * 0.9,
                f"{p.clock(22.0 + k * 0.9, '%Y-%m-%d %H:%M:%S,{ms}')} ERROR orders.db: "
                "psycopg.OperationalError: connection failed: connection to server at "
                '"orders-pg.orders.svc" (10.100.4.12), port 5432 failed: FATAL:  the database '
                "system is in recovery mode",
            )
            for k in range(28)
        ],
    )
    p.stream(
        {
            "namespace": "streaming",
            "app": "kafka-connect",
            "container": "connect",
            "pod": f"kafka-connect-{suffix('kc', length=10)}-{suffix('kc')}",
        },
        [
            (
                5.0,
                "[2025-09-09 03:05:00,118] INFO [orders-cdc|task-0] WorkerSourceTask{id=orders-cdc-0} Connector "
                "is paused; skipping poll (org.apache.kafka.connect.runtime.WorkerSourceTask:214)",
            )
        ],
    )
    p.stream(
        {
            "namespace": "search",
            "app": "search-sync",
            "container": "sync",
            "pod": f"search-sync-{suffix('ss', length=10)}-{suffix('ss')}",
        },
        [(15.0, "WARN search-sync: bulk request took 4.2s (index refresh)")],
    )
    p.truth(
        kind="disk_full",
        service="orders-pg",
        summary=(
            "The paused Debezium connector leaves replication slot debezium_orders inactive, so orders-pg retains "
            "all WAL (178 GB and growing) and its 200Gi volume fills: Postgres PANICs on 'could not write to file "
            '"pg_wal/xlogtemp...": No space left on device\', restarts, recovers, and PANICs again; clients see '
            "'the database system is in recovery mode'. search-sync's slow bulk request is unrelated."
        ),
        key_evidence=["No space left on device", "kubelet_volume_stats_available_bytes"],
    )
    return p


def media_uploader_enospc() -> Pack:
    """ENOSPC from Node.js on a scratch volume the janitor stopped cleaning; Prometheus + Loki."""
    p = Pack(
        "media-uploader-enospc",
        title="Video uploads failing",
        description=(
            "media-uploader (Node.js) stages chunks on a 50Gi PVC before assembling them; a janitor CronJob deletes "
            "abandoned chunks hourly. Recorded: Prometheus, Loki."
        ),
        question="Video uploads fail for everyone since about 21:20. What is media-uploader doing?",
        start="2025-11-28T21:00:00Z",
        minutes=40,
    )
    p.service("media-uploader", "http", namespace="media", depends_on=["media-bucket"])
    p.service("media-bucket", "external")
    p.service("transcoder", "worker", namespace="media", depends_on=["media-bucket"])
    vol = {"namespace": "media", "persistentvolumeclaim": "media-uploader-scratch", "job": "kubelet"}
    p.series(
        {"__name__": "kubelet_volume_stats_available_bytes", **vol}, [max(0, int(4.1e9 - m * 2.1e8)) for m in range(40)]
    )
    p.series({"__name__": "kubelet_volume_stats_capacity_bytes", **vol}, [53687091200] * 40)
    p.series({"__name__": "kubelet_volume_stats_inodes_free", **vol}, [3_100_000 - m * 40 for m in range(40)])
    p.series(
        {
            "__name__": "kube_cronjob_status_last_successful_time",
            "namespace": "media",
            "cronjob": "scratch-janitor",
            "job": "kube-state-metrics",
        },
        [1764190800] * 40,
    )
    p.series(
        {
            "__name__": "http_requests_total",
            "namespace": "media",
            "service": "media-uploader",
            "route": "/v1/uploads/:id/chunks",
            "code": "500",
        },
        [0] * 20 + [(m - 20) * 55 for m in range(20, 40)],
    )
    mu = {
        "namespace": "media",
        "app": "media-uploader",
        "container": "uploader",
        "pod": f"media-uploader-{suffix('mu', length=10)}-{suffix('mu')}",
    }
    lines = [
        (
            1.0 + k * 1.8,
            f'{{"level":"info","time":"{p.clock(1.0 + k * 1.8)}","msg":"chunk stored","upload":'
            f'"up_{suffix("up", k, length=10)}","bytes":8388608,"duration_ms":{41 + k}}}',
        )
        for k in range(11)
    ]
    for k in range(25):
        m = 20.2 + k * 0.8
        lines.append(
            (
                m,
                f'{{"level":"error","time":"{p.clock(m)}","msg":"chunk write failed","upload":"up_'
                f'{suffix("up2", k, length=10)}","err":"Error: ENOSPC: no space left on device, write",'
                '"errno":-28,"code":"ENOSPC","syscall":"write"}',
            )
        )
    p.stream(mu, lines)
    p.stream(
        {
            "namespace": "media",
            "app": "transcoder",
            "container": "ffmpeg",
            "pod": f"transcoder-{suffix('tc', length=10)}-{suffix('tc')}",
        },
        [(10.0, "[warn] transcoder: source bitrate 48 Mb/s above profile max, downscaling")],
    )
    p.truth(
        kind="disk_full",
        service="media-uploader",
        summary=(
            "media-uploader's 50Gi scratch volume fills with abandoned chunks (the scratch-janitor CronJob has not "
            "succeeded since the day before) and at 21:20 every chunk write fails with 'ENOSPC: no space left on "
            "device'. The transcoder warning is unrelated."
        ),
        key_evidence=["ENOSPC: no space left on device"],
    )
    return p


def basket_errors_after_rollout() -> Pack:
    """Errors only from the new ReplicaSet's pods, right after it scales up; a neighbour's deploy earlier as bait."""
    p = Pack(
        "basket-errors-after-rollout",
        title="Basket 500s this afternoon",
        description=(
            "Shop namespace. basket-api (Java) applies promotions from promo-svc when it prices a basket. Both "
            "services deployed this afternoon. Recorded: Deployment and ReplicaSets, events, Pods, Prometheus, "
            "Loki."
        ),
        question="basket-api started returning 500s this afternoon. Was it a deploy?",
        start="2025-08-20T13:00:00Z",
        minutes=60,
    )
    p.service("storefront", "http", namespace="shop", depends_on=["basket-api"])
    p.service("basket-api", "http", namespace="shop", depends_on=["promo-svc", "basket-redis"])
    p.service("promo-svc", "http", namespace="shop")
    p.service("basket-redis", "cache", namespace="shop")
    ns = "shop"
    sel = {"app.kubernetes.io/name": "basket-api"}
    old_image, new_image = "registry.acme.io/shop/basket-api:5.20.3", "registry.acme.io/shop/basket-api:5.21.0"
    oh, nh = suffix("ba-old", length=10), suffix("ba-new", length=10)
    p.deployment(
        "basket-api", ns, selector=sel, replicas=4, revision=42, image=new_image, container="app", created=-500000
    )
    p.replicaset(
        "basket-api", ns, oh, selector=sel, revision=41, image=old_image, container="app", created=-200000, replicas=0
    )
    p.replicaset(
        "basket-api", ns, nh, selector=sel, revision=42, image=new_image, container="app", created=30.0, replicas=4
    )
    steps = [(30.0, 1, 3), (31.5, 2, 2), (33.0, 3, 1), (34.5, 4, 0)]
    for t, up, down in steps:
        events = p.events_of(ns, "Deployment", "basket-api", component="deployment-controller")
        events(t, "ScalingReplicaSet", f"Scaled up replica set basket-api-{nh} to {up} from {up - 1}")
        events(t + 0.8, "ScalingReplicaSet", f"Scaled down replica set basket-api-{oh} to {down} from {down + 1}")
    new_pods = [f"basket-api-{nh}-{suffix('ba-new', i)}" for i in range(4)]
    old_pods = [f"basket-api-{oh}-{suffix('ba-old', i)}" for i in range(4)]
    for i, pod in enumerate(new_pods):
        p.pod(
            pod,
            ns,
            labels={**sel, "pod-template-hash": nh},
            node=f"ip-10-0-{4 + i}-{12 + i}.ec2.internal",
            created=steps[i][0],
            owner=("ReplicaSet", f"basket-api-{nh}"),
            ip=f"10.0.{4 + i}.{150 + i}",
            containers=[container("app", new_image)],
            statuses=[status(p, "app", new_image, state=running(p, steps[i][0] + 0.3))],
        )
    for i, pod in enumerate(old_pods):
        end = steps[i][0] + 0.8
        errors = [0] * 60
        p.series(
            {
                "__name__": "http_server_requests_seconds_count",
                "namespace": ns,
                "pod": pod,
                "status": "500",
                "uri": "/v1/basket/price",
            },
            [3 + e for e in errors[: int(end)]],
        )
        p.series(
            {
                "__name__": "http_server_requests_seconds_count",
                "namespace": ns,
                "pod": pod,
                "status": "200",
                "uri": "/v1/basket/price",
            },
            [40_000 + m * 210 for m in range(int(end))],
        )
    for i, pod in enumerate(new_pods):
        start = int(steps[i][0]) + 1
        p.series(
            {
                "__name__": "http_server_requests_seconds_count",
                "namespace": ns,
                "pod": pod,
                "status": "500",
                "uri": "/v1/basket/price",
            },
            [(m - start) * 38 for m in range(start, 60)],
            start=start,
        )
        p.series(
            {
                "__name__": "http_server_requests_seconds_count",
                "namespace": ns,
                "pod": pod,
                "status": "200",
                "uri": "/v1/basket/price",
            },
            [(m - start) * 160 for m in range(start, 60)],
            start=start,
        )
    for i, pod in enumerate(new_pods):
        lines = []
        for k in range(10):
            m = steps[i][0] + 1.0 + k * 2.3
            if m >= 60:
                break
            lines.append(
                (
                    m,
                    f"{p.clock(m)} ERROR 1 --- [basket-api] [nio-8080-exec-{k + 3}] c.a.b.api.BasketController "
                    ": price failed basket=bsk_" + suffix("b", i, k, length=10) + "\njava.lang."
                    'NullPointerException: Cannot invoke "com.acme.basket.promo.Promotion.getCode()" because '
                    '"promo" is null\n\tat com.acme.basket.promo.PromoService.apply(PromoService.java:131)\n\t'
                    "at com.acme.basket.pricing.Pricer.price(Pricer.java:58)",
                )
            )
        p.stream({"namespace": ns, "app": "basket-api", "pod": pod, "container": "app"}, lines)
    for i, pod in enumerate(old_pods):
        p.stream(
            {"namespace": ns, "app": "basket-api", "pod": pod, "container": "app"},
            [
                (
                    1.0 + k * 4 + i,
                    f"{p.clock(1.0 + k * 4 + i)}  INFO 1 --- [basket-api] [nio-8080-exec-2] "
                    "c.a.b.api.BasketController : priced basket in 31ms",
                )
                for k in range(7)
                if 1.0 + k * 4 + i < steps[i][0]
            ],
        )
    ph = suffix("promo", length=10)
    p.event(
        5.0,
        ns,
        "Deployment",
        "promo-svc",
        "ScalingReplicaSet",
        f"Scaled up replica set promo-svc-{ph} to 2 from 0",
        component="deployment-controller",
    )
    p.stream(
        {"namespace": ns, "app": "promo-svc", "container": "promo", "pod": f"promo-svc-{ph}-{suffix('promo')}"},
        [
            (5.5, '{"level":"info","msg":"promo-svc 3.4.0 started","rules_loaded":412}'),
            (12.0, '{"level":"warn","msg":"rule SUMMER25 has no end date; treating as open-ended"}'),
        ]
        + [(6 + k * 4, f'{{"level":"info","msg":"GET /v1/promotions 200","duration_ms":{9 + k}}}') for k in range(13)],
    )
    p.truth(
        kind="bad_deploy",
        service="basket-api",
        summary=(
            "basket-api 5.21.0 (ReplicaSet revision 42, rolled out from 13:30) dereferences a missing promotion "
            "when a basket has no promo code ('NullPointerException: Cannot invoke ... because \"promo\" is null' "
            "in PromoService.apply); the 500s come only from the new ReplicaSet's pods and start with the first of "
            "them, while the 5.20.3 pods served without errors. promo-svc's deploy at 13:05 and its warning are not "
            "the cause."
        ),
        key_evidence=['because "promo" is null', "Scaled up replica set basket-api-"],
    )
    return p


def fx_rates_bad_release() -> Pack:
    """A bad release seen with the built-in tools only: errors start right after v5.3.0; a neighbour deployed too."""
    p = Pack(
        "fx-rates-bad-release",
        title="Currency conversion failing at checkout",
        description=(
            "fx-rates (Python) converts basket totals for non-EUR shoppers; ledger-api deployed earlier in the "
            "afternoon. Recorded with the built-in tools."
        ),
        question="Non-EUR checkouts fail with 'conversion unavailable'. What is wrong with fx-rates?",
        start="2025-01-30T15:00:00Z",
        minutes=50,
    )
    p.service("checkout-web", "http", namespace="shop", depends_on=["fx-rates", "ledger-api"])
    p.service("fx-rates", "http", namespace="shop", depends_on=["rates-feed"])
    p.service("ledger-api", "http", namespace="finance")
    p.service("rates-feed", "external")
    p.deploy(6.0, "ledger-api", "11.2.0", "11.1.9", "finance-ci", "Dependency bumps; no functional change")
    p.deploy(22.0, "fx-rates", "5.3.0", "5.2.4", "shop-ci", "Read rates from feed v2 (nested currency objects)")
    for k in range(28):
        m = 22.4 + k * 0.95
        p.log(
            m,
            "fx-rates",
            "ERROR",
            f"{p.clock(m, '%Y-%m-%d %H:%M:%S,{ms}')} ERROR fx.api: conversion failed for basket "
            f'bsk_{suffix("fx", k, length=8)}\nTraceback (most recent call last):\n  File "/app/fx/rates.py", '
            "line 88, in convert\n    rate = snapshot[quote['currency']]\nKeyError: 'currency'",
        )
    for k in range(10):
        p.log(1.0 + k * 2.1, "fx-rates", "INFO", f"POST /v1/convert 200 {12 + k}ms EUR->{['GBP', 'USD', 'CHF'][k % 3]}")
    p.log(
        8.0,
        "ledger-api",
        "WARN",
        "DeprecationWarning: datetime.datetime.utcnow() is deprecated and scheduled for removal in a future version.",
    )
    p.log(25.0, "checkout-web", "ERROR", "conversion unavailable: fx-rates answered 500 (basket bsk_7c1e2f0a)")
    p.metric("http_requests_error_rate", "fx-rates", "ratio", [0.001] * 22 + [0.63 + (m % 3) * 0.02 for m in range(28)])
    p.metric("http_requests_error_rate", "ledger-api", "ratio", [0.002] * 50)
    p.metric("http_request_duration_p99_ms", "fx-rates", "ms", [48 + m % 5 for m in range(50)])
    p.truth(
        kind="bad_deploy",
        service="fx-rates",
        summary=(
            "fx-rates 5.3.0 (deployed 15:22) reads feed v2's nested currency objects with the old flat key "
            "(\"KeyError: 'currency'\"); 63% of conversions fail from that minute. ledger-api's earlier deploy and "
            "its deprecation warning changed nothing."
        ),
        key_evidence=["KeyError: 'currency'", "5.3.0"],
    )
    return p


PACKS = [
    ledger_grpc_cert_expired,
    identity_unknown_authority,
    search_hostname_mismatch,
    orders_pg_disk_full,
    media_uploader_enospc,
    basket_errors_after_rollout,
    fx_rates_bad_release,
]
