"""Connection-pool exhaustion in four libraries' words: HikariCP, SQLAlchemy, PgBouncer, node-postgres."""

from __future__ import annotations

from tests.incidents.corpus.kit import Pack, suffix


def invoice_service_hikari() -> Pack:
    """HikariCP exhausted by a connection leak that came with a deploy; Prometheus + Loki + deploys."""
    p = Pack(
        "invoice-service-hikari",
        title="Invoice downloads failing",
        description=(
            "Billing namespace. invoice-service (Spring Boot, HikariCP maximumPoolSize=20, leakDetectionThreshold="
            "20s) serves invoices from invoice-db. 4.6.0 added a CSV export. Recorded: Prometheus (Micrometer), "
            "Loki, the deploy log."
        ),
        question="Customers can't download invoices: invoice-service returns 500s. Why?",
        start="2025-02-11T13:00:00Z",
        minutes=50,
    )
    p.service("billing-portal", "http", namespace="billing", depends_on=["invoice-service"])
    p.service("invoice-service", "http", namespace="billing", depends_on=["invoice-db"])
    p.service("invoice-db", "database", namespace="billing")
    p.service("tax-archive", "external")
    p.deploy(
        10.0, "invoice-service", "4.6.0", "4.5.2", "billing-ci", "CSV export of invoice lines (GET /v1/invoices/export)"
    )
    pod = f"invoice-service-{suffix('is', length=10)}-{suffix('is')}"
    base = {"namespace": "billing", "application": "invoice-service", "pod": pod, "pool": "HikariPool-1"}
    active = [4 + (m % 3) for m in range(11)] + [min(20, 6 + (m - 11) * 2) for m in range(11, 50)]
    p.series({"__name__": "hikaricp_connections_active", **base}, active)
    p.series({"__name__": "hikaricp_connections_max", **base}, [20] * 50)
    p.series(
        {"__name__": "hikaricp_connections_pending", **base},
        [0] * 18 + [min(240, (m - 18) * 11) for m in range(18, 50)],
    )
    p.series(
        {"__name__": "hikaricp_connections_timeout_total", **base}, [0] * 19 + [(m - 19) * 37 for m in range(19, 50)]
    )
    p.series(
        {
            "__name__": "http_server_requests_seconds_count",
            "namespace": "billing",
            "application": "invoice-service",
            "uri": "/v1/invoices/{id}/pdf",
            "status": "500",
            "outcome": "SERVER_ERROR",
        },
        [2] * 19 + [2 + (m - 19) * 31 for m in range(19, 50)],
    )
    p.series(
        {
            "__name__": "http_server_requests_seconds_count",
            "namespace": "billing",
            "application": "invoice-service",
            "uri": "/v1/invoices/{id}/pdf",
            "status": "200",
            "outcome": "SUCCESS",
        },
        [90_000 + m * 40 if m < 19 else 90_760 + (m - 19) * 6 for m in range(50)],
    )
    p.series(
        {
            "__name__": "pg_stat_activity_count",
            "datname": "invoices",
            "state": "idle in transaction",
            "instance": "invoice-db-0",
            "job": "postgres-exporter",
        },
        [1] * 11 + [min(20, 3 + (m - 11) * 2) for m in range(11, 50)],
    )
    p.series(
        {
            "__name__": "pg_stat_activity_count",
            "datname": "invoices",
            "state": "active",
            "instance": "invoice-db-0",
            "job": "postgres-exporter",
        },
        [3 + (m % 2) for m in range(50)],
    )
    lines = []
    for k in range(6):
        m = 11.0 + k * 1.6
        lines.append(
            (
                m,
                f"{p.clock(m)}  WARN 1 --- [invoice-service] [l-1 housekeeper] com.zaxxer.hikari.pool."
                "ProxyLeakTask : Connection leak detection triggered for org.postgresql.jdbc.PgConnection@"
                f"{suffix('conn', k, length=8)} on thread http-nio-8080-exec-{40 + k}, stack trace follows\n"
                "java.lang.Exception: Apparent connection leak detected\n\tat com.acme.invoice.export."
                "CsvExporter.stream(CsvExporter.java:77)\n\tat com.acme.invoice.api.ExportController."
                "export(ExportController.java:41)",
            )
        )
    for k in range(30):
        m = 19.2 + k
        lines.append(
            (
                m,
                f"{p.clock(m)} ERROR 1 --- [invoice-service] [nio-8080-exec-{k % 200 + 1}] o.a.c.c.C.[."
                "[.[/].[dispatcherServlet] : Servlet.service() for servlet [dispatcherServlet] threw "
                "exception\njava.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not "
                f"available, request timed out after 30000ms (total=20, active=20, idle=0, waiting="
                f"{min(240, k * 11)})\n\tat com.zaxxer.hikari.pool.HikariPool.createTimeoutException("
                "HikariPool.java:686)",
            )
        )
    lines += [
        (
            1.0 + k * 2.5,
            f"{p.clock(1.0 + k * 2.5)}  INFO 1 --- [invoice-service] [nio-8080-exec-3] "
            "c.a.invoice.api.InvoiceController : GET /v1/invoices/inv_8812/pdf 200 in 84ms",
        )
        for k in range(7)
    ]
    p.stream({"namespace": "billing", "app": "invoice-service", "pod": pod, "container": "app"}, lines)
    p.stream(
        {"namespace": "billing", "app": "invoice-db", "pod": "invoice-db-0", "container": "postgres"},
        [
            (
                25.0,
                '2025-02-11 13:25:00.118 UTC [71] LOG:  automatic vacuum of table "invoices.public.lines": '
                "index scans: 1, pages: 0 removed, 88120 remain",
            ),
            (33.0, "2025-02-11 13:33:00.771 UTC [9912] LOG:  checkpoint starting: time"),
        ],
    )
    p.stream(
        {
            "namespace": "billing",
            "app": "billing-portal",
            "container": "web",
            "pod": f"billing-portal-{suffix('bp', length=10)}-{suffix('bp')}",
        },
        [
            (20.0 + k * 2, f"WARN proxy: upstream invoice-service answered 500 for GET /invoices/inv_{9000 + k}.pdf")
            for k in range(12)
        ],
    )
    p.truth(
        kind="db_pool_exhaustion",
        service="invoice-service",
        summary=(
            "invoice-service 4.6.0's CSV export streams rows without closing its connection (Hikari leak detection "
            "points at CsvExporter.stream), leaving connections 'idle in transaction'; within minutes all 20 pool "
            "connections are held and every other request fails after 30 s ('HikariPool-1 - Connection is not "
            "available, request timed out after 30000ms'). invoice-db is healthy; its vacuum and checkpoint are "
            "routine."
        ),
        key_evidence=["Connection is not available, request timed out after 30000ms", "Apparent connection leak"],
    )
    return p


