"""Windows without an incident (noise only), and questions about a service the data does not know."""

from __future__ import annotations

from tests.incidents.corpus.kit import (
    Pack,
    healthy_pod,
    pod_start_events,
    suffix,
    terminated,
)


def _shop_pods(p: Pack, ns: str, apps: list[tuple[str, str, str]], *, created: float = -40000) -> None:
    nodes = [f"ip-10-0-{k}-{20 + k * 9}.eu-west-1.compute.internal" for k in range(1, 4)]
    for j, (app, container_name, image) in enumerate(apps):
        h = suffix(p.name, app, length=10)
        for i in range(2):
            healthy_pod(
                p,
                name=f"{app}-{h}-{suffix(p.name, app, i)}",
                namespace=ns,
                app=app,
                rs=f"{app}-{h}",
                template_hash=h,
                node=nodes[(i + j) % 3],
                container_name=container_name,
                image=image,
                created=created + j * 11 + i,
                ip=f"10.0.{(i + j) % 3 + 1}.{40 + j * 2 + i}",
            )


def healthy_shop_namespace() -> Pack:
    """Kubernetes only, everything Running and Ready; a routine deploy, a CronJob, a resolved FailedScheduling."""
    p = Pack(
        "healthy-shop-namespace",
        title="Quick check of the shop namespace",
        description=(
            "Shop namespace. An engineer coming on shift wants to know whether anything is wrong. A routine "
            "storefront deploy ran 20 minutes ago; the cluster autoscaler added a node for a batch job."
        ),
        question="Is anything wrong in the shop namespace right now?",
        start="2025-04-29T07:00:00Z",
        minutes=45,
    )
    p.service("storefront", "http", namespace="shop", depends_on=["cart-svc", "checkout-svc", "search-api"])
    p.service("cart-svc", "http", namespace="shop")
    p.service("checkout-svc", "http", namespace="shop")
    p.service("search-api", "http", namespace="shop")
    ns = "shop"
    _shop_pods(
        p,
        ns,
        [
            ("cart-svc", "server", "registry.acme.io/shop/cart-svc:1.32.0"),
            ("checkout-svc", "app", "registry.acme.io/shop/checkout-svc:9.4.1"),
            ("search-api", "api", "registry.acme.io/shop/search-api:11.3.0"),
        ],
    )
    sel = {"app.kubernetes.io/name": "storefront"}
    oh, nh = suffix("sf-old", length=10), suffix("sf-new", length=10)
    image = "registry.acme.io/shop/storefront:4.3.0"
    p.deployment(
        "storefront", ns, selector=sel, replicas=2, revision=88, image=image, container="nginx", created=-900000
    )
    p.replicaset(
        "storefront",
        ns,
        oh,
        selector=sel,
        revision=87,
        image="registry.acme.io/shop/storefront:4.2.9",
        container="nginx",
        created=-300000,
        replicas=0,
    )
    p.replicaset(
        "storefront", ns, nh, selector=sel, revision=88, image=image, container="nginx", created=24.0, replicas=2
    )
    for i in range(2):
        pod = f"storefront-{nh}-{suffix('sf-new', i)}"
        node = f"ip-10-0-{i + 1}-{29 + i * 9}.eu-west-1.compute.internal"
        healthy_pod(
            p,
            name=pod,
            namespace=ns,
            app="storefront",
            rs=f"storefront-{nh}",
            template_hash=nh,
            node=node,
            container_name="nginx",
            image=image,
            created=24.0 + i * 1.2,
            ip=f"10.0.{i + 1}.{90 + i}",
            port=80,
        )
        p.event(
            24.0 + i * 1.2,
            ns,
            "ReplicaSet",
            f"storefront-{nh}",
            "SuccessfulCreate",
            f"Created pod: {pod}",
            component="replicaset-controller",
        )
        pod_start_events(p, ns, pod, node, "nginx", image, 24.0 + i * 1.2, pull_seconds=1.912 + i)
        p.event(
            24.3 + i * 1.2,
            ns,
            "Pod",
            pod,
            "Unhealthy",
            'Readiness probe failed: Get "http://10.0.'
            f'{i + 1}.{90 + i}:80/healthz": dial tcp 10.0.{i + 1}.{90 + i}:80: connect: connection refused',
            type="Warning",
            host=node,
            field_path="spec.containers{nginx}",
        )
        p.event(
            24.9 + i * 1.2,
            ns,
            "Pod",
            f"storefront-{oh}-{suffix('sf-old', i)}",
            "Killing",
            "Stopping container nginx",
            host=node,
            field_path="spec.containers{nginx}",
        )
    for k, (up, down) in enumerate([(1, 1), (2, 0)]):
        events = p.events_of(ns, "Deployment", "storefront", component="deployment-controller")
        events(24.0 + k * 1.2, "ScalingReplicaSet", f"Scaled up replica set storefront-{nh} to {up} from {up - 1}")
        events(
            24.9 + k * 1.2, "ScalingReplicaSet", f"Scaled down replica set storefront-{oh} to {down} from {down + 1}"
        )
    # One pod restarted six days ago (a node reboot); the batch job waited for a node, then ran and completed.
    cart = p.pods[0]["status"]["containerStatuses"][0]
    cart["restartCount"] = 1
    cart["lastState"] = terminated(p, "Error", 255, -9000, -8640, cid="reboot")
    job = "sitemap-build-29098020"
    jpod = f"{job}-{suffix(job)}"
    p.event(
        0.0, ns, "CronJob", "sitemap-build", "SuccessfulCreate", f"Created job {job}", component="cronjob-controller"
    )
    p.event(0.01, ns, "Job", job, "SuccessfulCreate", f"Created pod: {jpod}", component="job-controller")
    events = p.events_of(ns, "Pod", jpod)
    events(
        0.02,
        "FailedScheduling",
        "0/3 nodes are available: 3 Insufficient memory. preemption: "
        "0/3 nodes are available: 3 No preemption victims found for incoming pod.",
        type="Warning",
        component="default-scheduler",
        new_api=True,
        count=2,
        last=1.0,
    )
    events(
        0.1,
        "TriggeredScaleUp",
        "pod triggered scale-up: [{eks-general-20250301-6ac4 3->4 (max: 8)}]",
        component="cluster-autoscaler",
    )
    pod_start_events(
        p,
        ns,
        jpod,
        "ip-10-0-3-201.eu-west-1.compute.internal",
        "build",
        "registry.acme.io/shop/sitemap-build:2.0.1",
        2.4,
    )
    p.event(9.0, ns, "Job", job, "Completed", "Job completed", component="job-controller")
    p.event(
        9.1,
        ns,
        "CronJob",
        "sitemap-build",
        "SawCompletedJob",
        f"Saw completed job: {job}, status: Complete",
        component="cronjob-controller",
    )
    p.event(
        15.0,
        ns,
        "HorizontalPodAutoscaler",
        "search-api",
        "SuccessfulRescale",
        "New size: 2; reason: All metrics below target",
        component="horizontal-pod-autoscaler",
        api_version="autoscaling/v2",
    )
    p.truth(
        kind="none",
        service=None,
        summary=(
            "No incident: every pod is Running and Ready. The storefront rollout to 4.3.0 completed normally (a "
            "readiness failure while nginx started is expected), the sitemap job waited a minute for the autoscaler "
            "and completed, search-api scaled down, and cart-svc's one restart is six days old."
        ),
    )
    return p


