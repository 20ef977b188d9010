"""Out-of-memory incidents: the container status, kube-state-metrics, the JVM's own error, the kernel's OOM killer."""

from __future__ import annotations

from tests.incidents.corpus.kit import (
    Pack,
    backoff_event_message,
    container,
    crashloop_message,
    healthy_pod,
    pod_start_events,
    running,
    status,
    suffix,
    terminated,
    uid,
    waiting,
)


def cart_pods_restarting() -> Pack:
    """OOMKilled only in the Pods' container status; Kubernetes objects and pod logs only, no metric at all."""
    p = Pack(
        "cart-pods-restarting",
        title="cart-svc pods restarting during the lunch peak",
        description=(
            "Shop namespace on the eu-west-1 cluster. storefront (nginx) calls cart-svc (Go), which keeps carts "
            "in Redis. Recorded with kubectl: pods, events and the previous containers' logs."
        ),
        question="cart-svc pods keep restarting every few minutes since noon. What is going on?",
        start="2025-03-11T11:30:00Z",
        minutes=60,
    )
    p.service("storefront", "http", namespace="shop", depends_on=["cart-svc", "recommendations"])
    p.service("cart-svc", "http", namespace="shop", depends_on=["cart-redis"])
    p.service("recommendations", "http", namespace="shop")
    p.service("cart-redis", "cache", namespace="shop")
    ns = "shop"
    nodes = [
        "ip-10-0-21-118.eu-west-1.compute.internal",
        "ip-10-0-22-41.eu-west-1.compute.internal",
        "ip-10-0-23-7.eu-west-1.compute.internal",
    ]
    cart_hash = suffix("cart", length=10)
    cart_rs = f"cart-svc-{cart_hash}"
    cart_image = "registry.acme.io/shop/cart-svc:1.31.4"
    labels = {"app.kubernetes.io/name": "cart-svc", "app.kubernetes.io/part-of": "shop", "pod-template-hash": cart_hash}
    restarts = [(6, "crash"), (5, "running"), (7, "running")]
    for i, (count, now) in enumerate(restarts):
        name = f"{cart_rs}-{suffix('cart-pod', i)}"
        node = nodes[i]
        last_start, last_end = (49.0, 55.4) if now == "crash" else (41.0 + i * 3, 47.5 + i * 3.2)
        last = terminated(p, "OOMKilled", 137, last_start, last_end, cid=name)
        if now == "crash":
            state = waiting("CrashLoopBackOff", crashloop_message("server", name, ns, p))
            ready = False
        else:
            state = running(p, last_end + 0.2)
            ready = True
        p.pod(
            name,
            ns,
            labels=labels,
            node=node,
            created=-2890 + i * 7,
            owner=("ReplicaSet", cart_rs),
            ip=f"10.0.{21 + i}.{150 + i * 13}",
            containers=[
                container(
                    "server",
                    cart_image,
                    cpu="500m",
                    memory="384Mi",
                    limit_memory="384Mi",
                    probes={"readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}, "periodSeconds": 5}},
                )
            ],
            statuses=[status(p, "server", cart_image, state=state, ready=ready, restarts=count, last=last)],
        )
        field = "spec.containers{server}"
        first, latest = 2.5 + i * 4, last_start
        events = p.events_of(ns, "Pod", name, host=node, field_path=field)
        events(first, "Pulled", f'Container image "{cart_image}" already present on machine', count=count, last=latest)
        events(first + 0.01, "Created", "Created container server", count=count, last=latest + 0.01)
        events(first + 0.02, "Started", "Started container server", count=count, last=latest + 0.02)
        events(
            8 + i,
            "BackOff",
            backoff_event_message("server", name, ns, p),
            type="Warning",
            count=14 + i * 5,
            last=57.5 + i * 0.6,
        )
        t = last_start
        previous = [
            f'{{"level":"info","ts":"{p.clock(t + 0.02)}","caller":"cmd/cart/main.go:88","msg":"listening",'
            '"addr":":8080","version":"1.31.4"}',
            f'{{"level":"info","ts":"{p.clock(t + 0.1)}","caller":"redis/pool.go:54","msg":"redis pool ready",'
            '"addr":"cart-redis.shop.svc:6379","size":64}',
            f'{{"level":"info","ts":"{p.clock(t + 1.5)}","caller":"bundle/loader.go:142","msg":"expanding '
            'promo bundle","bundle":"lunch-deal-q1","skus":48211}',
            f'{{"level":"info","ts":"{p.clock(t + 3.2)}","caller":"http/access.go:31","msg":"request",'
            '"method":"POST","path":"/v1/cart/items","status":200,"dur_ms":212}',
            f'{{"level":"info","ts":"{p.clock(last_end - 0.05)}","caller":"bundle/loader.go:171","msg":"bundle '
            'cache size","entries":48211,"approx_bytes":301989888}',
        ]
        p.pod_log(ns, name, previous, container="server", previous=True)
        p.pod_log(ns, name, previous[:2], container="server")

    # Neighbours: storefront healthy; recommendations restarted once two days ago (a node drain), and its new
    # replica failed a readiness probe once while warming up.
    front_hash = suffix("front", length=9)
    for i in range(2):
        healthy_pod(
            p,
            name=f"storefront-{front_hash}-{suffix('front-pod', i)}",
            namespace=ns,
            app="storefront",
            rs=f"storefront-{front_hash}",
            template_hash=front_hash,
            node=nodes[i + 1],
            container_name="nginx",
            image="registry.acme.io/shop/storefront:4.2.0",
            created=-12000,
            ip=f"10.0.2{i + 1}.{30 + i}",
            port=80,
        )
    rec_hash = suffix("rec", length=10)
    rec_rs = f"recommendations-{rec_hash}"
    rec_image = "registry.acme.io/shop/recommendations:0.44.2"
    for i in range(2):
        rec_name = f"{rec_rs}-{suffix('rec-pod', i)}"
        rec_last = terminated(p, "Error", 143, -4300, -2880, cid=rec_name) if i == 0 else None
        healthy_pod(
            p,
            name=rec_name,
            namespace=ns,
            app="recommendations",
            rs=rec_rs,
            template_hash=rec_hash,
            node=nodes[2 - i],
            container_name="api",
            image=rec_image,
            created=-4400 if i == 0 else 14,
            ip=f"10.0.2{3 - i}.{88 + i}",
            restarts=1 if i == 0 else 0,
            last=rec_last,
        )
    new_rec = f"{rec_rs}-{suffix('rec-pod', 1)}"
    pod_start_events(p, ns, new_rec, nodes[1], "api", rec_image, 14, pulled=False)
    p.event(
        14.4,
        ns,
        "Pod",
        new_rec,
        "Unhealthy",
        'Readiness probe failed: Get "http://10.0.22.89:8080/ready": dial tcp 10.0.22.89:8080: connect: '
        "connection refused",
        type="Warning",
        host=nodes[1],
        field_path="spec.containers{api}",
    )
    p.pod(
        "cart-redis-0",
        ns,
        labels={"app.kubernetes.io/name": "cart-redis", "statefulset.kubernetes.io/pod-name": "cart-redis-0"},
        node=nodes[0],
        created=-40000,
        owner=("StatefulSet", "cart-redis"),
        ip="10.0.21.201",
        containers=[container("redis", "redis:7.2.4-alpine", port=6379, memory="1Gi", limit_memory="1Gi")],
        statuses=[status(p, "redis", "redis:7.2.4-alpine", state=running(p, -40000))],
    )
    events = p.events_of("batch", "Pod", "catalog-export-28981410-2xw9q")
    events(
        3,
        "FailedScheduling",
        "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption "
        "victims found for incoming pod.",
        type="Warning",
        component="default-scheduler",
        new_api=True,
    )
    events(
        3.2,
        "TriggeredScaleUp",
        "pod triggered scale-up: [{eks-batch-spot-20250211-8ac6 1->2 (max: 6)}]",
        component="cluster-autoscaler",
    )
    p.truth(
        kind="oom_killed",
        service="cart-svc",
        summary=(
            "cart-svc's container (named server) outgrows its 384Mi limit once the lunch-deal promo bundle "
            "(48,211 SKUs, ~288 MiB cached) is expanded, and is OOMKilled (exit code 137) every few minutes, then "
            "held in CrashLoopBackOff. The recommendations restart (two days old, exit 143 on a node drain) and its "
            "readiness blip while warming up, and the batch pod's FailedScheduling, are unrelated."
        ),
        key_evidence=["OOMKilled", "Back-off restarting failed container server"],
    )
    return p


def ledger_writer_lag() -> Pack:
    """OOMKilled seen only through kube-state-metrics and cAdvisor series; Prometheus only."""
    p = Pack(
        "ledger-writer-lag",
        title="Settlement ledger lagging behind",
        description=(
            "Payments namespace. ledger-writer consumes settled payments from Kafka and writes them to ledger-db. "
            "Finance noticed settlements appearing late. Recorded from Prometheus (kube-state-metrics, cAdvisor, "
            "kafka-exporter, application metrics)."
        ),
        question="Why is ledger-writer lagging behind on settlements?",
        start="2025-02-03T08:00:00Z",
        minutes=60,
    )
    p.service("payments-api", "http", namespace="payments", depends_on=["fraud-scorer", "settlements-topic"])
    p.service("ledger-writer", "worker", namespace="payments", depends_on=["settlements-topic", "ledger-db"])
    p.service("fraud-scorer", "http", namespace="payments")
    p.service("settlements-topic", "queue", namespace="payments")
    p.service("ledger-db", "database", namespace="payments")
    ns = "payments"
    ksm = {"job": "kube-state-metrics", "namespace": ns, "instance": "10.0.40.12:8080"}
    lw_hash = suffix("lw", length=10)
    pods = [f"ledger-writer-{lw_hash}-{suffix('lw-pod', i)}" for i in range(3)]
    # Restarts step up on two of the three pods from minute 12; each restart follows a sawtooth of memory.
    steps = {0: [12, 21, 30, 39, 48, 57], 1: [15, 26, 37, 48], 2: []}
    for i, pod in enumerate(pods):
        restarts_base = 0 if i < 2 else 1
        values = []
        for m in range(0, 61):
            values.append(restarts_base + sum(1 for s in steps[i] if s <= m))
        labels = {**ksm, "pod": pod, "container": "writer", "uid": uid("ledger", pod)}
        p.series({"__name__": "kube_pod_container_status_restarts_total", **labels}, values)
        p.series(
            {
                "__name__": "kube_pod_container_resource_limits",
                **ksm,
                "pod": pod,
                "container": "writer",
                "node": f"ip-10-0-4{i}-{17 + i}.ec2.internal",
                "resource": "memory",
                "unit": "byte",
            },
            [805306368] * 61,
        )
        if steps[i]:
            first = steps[i][0]
            p.series(
                {"__name__": "kube_pod_container_status_last_terminated_reason", **labels, "reason": "OOMKilled"},
                [1] * (61 - first),
                start=first,
            )
            p.series(
                {"__name__": "kube_pod_container_status_last_terminated_exitcode", **labels},
                [137] * (61 - first),
                start=first,
            )
            p.series(
                {"__name__": "kube_pod_container_status_waiting_reason", **labels, "reason": "CrashLoopBackOff"},
                [1 if any(0 <= m - s < 3 for s in steps[i]) else 0 for m in range(first, 61)],
                start=first,
            )
        else:
            # The third pod's one restart is from last week: its last termination was a clean rollout.
            p.series(
                {"__name__": "kube_pod_container_status_last_terminated_reason", **labels, "reason": "Completed"},
                [1] * 61,
            )
        mem = []
        for m in range(0, 61):
            since = max([0] + [s for s in steps[i] if s <= m])
            mem.append(int(310e6 + (m - since) * (52e6 if steps[i] else 2e6)))
        mem = [min(v, 803_000_000) for v in mem]
        p.series(
            {
                "__name__": "container_memory_working_set_bytes",
                "namespace": ns,
                "pod": pod,
                "container": "writer",
                "image": "registry.acme.io/payments/ledger-writer:3.8.0",
                "job": "kubelet",
                "metrics_path": "/metrics/cadvisor",
                "id": f"/kubepods.slice/kubepods-burstable.slice/pod{i}",
            },
            mem,
        )
    lag = [1200 + max(0, m - 12) ** 2 * 14 for m in range(61)]
    p.series(
        {
            "__name__": "kafka_consumergroup_lag_sum",
            "consumergroup": "ledger-writer",
            "topic": "payments.settled",
            "job": "kafka-exporter",
            "instance": "kafka-exporter.kafka.svc:9308",
        },
        lag,
    )
    p.series(
        {"__name__": "ledger_writer_batches_committed_total", "namespace": ns, "job": "ledger-writer", "pod": pods[2]},
        [41000 + m * 118 for m in range(61)],
    )
    # Red herring: fraud-scorer is CPU-throttled all morning (a known, ticketed limit) and had two old restarts.
    fs_pod = f"fraud-scorer-{suffix('fs', length=9)}-{suffix('fs-pod')}"
    p.series(
        {
            "__name__": "container_cpu_cfs_throttled_periods_total",
            "namespace": ns,
            "pod": fs_pod,
            "container": "scorer",
            "job": "kubelet",
            "metrics_path": "/metrics/cadvisor",
        },
        [882000 + m * 560 for m in range(61)],
    )
    p.series(
        {
            "__name__": "container_cpu_cfs_periods_total",
            "namespace": ns,
            "pod": fs_pod,
            "container": "scorer",
            "job": "kubelet",
            "metrics_path": "/metrics/cadvisor",
        },
        [1402000 + m * 600 for m in range(61)],
    )
    p.series(
        {
            "__name__": "kube_pod_container_status_restarts_total",
            **ksm,
            "pod": fs_pod,
            "container": "scorer",
            "uid": uid("fs", fs_pod),
        },
        [2] * 61,
    )
    p.series(
        {
            "__name__": "http_server_requests_seconds_count",
            "namespace": ns,
            "service": "payments-api",
            "uri": "/v1/payments",
            "status": "201",
            "job": "payments-api",
        },
        [9_210_000 + m * 2_400 for m in range(61)],
    )
    p.series(
        {
            "__name__": "http_server_requests_seconds_count",
            "namespace": ns,
            "service": "payments-api",
            "uri": "/v1/payments",
            "status": "500",
            "job": "payments-api",
        },
        [412 + (m // 20) for m in range(61)],
    )
    p.truth(
        kind="oom_killed",
        service="ledger-writer",
        summary=(
            "Two of the three ledger-writer pods (container writer) climb to their 768Mi limit and are OOMKilled "
            "(exit code 137) every ~10 minutes from 08:12, so the consumer group's lag on payments.settled grows "
            "quadratically. fraud-scorer's CPU throttling and old restarts are a known, unrelated limit."
        ),
        key_evidence=["OOMKilled", "kube_pod_container_status_last_terminated_reason"],
    )
    return p


def report_exports_failing() -> Pack:
    """The JVM's own heap OutOfMemoryError (exit code 3 with ExitOnOutOfMemoryError), not an OOMKilled."""
    p = Pack(
        "report-exports-failing",
        title="Large scheduled exports failing",
        description=(
            "Analytics namespace. report-builder (Java 21, Spring Boot) renders scheduled XLSX exports from the "
            "warehouse database. Recorded: Pods and container logs from Loki."
        ),
        question="Scheduled exports from report-builder keep failing for our biggest tenants. Why?",
        start="2025-04-03T09:00:00Z",
        minutes=45,
    )
    p.service("report-builder", "worker", namespace="analytics", depends_on=["warehouse-db", "exports-bucket"])
    p.service("dashboards-api", "http", namespace="analytics", depends_on=["warehouse-db"])
    p.service("warehouse-db", "database", namespace="analytics")
    p.service("exports-bucket", "external")
    ns = "analytics"
    rb_hash = suffix("rb", length=10)
    image = "registry.acme.io/analytics/report-builder:7.2.1"
    pods = [f"report-builder-{rb_hash}-{suffix('rb-pod', i)}" for i in range(2)]
    for i, pod in enumerate(pods):
        p.pod(
            pod,
            ns,
            labels={"app": "report-builder", "pod-template-hash": rb_hash, "team": "insights"},
            node=f"ip-10-1-{8 + i}-{40 + i}.ec2.internal",
            created=-20000,
            owner=("ReplicaSet", f"report-builder-{rb_hash}"),
            ip=f"10.1.{8 + i}.{120 + i}",
            containers=[
                container(
                    "worker",
                    image,
                    cpu="1",
                    memory="2Gi",
                    limit_memory="2Gi",
                    port=8081,
                    env=[{"name": "JAVA_TOOL_OPTIONS", "value": "-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError"}],
                )
            ],
            statuses=[
                status(
                    p,
                    "worker",
                    image,
                    state=running(p, 16.2 + i * 9),
                    restarts=3 + i,
                    last=terminated(p, "Error", 3, -300, 16.1 + i * 9, cid=pod),
                )
            ],
        )
    entries: list[tuple[float, str]] = []
    tenants = [("t-1093", 18_220, "csv"), ("t-2291", 94_004, "xlsx"), ("t-4481", 2_418_930, "xlsx")]
    minute = 1.0
    for _ in range(3):
        for tenant, rows, fmt in tenants:
            entries.append(
                (
                    minute,
                    f"2025-04-03T09:{int(minute):02d}:{int(minute * 37) % 60:02d}.118Z  INFO 1 --- "
                    f"[report-builder] [pool-3-thread-2] c.a.reports.ExportJob : building export "
                    f"tenant={tenant} rows={rows:,} format={fmt}",
                )
            )
            minute += 0.6
            if tenant != "t-4481":
                entries.append(
                    (
                        minute,
                        f"2025-04-03T09:{int(minute):02d}:{int(minute * 37) % 60:02d}.402Z  INFO 1 "
                        f"--- [report-builder] [pool-3-thread-2] c.a.reports.ExportJob : export done "
                        f"tenant={tenant} bytes={rows * 211} elapsed=PT{rows // 4000 + 2}S",
                    )
                )
                minute += 0.4
        # The big tenant: the sheet grows, GC thrashes, then the heap is gone and the JVM exits.
        entries.append(
            (
                minute,
                f"2025-04-03T09:{int(minute):02d}:12.771Z  WARN 1 --- [report-builder] "
                "[pool-3-thread-2] o.a.poi.util.IOUtils : Excel row count 1048576 would be exceeded; "
                "splitting into additional sheets",
            )
        )
        minute += 2.2
        entries.append(
            (
                minute,
                f"2025-04-03T09:{int(minute):02d}:47.902Z ERROR 1 --- [report-builder] "
                "[pool-3-thread-2] c.a.reports.ExportJob : export failed tenant=t-4481\n"
                "java.lang.OutOfMemoryError: Java heap space\n"
                "\tat java.base/java.util.Arrays.copyOf(Arrays.java:3541)\n"
                "\tat java.base/java.util.ArrayList.grow(ArrayList.java:237)\n"
                "\tat org.apache.poi.xssf.usermodel.XSSFSheet.createRow(XSSFSheet.java:795)\n"
                "\tat com.acme.reports.xlsx.SheetWriter.append(SheetWriter.java:64)\n"
                "\tat com.acme.reports.ExportJob.run(ExportJob.java:118)",
            )
        )
        entries.append((minute + 0.01, "Terminating due to java.lang.OutOfMemoryError: Java heap space"))
        minute += 1.0
        entries.append(
            (
                minute,
                f"2025-04-03T09:{int(minute):02d}:02.330Z  INFO 1 --- [report-builder] [main] "
                "c.a.reports.ReportBuilderApplication : Started ReportBuilderApplication in 7.412 "
                "seconds (process running for 8.1)",
            )
        )
        minute += 9.0
    stream = {"namespace": ns, "app": "report-builder", "container": "worker", "job": "analytics/report-builder"}
    half = len(entries) // 2
    p.stream({**stream, "pod": pods[0]}, entries[:half])
    p.stream({**stream, "pod": pods[1]}, entries[half:])
    # Red herrings: GC pause warnings in dashboards-api (its heap is fine), slow warehouse queries, an S3 retry.
    dash = {
        "namespace": ns,
        "app": "dashboards-api",
        "container": "api",
        "job": "analytics/dashboards-api",
        "pod": f"dashboards-api-{suffix('dash', length=9)}-{suffix('dash-pod')}",
    }
    p.stream(
        dash,
        [
            (
                m * 4.5 + 0.5,
                f"[2025-04-03T09:{int(m * 4.5):02d}:{(m * 13) % 60:02d}.551+0000][info][gc] "
                f"GC({1900 + m}) Pause Young (Normal) (G1 Evacuation Pause) {280 + m % 5 * 9}M->"
                f"{181 + m % 4 * 3}M(1024M) {22 + m % 7 * 4}.118ms",
            )
            for m in range(10)
        ],
    )
    p.stream(
        dash,
        [
            (
                22.2,
                "2025-04-03T09:22:12.006Z  WARN 1 --- [dashboards-api] [http-nio-8080-exec-7] "
                "o.h.engine.jdbc.spi.SqlExceptionHelper : SQL Warning Code: 0, SQLState: 00000 - "
                "long-running query detected (4.2 s) on tenant_daily_rollup",
            )
        ],
    )
    p.stream(
        {
            "namespace": ns,
            "app": "warehouse-db",
            "container": "postgres",
            "job": "analytics/warehouse-db",
            "pod": "warehouse-db-0",
        },
        [
            (
                12.0,
                "2025-04-03 09:12:00.208 UTC [48812] LOG:  duration: 3412.877 ms  statement: SELECT tenant_id, "
                "sum(amount) FROM facts.orders_daily WHERE day >= $1 GROUP BY 1",
            ),
            (
                30.5,
                "2025-04-03 09:30:30.019 UTC [71] LOG:  checkpoint complete: wrote 4120 buffers (3.1%); 0 WAL "
                "file(s) added, 0 removed, 2 recycled; write=269.902 s, sync=0.011 s, total=269.951 s",
            ),
        ],
    )
    p.stream(
        {**stream, "pod": pods[0]},
        [
            (
                6.3,
                "2025-04-03T09:06:18.440Z  WARN 1 --- [report-builder] [pool-3-thread-1] "
                "c.a.reports.s3.Uploader : S3 PutObject retry 1/3 for exports/t-1093/2025-04-03.csv "
                "(SlowDown: Please reduce your request rate.)",
            )
        ],
    )
    p.truth(
        kind="oom_java_heap",
        service="report-builder",
        summary=(
            "report-builder's JVM runs out of heap building the t-4481 export (2.4M rows into XLSX with POI's "
            "in-memory XSSF model): java.lang.OutOfMemoryError: Java heap space, and with -XX:+ExitOnOutOfMemoryError "
            "the JVM exits with code 3 (reason Error, not OOMKilled). Smaller tenants succeed. The dashboards-api "
            "GC lines, the slow warehouse query and the S3 SlowDown retry are unrelated."
        ),
        key_evidence=["java.lang.OutOfMemoryError: Java heap space"],
    )
    return p


def indexer_batches_lost() -> Pack:
    """The kernel's OOM killer takes a Celery child process; the container never restarts (no OOMKilled)."""
    p = Pack(
        "indexer-batches-lost",
        title="search-indexer batches go missing",
        description=(
            "Search team. search-indexer is a Celery worker (prefork, 4 children) that builds documents and bulk-"
            "loads them into search-es. Recorded: application logs, Kubernetes events, node journal via Loki, "
            "indexer metrics."
        ),
        question="search-indexer batches keep getting lost and retried. What is killing them?",
        start="2025-05-20T02:00:00Z",
        minutes=60,
    )
    p.service("search-indexer", "worker", namespace="search", depends_on=["search-es", "catalog-db"])
    p.service("search-api", "http", namespace="search", depends_on=["search-es"])
    p.service("search-es", "database", namespace="search")
    p.service("catalog-db", "database", namespace="catalog")
    node = "ip-10-4-12-93.ec2.internal"
    pod = f"search-indexer-{suffix('si', length=10)}-{suffix('si-pod')}"
    cid = "cri-containerd-6e1f0b7d2c9a4e8b9d3f5a7c1e2b4d6f8a0c2e4b6d8f0a1c3e5b7d9f1a3c5e7.scope"
    memcg = f"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{uid('si', pod).replace('-', '_')}.slice"
    kernel: list[tuple[float, str]] = []
    pids = [28841, 30117, 31502, 33968]
    for k, minute in enumerate([9.4, 23.1, 38.7, 52.2]):
        pid = pids[k]
        kernel += [
            (minute, "python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=979"),
            (minute, f"CPU: 1 PID: {pid} Comm: python3 Not tainted 6.1.84-99.169.amzn2023.x86_64 #1"),
            (minute + 0.001, f"memory: usage 2097152kB, limit 2097152kB, failcnt {1842 + k * 311}"),
            (minute + 0.001, f"Memory cgroup stats for {memcg}/{cid}:"),
            (
                minute + 0.002,
                f"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset={cid},mems_allowed=0,"
                f"oom_memcg={memcg}/{cid},task_memcg={memcg}/{cid},task=python3,pid={pid},uid=10001",
            ),
            (
                minute + 0.002,
                f"Memory cgroup out of memory: Killed process {pid} (python3) total-vm:3321484kB, "
                f"anon-rss:{1690412 + k * 1024}kB, file-rss:12044kB, shmem-rss:0kB, UID:10001 "
                f"pgtables:4452kB oom_score_adj:979",
            ),
        ]
    kernel += [
        (m, f"IPv6: ADDRCONF(NETDEV_CHANGE): eni{suffix('eni', m, length=11)}: link becomes ready") for m in (4.0, 31.0)
    ]
    p.stream({"job": "node-journal", "host": node, "unit": "kernel.service", "transport": "kernel"}, kernel)
    p.stream(
        {"job": "node-journal", "host": node, "unit": "kubelet.service", "transport": "journal"},
        [
            (
                m,
                f'I0520 02:{int(m):02d}:{int(m * 60) % 60:02d}.112233    3121 kubelet_getters.go:218] "Pod status '
                f'updated" pod="kube-system/aws-node-{suffix("an")}" status="Running"',
            )
            for m in (2, 17, 44)
        ],
    )
    for k, minute in enumerate([9.4, 23.1, 38.7, 52.2]):
        job_no = 1181 + k * 3
        p.log(
            minute - 1.8,
            "search-indexer",
            "INFO",
            f"[2025-05-20 02:{int(minute - 1.8):02d}:11,402: INFO/ForkPoolWorker-{k % 4 + 1}] Task "
            f"indexer.tasks.build_batch[{suffix('task', k, length=8)}-{suffix('t2', k, length=4)}] received: "
            f"batch={job_no} docs=5000 locale=de_DE",
        )
        p.log(
            minute - 1.2,
            "search-indexer",
            "INFO",
            f"[2025-05-20 02:{int(minute - 1.2):02d}:47,118: INFO/ForkPoolWorker-{k % 4 + 1}] loading synonyms "
            "de_DE_synonyms.txt (412 MB) for batch",
        )
        p.log(
            minute + 0.01,
            "search-indexer",
            "ERROR",
            f"[2025-05-20 02:{int(minute):02d}:{int(minute * 60) % 60:02d},903: ERROR/MainProcess] Process "
            f"'ForkPoolWorker-{k % 4 + 1}' pid:{pids[k]} exited with 'signal 9 (SIGKILL)'",
        )
        p.log(
            minute + 0.02,
            "search-indexer",
            "ERROR",
            f"[2025-05-20 02:{int(minute):02d}:{int(minute * 60) % 60:02d},917: ERROR/MainProcess] Task handler "
            f"raised error: WorkerLostError('Worker exited prematurely: signal 9 (SIGKILL) Job: {job_no}.')",
        )
        p.log(
            minute + 0.5,
            "search-indexer",
            "WARN",
            f"[2025-05-20 02:{int(minute + 0.5):02d}:20,001: WARNING/MainProcess] Retrying batch={job_no} "
            "(attempt 2 of 5) in 60s",
        )
    for m in range(0, 60, 3):
        p.log(
            m + 0.3,
            "search-indexer",
            "INFO",
            f"[2025-05-20 02:{m:02d}:18,552: INFO/ForkPoolWorker-{m % 4 + 1}] Task indexer.tasks.build_batch"
            f"[{suffix('ok', m, length=8)}] succeeded in {6.1 + (m % 5) * 0.7:.2f}s: {{'indexed': 5000, "
            f"'locale': 'en_US'}}",
        )
    for m in range(1, 60, 4):
        p.log(
            m,
            "search-api",
            "INFO",
            f'10.4.3.{m % 250} - - [20/May/2025:02:{m:02d}:03 +0000] "GET /v2/search?q='
            f'sofa HTTP/1.1" 200 8812 0.0{41 + m % 20}',
        )
    p.log(
        14.0,
        "search-es",
        "WARN",
        "[2025-05-20T02:14:00,118][WARN ][o.e.c.r.a.DiskThresholdMonitor] [search-es-1] "
        "high disk watermark [90%] exceeded on [n1x2][search-es-2][/usr/share/"
        "elasticsearch/data] free: 9.8gb[9.7%], shards will be relocated away from this "
        "node",
    )
    p.log(
        14.5,
        "search-es",
        "INFO",
        "[2025-05-20T02:14:30,002][INFO ][o.e.c.r.a.AllocationService] [search-es-1] "
        "Cluster health status changed from [GREEN] to [YELLOW] (reason: [shards "
        "started [[products-v41][2]]]).",
    )
    p.log(
        21.0,
        "search-es",
        "INFO",
        "[2025-05-20T02:21:00,331][INFO ][o.e.c.r.a.AllocationService] [search-es-1] "
        "Cluster health status changed from [YELLOW] to [GREEN] (reason: [shards "
        "started [[products-v41][2]]]).",
    )
    p.metric(
        "indexer_batches_failed",
        "search-indexer",
        "count/min",
        [1 if any(abs(m - x) < 0.6 for x in (9.4, 23.1, 38.7, 52.2)) else 0 for m in range(60)],
    )
    p.metric("indexer_batches_succeeded", "search-indexer", "count/min", [6 + (m % 3) for m in range(60)])
    p.k8s_event(
        9.5,
        "search",
        "Node",
        node,
        "OOMKilling",
        f"Memory cgroup out of memory: Killed process {pids[0]} (python3) total-vm:3321484kB, "
        "anon-rss:1690412kB, file-rss:12044kB, shmem-rss:0kB, UID:10001 pgtables:4452kB oom_score_adj:979",
        type="Warning",
    )
    p.k8s_event(
        40.0,
        "search",
        "Pod",
        f"search-api-{suffix('sa', length=9)}-{suffix('sa-pod')}",
        "Unhealthy",
        'Readiness probe failed: Get "http://10.4.13.52:8080/health": context deadline exceeded '
        "(Client.Timeout exceeded while awaiting headers)",
        type="Warning",
        service="search-api",
    )
    p.truth(
        kind="oom_kernel",
        service="search-indexer",
        summary=(
            "The kernel's memory-cgroup OOM killer kills search-indexer's Celery child (python3) whenever a de_DE "
            "batch loads the 412 MB synonyms file, pushing the container past its 2Gi cgroup limit: 'Memory cgroup "
            "out of memory: Killed process ... (python3)' on the node, and Celery reports WorkerLostError signal 9 "
            "(SIGKILL). The container itself never restarts, so there is no OOMKilled status. The search-es disk "
            "watermark and the search-api readiness blip are unrelated."
        ),
        key_evidence=["Memory cgroup out of memory: Killed process", "signal 9 (SIGKILL)"],
    )
    return p


PACKS = [cart_pods_restarting, ledger_writer_lag, report_exports_failing, indexer_batches_lost]