def loyalty_api_queuepool() -> Pack:
    """SQLAlchemy QueuePool exhausted: a streaming endpoint holds sessions for the stream's life. Loki only."""
    p = Pack(
        "loyalty-api-queuepool",
        title="Loyalty points endpoint erroring",
        description=(
            "loyalty-api (FastAPI, SQLAlchemy 2.0, pool_size=5, max_overflow=10) serves points balances; the mobile "
            "app's new activity feed uses its server-sent events endpoint. Recorded from Loki."
        ),
        question="loyalty-api returns 500s on /v1/points since the app release. What's going on?",
        start="2025-04-16T17:00:00Z",
        minutes=40,
    )
    p.service("mobile-bff", "http", namespace="loyalty", depends_on=["loyalty-api"])
    p.service("loyalty-api", "http", namespace="loyalty", depends_on=["loyalty-db", "loyalty-redis"])
    p.service("loyalty-db", "database", namespace="loyalty")
    p.service("loyalty-redis", "cache", namespace="loyalty")
    pods = [f"loyalty-api-{suffix('la', length=10)}-{suffix('la', i)}" for i in range(2)]
    for i, pod in enumerate(pods):
        lines = []
        for k in range(18):
            m = 1.0 + k * 2.1 + i * 0.4
            lines.append((m, f'INFO:     10.60.{i}.{k + 20}:0 - "GET /v1/activity/stream HTTP/1.1" 200 OK'))
            lines.append(
                (
                    m + 0.02,
                    f"{p.clock(m + 0.02, '%Y-%m-%d %H:%M:%S,{ms}')} INFO loyalty.feed: stream "
                    f"opened member=m_{suffix('m', i, k, length=8)} session checked out",
                )
            )
        for k in range(30):
            m = 9.0 + k * 1.0 + i * 0.3
            lines.append((m, f'INFO:     10.60.{i}.{k + 60}:0 - "GET /v1/points HTTP/1.1" 500 Internal Server Error'))
            lines.append(
                (
                    m + 0.01,
                    "ERROR:    Exception in ASGI application\nTraceback (most recent call last):\n  "
                    'File "/app/loyalty/api/points.py", line 31, in get_points\n    balance = '
                    "await session.scalar(select(Balance).where(Balance.member_id == member_id))\n  "
                    "...\nsqlalchemy.exc.TimeoutError: QueuePool limit of size 5 overflow 10 "
                    "reached, connection timed out, timeout 30.00 (Background on this error at: "
                    "https://sqlalche.me/e/20/3o7r)",
                )
            )
        lines += [
            (0.5 + k * 1.5, f'INFO:     10.60.{i}.{k + 5}:0 - "GET /v1/points HTTP/1.1" 200 OK') for k in range(5)
        ]
        p.stream({"namespace": "loyalty", "app": "loyalty-api", "pod": pod, "container": "api"}, lines)
    p.stream(
        {"namespace": "loyalty", "app": "loyalty-redis", "pod": "loyalty-redis-0", "container": "redis"},
        [
            (
                0.2,
                "1:C 16 Apr 2025 17:00:12.118 # WARNING Memory overcommit must be enabled! Without it, a "
                "background save or replication may fail under low memory condition. To fix this issue add "
                "'vm.overcommit_memory = 1' to /etc/sysctl.conf and then reboot or run the command 'sysctl "
                "vm.overcommit_memory=1' for this to take effect.",
            ),
            (0.3, "1:M 16 Apr 2025 17:00:12.120 * Ready to accept connections tcp"),
        ],
    )
    p.stream(
        {"namespace": "loyalty", "app": "loyalty-db", "pod": "loyalty-db-0", "container": "postgres"},
        [
            (m, f"2025-04-16 17:{m:02d}:00.004 UTC [71] LOG:  checkpoint complete: wrote {120 + m} buffers (0.7%)")
            for m in range(5, 40, 10)
        ],
    )
    p.stream(
        {
            "namespace": "loyalty",
            "app": "mobile-bff",
            "container": "bff",
            "pod": f"mobile-bff-{suffix('mb', length=10)}-{suffix('mb')}",
        },
        [
            (
                10.0 + k * 1.5,
                f'{{"level":"error","msg":"upstream error","upstream":"loyalty-api","path":"/v1/points",'
                f'"status":500,"took_ms":{30010 + k}}}',
            )
            for k in range(18)
        ],
    )
    p.truth(
        kind="db_pool_exhaustion",
        service="loyalty-api",
        summary=(
            "The new activity feed opens long-lived server-sent-event streams on loyalty-api, each holding a "
            "SQLAlchemy session (and its connection) for the stream's life; once 15 streams are open per pod the "
            "pool is exhausted and ordinary requests wait 30 s and fail ('QueuePool limit of size 5 overflow 10 "
            "reached, connection timed out, timeout 30.00'). loyalty-db is idle; the Redis overcommit warning is "
            "start-up noise."
        ),
        key_evidence=["QueuePool limit of size 5 overflow 10 reached"],
    )
    return p