def healthy_payments_metrics() -> Pack:
    """Prometheus only: steady traffic, errors and latency with ordinary noise and one short blip."""
    p = Pack(
        "healthy-payments-metrics",
        title="Are payments healthy?",
        description=(
            "Finance asked whether card payments are healthy this morning. payments-api and psp-adapter export "
            "Micrometer/Prometheus metrics; kube-state-metrics and cAdvisor are scraped too."
        ),
        question="Are payments healthy right now? Finance is asking about payments-api.",
        start="2025-06-24T09:00:00Z",
        minutes=60,
    )
    p.service("payments-api", "http", namespace="payments", depends_on=["psp-adapter", "payments-db"])
    p.service("psp-adapter", "http", namespace="payments")
    p.service("payments-db", "database", namespace="payments")
    ns = "payments"
    jitter = [0, 3, -2, 5, 1, -4, 2, 0, -1, 4]
    for code, base, step in (("200", 5_120_000, 2_400), ("201", 880_000, 610), ("402", 12_800, 11), ("500", 410, 0)):
        values = []
        total = base
        for m in range(60):
            total += step + (jitter[m % 10] * (step // 100 if step > 100 else 0))
            if code == "500" and m == 37:
                total += 9  # one short burst: a PSP timeout that retried successfully
            values.append(total)
        p.series(
            {
                "__name__": "http_server_requests_seconds_count",
                "namespace": ns,
                "service": "payments-api",
                "uri": "/v2/payments",
                "status": code,
                "job": "payments-api",
            },
            values,
        )
    p.series(
        {
            "__name__": "http_server_requests_seconds:p99",
            "namespace": ns,
            "service": "payments-api",
            "uri": "/v2/payments",
        },
        [0.42 + jitter[m % 10] * 0.01 + (0.35 if m == 37 else 0) for m in range(60)],
    )
    p.series(
        {
            "__name__": "psp_adapter_upstream_duration_seconds:p95",
            "namespace": ns,
            "service": "psp-adapter",
            "psp": "adyen",
        },
        [0.31 + jitter[(m + 3) % 10] * 0.008 for m in range(60)],
    )
    for i in range(3):
        pod = f"payments-api-{suffix('hp', length=10)}-{suffix('hp', i)}"
        p.series(
            {
                "__name__": "kube_pod_container_status_restarts_total",
                "namespace": ns,
                "pod": pod,
                "container": "app",
                "job": "kube-state-metrics",
            },
            [0 if i else 1] * 60,
        )
        p.series(
            {
                "__name__": "container_memory_working_set_bytes",
                "namespace": ns,
                "pod": pod,
                "container": "app",
                "job": "kubelet",
                "metrics_path": "/metrics/cadvisor",
            },
            [int(6.1e8 + jitter[(m + i) % 10] * 4e6) for m in range(60)],
        )
        p.series(
            {
                "__name__": "kube_pod_container_resource_limits",
                "namespace": ns,
                "pod": pod,
                "container": "app",
                "resource": "memory",
                "unit": "byte",
                "job": "kube-state-metrics",
            },
            [1073741824] * 60,
        )
    p.series(
        {
            "__name__": "hikaricp_connections_active",
            "namespace": ns,
            "application": "payments-api",
            "pool": "HikariPool-1",
        },
        [5 + (jitter[m % 10] % 3) for m in range(60)],
    )
    p.series(
        {
            "__name__": "hikaricp_connections_max",
            "namespace": ns,
            "application": "payments-api",
            "pool": "HikariPool-1",
        },
        [30] * 60,
    )
    p.series(
        {
            "__name__": "pg_stat_activity_count",
            "datname": "payments",
            "state": "active",
            "job": "postgres-exporter",
            "instance": "payments-db-0",
        },
        [9 + (jitter[m % 10] % 4) for m in range(60)],
    )
    p.truth(
        kind="none",
        service=None,
        summary=(
            "No incident: payments-api's request rates, 402 (declines) and 500 counts grow at their usual pace "
            "(nine extra 500s in one minute at 09:37 during a retried PSP timeout), p99 stays around 0.42 s apart "
            "from that one-minute blip, memory and connection pools are flat, and the single restart is old."
        ),
    )
    return p


def healthy_checkout_warnings() -> Pack:
    """A burst of warnings that are all routine; built-in logs and metrics plus a Loki stream."""
    p = Pack(
        "healthy-checkout-warnings",
        title="Burst of checkout-svc warnings",
        description=(
            "An engineer saw a burst of WARN lines from checkout-svc in the log dashboard and asks whether it is an "
            "incident. Recorded: built-in logs and metrics, and the ingress's access log from Loki."
        ),
        question="We saw a burst of warnings from checkout-svc. Is there an incident?",
        start="2025-09-30T12:00:00Z",
        minutes=50,
    )
    p.service("checkout-svc", "http", namespace="shop", depends_on=["psp-adapter", "orders-db"])
    p.service("psp-adapter", "http", namespace="shop")
    p.service("orders-db", "database", namespace="shop")
    warns = [
        "card declined: do_not_honor (issuer) for order ord_{x}",
        "retrying PSP call after 502 from gateway (attempt 1/3); succeeded on attempt 2",
        "client closed connection before response was written (499) for POST /v1/checkout",
        "feature flag 'checkout.apple_pay_v2' unknown, defaulting to false",
        "slow query 540ms: SELECT * FROM orders WHERE customer_id = $1 ORDER BY created_at DESC LIMIT 20",
        "circuit breaker psp-adapter: half-open -> closed after 1 successful call",
        "deprecated header X-Forwarded-Proto-Version ignored",
    ]
    for k in range(42):
        m = 14.0 + k * 0.22 if k < 30 else 1.0 + (k - 30) * 3.9
        p.log(
            m,
            "checkout-svc",
            "WARN",
            f"{p.clock(m)}  WARN 1 --- [checkout-svc] [nio-8080-exec-{k % 60 + 1}] "
            f"c.a.checkout.Flow : {warns[k % len(warns)].replace('{x}', suffix('o', k))}",
        )
    for k in range(45):
        m = 0.5 + k * 1.1
        p.log(
            m,
            "checkout-svc",
            "INFO",
            f"{p.clock(m)}  INFO 1 --- [checkout-svc] [nio-8080-exec-{k % 60 + 1}] "
            f"c.a.checkout.Flow : checkout completed order=ord_{suffix('ok', k)} in "
            f"{280 + (k * 37) % 160}ms",
        )
    p.log(20.0, "psp-adapter", "WARN", "upstream 502 from psp gateway, retry scheduled (idempotency key reused)")
    p.log(20.1, "psp-adapter", "INFO", "retry succeeded (idempotency key reused)")
    p.log(30.0, "orders-db", "INFO", "2025-09-30 12:30:00.118 UTC [71] LOG:  checkpoint complete: wrote 1822 buffers")
    p.metric("http_requests_error_rate", "checkout-svc", "ratio", [0.004 + (m % 5) * 0.0004 for m in range(50)])
    p.metric("http_request_duration_p99_ms", "checkout-svc", "ms", [610 + (m % 7) * 11 for m in range(50)])
    p.metric("checkouts_completed_per_min", "checkout-svc", "count", [118 + (m % 9) for m in range(50)])
    p.stream(
        {
            "namespace": "ingress",
            "app": "ingress-nginx",
            "container": "controller",
            "pod": f"ingress-nginx-controller-{suffix('hin', length=10)}-{suffix('hin')}",
        },
        [
            (
                14.0 + k * 0.4,
                f'66.249.66.{k % 200} - - [{p.clock(14.0 + k * 0.4, "%d/%b/%Y:%H:%M:%S +0000")}] "GET '
                f'/checkout/legacy/{suffix("bot", k)} HTTP/1.1" 404 153 "-" "Mozilla/5.0 (compatible; '
                'Googlebot/2.1; +http://www.google.com/bot.html)"',
            )
            for k in range(20)
        ],
    )
    p.truth(
        kind="none",
        service=None,
        summary=(
            "No incident: the WARN burst at 12:14 is routine (declines, a PSP 502 retried successfully, a client "
            "that went away, an unknown feature flag, one slow query), checkout-svc's error rate, p99 and completed "
            "checkouts stay at their usual levels, and the 404s at the ingress are a crawler on legacy URLs."
        ),
    )
    return p


def unknown_service_billing() -> Pack:
    """The question names billing-svc; the data is about the shop's services only."""
    p = Pack(
        "unknown-service-billing",
        title="billing-svc failing?",
        description=(
            "A ticket says billing-svc is failing. This environment holds the shop namespace's data (storefront, "
            "cart-svc, checkout-svc); billing runs in another cluster."
        ),
        question="Why is billing-svc failing?",
        start="2025-10-14T10:00:00Z",
        minutes=40,
    )
    p.service("storefront", "http", namespace="shop", depends_on=["cart-svc", "checkout-svc"])
    p.service("cart-svc", "http", namespace="shop")
    p.service("checkout-svc", "http", namespace="shop")
    _shop_pods(
        p,
        "shop",
        [
            ("storefront", "nginx", "registry.acme.io/shop/storefront:4.3.0"),
            ("cart-svc", "server", "registry.acme.io/shop/cart-svc:1.32.0"),
            ("checkout-svc", "app", "registry.acme.io/shop/checkout-svc:9.4.1"),
        ],
    )
    for m in range(0, 40, 2):
        p.log(m + 0.2, "checkout-svc", "INFO", f"checkout completed order=ord_{suffix('u', m)} in {300 + m}ms")
    p.log(17.0, "checkout-svc", "WARN", "card declined: insufficient_funds for order ord_7c1e2f0a")
    p.log(21.0, "cart-svc", "WARN", '{"level":"warn","msg":"redis pipeline retry","attempt":1}')
    p.metric("http_requests_error_rate", "checkout-svc", "ratio", [0.003 + (m % 4) * 0.0005 for m in range(40)])
    p.metric("http_requests_error_rate", "storefront", "ratio", [0.001] * 40)
    p.truth(
        kind="none",
        service=None,
        summary=(
            "This environment has no data about billing-svc (it is not in the topology, no log, metric or object "
            "names it); the shop services it does hold are healthy. The answer must say there is no data about "
            "billing-svc, not that there is no incident."
        ),
    )
    return p


def unknown_service_reconciler() -> Pack:
    """The question names a CronJob the finance data never mentions; similar names exist."""
    p = Pack(
        "unknown-service-reconciler",
        title="ledger-reconciler failed last night?",
        description=(
            "Finance namespace data (ledger-api, ledger-db, payouts-worker). The question is about a reconciliation "
            "CronJob that is not deployed in this environment."
        ),
        question="Why did the ledger-reconciler cronjob fail last night?",
        start="2025-10-15T01:00:00Z",
        minutes=60,
    )
    p.service("ledger-api", "http", namespace="finance", depends_on=["ledger-db"])
    p.service("ledger-db", "database", namespace="finance")
    p.service("payouts-worker", "worker", namespace="finance", depends_on=["ledger-api"])
    _shop_pods(
        p,
        "finance",
        [
            ("ledger-api", "api", "registry.acme.io/finance/ledger-api:11.2.0"),
            ("payouts-worker", "worker", "registry.acme.io/finance/payouts-worker:3.0.4"),
        ],
    )
    p.event(
        0.0,
        "finance",
        "CronJob",
        "ledger-snapshot",
        "SuccessfulCreate",
        "Created job ledger-snapshot-29342460",
        component="cronjob-controller",
    )
    p.event(6.0, "finance", "Job", "ledger-snapshot-29342460", "Completed", "Job completed", component="job-controller")
    p.stream(
        {
            "namespace": "finance",
            "app": "ledger-api",
            "container": "api",
            "pod": f"ledger-api-{suffix(p.name, 'ledger-api', length=10)}-{suffix(p.name, 'ledger-api', 0)}",
        },
        [
            (m + 0.5, f'{{"level":"info","msg":"POST /v1/entries 201","duration_ms":{21 + m % 9}}}')
            for m in range(0, 60, 3)
        ]
        + [(33.0, '{"level":"warn","msg":"idempotency key replayed","key":"po_88120"}')],
    )
    p.stream(
        {"namespace": "finance", "app": "ledger-db", "pod": "ledger-db-0", "container": "postgres"},
        [
            (m, f"2025-10-15 01:{m:02d}:00.118 UTC [71] LOG:  checkpoint complete: wrote {300 + m} buffers")
            for m in range(0, 60, 15)
        ],
    )
    p.truth(
        kind="none",
        service=None,
        summary=(
            "Nothing in this environment is called ledger-reconciler (the finance namespace has ledger-api, "
            "ledger-db, payouts-worker and a ledger-snapshot CronJob that completed). The answer must say there is "
            "no data about ledger-reconciler, not that there is no incident, and must not substitute a similarly "
            "named workload."
        ),
    )
    return p


PACKS = [
    healthy_shop_namespace,
    healthy_payments_metrics,
    healthy_checkout_warnings,
    unknown_service_billing,
    unknown_service_reconciler,
]