def api_pgbouncer_max_client() -> Pack:
    """PgBouncer's max_client_conn reached after an HPA scale-out multiplies client connections."""
    p = Pack(
        "api-pgbouncer-max-client",
        title="storefront-api database errors after scale-out",
        description=(
            "storefront-api (Rails, pool 20 per pod) reaches Postgres through pgbouncer (transaction pooling, "
            "max_client_conn=600). A marketing push started at 14:10. Recorded: raw events, Prometheus "
            "(pgbouncer-exporter, postgres-exporter), Loki."
        ),
        question="storefront-api throws database connection errors since the marketing push. Is Postgres down?",
        start="2025-06-03T14:00:00Z",
        minutes=45,
    )
    p.service("storefront-api", "http", namespace="shop", depends_on=["pgbouncer"])
    p.service("pgbouncer", "database", namespace="shop", depends_on=["shop-postgres"])
    p.service("shop-postgres", "database", namespace="shop")
    p.service("sidekiq", "worker", namespace="shop", depends_on=["pgbouncer"])
    ns = "shop"
    replicas = [12] * 10 + [20, 28, 36] + [40] * 32
    for k, size in enumerate((20, 28, 36, 40)):
        p.event(
            10.0 + k * 1.0,
            ns,
            "HorizontalPodAutoscaler",
            "storefront-api",
            "SuccessfulRescale",
            f"New size: {size}; reason: cpu resource utilization (percentage of request) above target",
            component="horizontal-pod-autoscaler",
            api_version="autoscaling/v2",
        )
    exporter = {"job": "pgbouncer-exporter", "namespace": ns, "instance": "pgbouncer:9127"}
    p.series({"__name__": "pgbouncer_config_max_client_connections", **exporter}, [600] * 45)
    p.series(
        {"__name__": "pgbouncer_pools_client_active_connections", **exporter, "database": "shop", "user": "storefront"},
        [min(600, r * 20 - 40) for r in replicas],
    )
    p.series(
        {
            "__name__": "pgbouncer_pools_client_waiting_connections",
            **exporter,
            "database": "shop",
            "user": "storefront",
        },
        [0] * 12 + [31 + (m % 4) * 9 for m in range(33)],
    )
    p.series(
        {"__name__": "pgbouncer_pools_server_active_connections", **exporter, "database": "shop", "user": "storefront"},
        [38 + (m % 5) for m in range(45)],
    )
    p.series(
        {
            "__name__": "pg_stat_activity_count",
            "datname": "shop",
            "state": "active",
            "job": "postgres-exporter",
            "instance": "shop-postgres-0",
        },
        [41 + (m % 6) for m in range(45)],
    )
    p.series(
        {"__name__": "pg_settings_max_connections", "job": "postgres-exporter", "instance": "shop-postgres-0"},
        [400] * 45,
    )
    p.series(
        {
            "__name__": "kube_deployment_status_replicas",
            "namespace": ns,
            "deployment": "storefront-api",
            "job": "kube-state-metrics",
        },
        replicas,
    )
    pb = {
        "namespace": ns,
        "app": "pgbouncer",
        "container": "pgbouncer",
        "pod": f"pgbouncer-{suffix('pb', length=10)}-{suffix('pb')}",
    }
    lines: list[tuple[float, str]] = [
        (
            m,
            f"{p.clock(m, '%Y-%m-%d %H:%M:%S.{ms} UTC')} [1] LOG stats: {410 + m * 9} xacts/s, "
            f"{3811 + m * 70} queries/s, in {990_000 + m} B/s, out {4_100_000 + m * 10} B/s, xact 1812 us, "
            "query 303 us, wait 18 us",
        )
        for m in range(0, 45, 1)
    ]
    for k in range(36):
        at = 12.2 + k * 0.9
        lines.append(
            (
                at,
                f"{p.clock(at, '%Y-%m-%d %H:%M:%S.{ms} UTC')} [1] WARNING C-0x5581f2a3{k:04x}: "
                f"(nodb)/(nouser)@10.52.{k % 8}.{31 + k}:{51844 + k * 3} pooler error: no more connections "
                "allowed (max_client_conn)",
            )
        )
    p.stream(pb, lines)
    for i in range(3):
        api = {
            "namespace": ns,
            "app": "storefront-api",
            "container": "puma",
            "pod": f"storefront-api-{suffix('sa3', length=10)}-{suffix('sa3', i)}",
        }
        p.stream(
            api,
            [
                (
                    12.5 + k * 2.1 + i * 0.3,
                    f"E, [{p.clock(12.5 + k * 2.1 + i * 0.3, '%Y-%m-%dT%H:%M:%S.{ms}')}"
                    f" #1] ERROR -- : ActiveRecord::ConnectionNotEstablished "
                    '(connection to server at "10.96.120.4", port 6432 failed: FATAL:  '
                    "no more connections allowed (max_client_conn)\n)",
                )
                for k in range(14)
            ],
        )
    p.stream(
        {"namespace": ns, "app": "shop-postgres", "pod": "shop-postgres-0", "container": "postgres"},
        [
            (20.0, "2025-06-03 14:20:00.118 UTC [71] LOG:  checkpoint starting: time"),
            (
                24.0,
                "2025-06-03 14:24:30.881 UTC [71] LOG:  checkpoint complete: wrote 18120 buffers (11.1%); "
                "write=269.7 s, sync=0.02 s, total=270.3 s",
            ),
        ],
    )
    p.stream(
        {
            "namespace": ns,
            "app": "sidekiq",
            "container": "sidekiq",
            "pod": f"sidekiq-{suffix('sq', length=10)}-{suffix('sq')}",
        },
        [(30.0, "WARN: Sidekiq::Limiter::OverLimit: rate limited by mailgun (retry in 4s)")],
    )
    p.truth(
        kind="db_pool_exhaustion",
        service="pgbouncer",
        summary=(
            "The HPA scales storefront-api from 12 to 40 pods, each opening up to 20 client connections, so "
            "pgbouncer reaches max_client_conn=600 and refuses new clients ('no more connections allowed "
            "(max_client_conn)'); Rails reports ActiveRecord::ConnectionNotEstablished. Postgres itself has ~45 "
            "active of 400 connections and is healthy; its checkpoint and Sidekiq's rate limit are routine."
        ),
        key_evidence=["no more connections allowed (max_client_conn)"],
    )
    return p


def notifications_pg_pool() -> Pack:
    """node-postgres pool exhausted because clients are held across a slow push call; built-in logs and metrics."""
    p = Pack(
        "notifications-pg-pool",
        title="Notification sends timing out",
        description=(
            "notifications-api (Node.js, node-postgres Pool max=10) records each push in notif-db inside a "
            "transaction that also calls the push provider. APNs latency rose this afternoon. Recorded with the "
            "built-in tools."
        ),
        question="notifications-api requests time out and nothing gets sent. Why?",
        start="2025-10-21T15:00:00Z",
        minutes=40,
    )
    p.service("notifications-api", "http", namespace="engage", depends_on=["notif-db", "apns"])
    p.service("notif-db", "database", namespace="engage")
    p.service("apns", "external")
    p.service("email-worker", "worker", namespace="engage")
    for k in range(36):
        m = 0.5 + k * 1.1
        ms = 190 + k * 3 if m < 9 else 7900 + (k * 311) % 2600
        p.log(
            m,
            "notifications-api",
            "INFO",
            f'{{"level":30,"time":{1761058800000 + int(m * 60000)},"msg":"push sent",'
            f'"provider":"apns","device":"d_{suffix("d", k, length=8)}",'
            f'"duration_ms":{ms},"tx_open_ms":{ms + 12}}}',
        )
    for k in range(30):
        m = 10.0 + k * 1.0
        p.log(
            m,
            "notifications-api",
            "ERROR",
            f'{{"level":50,"time":{1761058800000 + int(m * 60000)},"msg":"send failed","err":{{"type":"Error",'
            '"message":"timeout exceeded when trying to connect","stack":"Error: timeout exceeded when trying to '
            "connect\\n    at /app/node_modules/pg-pool/index.js:45:11\\n    at process.processTicksAndRejections "
            "(node:internal/process/task_queues:95:5)\\n    at async PushRepository.record (/app/dist/push/"
            'repository.js:22:20)"}}',
        )
    p.log(11.0, "notifications-api", "WARN", '{"level":40,"msg":"pool stats","total":10,"idle":0,"waiting":57}')
    p.log(25.0, "notifications-api", "WARN", '{"level":40,"msg":"pool stats","total":10,"idle":0,"waiting":212}')
    p.log(12.0, "notif-db", "INFO", "2025-10-21 15:12:00.118 UTC [3312] LOG:  duration: 8112.004 ms  statement: COMMIT")
    p.log(14.0, "email-worker", "WARN", "smtp: 421 4.7.0 Try again later, closing connection (retry 1/3)")
    p.metric(
        "pg_stat_activity_idle_in_transaction",
        "notif-db",
        "connections",
        [2] * 9 + [10] * 31,
        labels={"datname": "notif"},
    )
    p.metric(
        "pg_stat_activity_active",
        "notif-db",
        "connections",
        [3 + m % 2 for m in range(40)],
        labels={"datname": "notif"},
    )
    p.metric(
        "apns_request_duration_p99_ms", "notifications-api", "ms", [240] * 9 + [9800 + (m % 4) * 300 for m in range(31)]
    )
    p.metric(
        "http_requests_error_rate",
        "notifications-api",
        "ratio",
        [0.002] * 10 + [0.71 + (m % 3) * 0.04 for m in range(30)],
    )
    p.truth(
        kind="db_pool_exhaustion",
        service="notifications-api",
        summary=(
            "notifications-api holds a pooled database client (with an open transaction) across each APNs call; when "
            "APNs slows to ~8 s, all 10 pool clients sit 'idle in transaction' and new requests fail with "
            "node-postgres's 'timeout exceeded when trying to connect'. notif-db is healthy (its slow COMMIT is the "
            "long transaction ending); the SMTP 421 in email-worker is unrelated."
        ),
        key_evidence=["timeout exceeded when trying to connect", '"waiting":57'],
        ambiguous=True,
    )
    return p


PACKS = [invoice_service_hikari, loyalty_api_queuepool, api_pgbouncer_max_client, notifications_pg_pool]
