"""Probe failures (readiness, liveness, startup) and evictions (memory, ephemeral storage, disk pressure)."""

from __future__ import annotations

from tests.incidents.corpus.kit import (
    Pack,
    container,
    healthy_pod,
    http_probe,
    node_ip,
    running,
    status,
    suffix,
    terminated,
)


def profile_api_503() -> Pack:
    """Readiness fails with 503 on every pod; the Service has no endpoints; the ingress says no live upstreams."""
    p = Pack(
        "profile-api-503",
        title="Profile page errors in the app",
        description=(
            "Accounts namespace. profile-api (Kotlin, Ktor) serves user profiles from a snapshot it loads from S3 at "
            "start and refreshes every 5 minutes; its /ready reports 503 until a snapshot is loaded. The IAM roles "
            "for service accounts were reorganised this morning. Recorded: Kubernetes, Loki."
        ),
        question="The app's profile page errors out for everyone. What's going on with profile-api?",
        start="2025-05-06T10:00:00Z",
        minutes=40,
    )
    p.service("ingress-nginx", "http", namespace="ingress", depends_on=["profile-api"])
    p.service("profile-api", "http", namespace="accounts", depends_on=["profile-snapshots"])
    p.service("profile-snapshots", "external")
    p.service("avatar-cdn", "external")
    ns = "accounts"
    image = "registry.acme.io/accounts/profile-api:6.2.0"
    phash = suffix("pa", length=10)
    rs = f"profile-api-{phash}"
    probes = {"readinessProbe": http_probe("/ready", 8080, period=5), "livenessProbe": http_probe("/live", 8080)}
    pods = []
    for i in range(3):
        pod = f"{rs}-{suffix(rs, i)}"
        pods.append(pod)
        node = f"ip-10-7-{i + 1}-{90 + i}.eu-west-2.compute.internal"
        p.pod(
            pod,
            ns,
            labels={"app.kubernetes.io/name": "profile-api", "pod-template-hash": phash},
            node=node,
            created=-50000,
            owner=("ReplicaSet", rs),
            ip=f"10.7.{i + 1}.{200 + i}",
            containers=[container("server", image, probes=probes, memory="1Gi", limit_memory="1Gi")],
            statuses=[status(p, "server", image, state=running(p, -50000), ready=False, started=True)],
        )
        p.event(
            3.0 + i * 0.4,
            ns,
            "Pod",
            pod,
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            type="Warning",
            host=node,
            field_path="spec.containers{server}",
            count=440 + i * 3,
            last=39.8,
        )
        lines = []
        for k in range(8):
            m = 2.0 + k * 5 + i * 0.3
            lines.append(
                (
                    m,
                    f"2025-05-06 10:{int(m):02d}:{int(m * 60) % 60:02d}.118 [snapshot-refresh] WARN  "
                    f"c.a.profile.SnapshotLoader - snapshot refresh failed: software.amazon.awssdk.services."
                    f"s3.model.S3Exception: Access Denied (Service: S3, Status Code: 403, Request ID: "
                    f"{suffix('req', i, k, length=16).upper()})",
                )
            )
            lines.append(
                (
                    m + 0.01,
                    f"2025-05-06 10:{int(m):02d}:{int(m * 60) % 60:02d}.120 [snapshot-refresh] INFO  "
                    "c.a.profile.Readiness - not ready: snapshot age 3h12m exceeds max 15m",
                )
            )
        for k in range(6):
            m = 1.0 + k * 6.5
            lines.append(
                (
                    m,
                    f"2025-05-06 10:{int(m):02d}:05.002 [eventLoopGroupProxy-4-2] INFO  Application - 503 "
                    f"Service Unavailable: GET - /ready in {2 + k % 3}ms",
                )
            )
        p.stream({"namespace": ns, "app": "profile-api", "pod": pod, "container": "server"}, lines)
    ing = {
        "namespace": "ingress",
        "app": "ingress-nginx",
        "container": "controller",
        "pod": f"ingress-nginx-controller-{suffix('in', length=10)}-{suffix('in')}",
    }
    p.stream(
        ing,
        [
            (
                1.5 + k * 1.6,
                f"2025/05/06 10:{int(1.5 + k * 1.6):02d}:14 [error] 44#44: *{5512000 + k * 91} no "
                "live upstreams while connecting to upstream, client: 100.64.3.18, server: "
                'api.acme.app, request: "GET /v1/profile/me HTTP/2.0", upstream: '
                '"http://accounts-profile-api-8080/v1/profile/me", host: "api.acme.app"',
            )
            for k in range(24)
        ],
    )
    p.stream(
        ing,
        [
            (
                2.0 + k * 3,
                f'100.64.2.{k + 9} - - [06/May/2025:10:{int(2 + k * 3):02d}:31 +0000] "GET '
                f'/v1/profile/me HTTP/2.0" 503 190 "-" "AcmeApp/7.3 (iOS 18.4)" 31 0.000 '
                "[accounts-profile-api-8080] [] - - - - 6f1e0c",
            )
            for k in range(12)
        ],
    )
    p.stream(
        {"namespace": "accounts", "app": "avatar-proxy", "container": "proxy", "pod": "avatar-proxy-0"},
        [(17.0, "WARN upstream avatar-cdn responded 404 for /avatars/u_88120/256.webp (cache MISS)")],
    )
    p.truth(
        kind="readiness_probe_failure",
        service="profile-api",
        summary=(
            "Every profile-api pod fails its readiness probe (HTTP probe failed with statuscode: 503) because its "
            "snapshot can no longer be refreshed from S3 (Access Denied after this morning's IAM role change) and "
            "/ready refuses a snapshot older than 15 minutes; with no ready pod the Service has no endpoints and "
            "ingress-nginx answers 503 (no live upstreams). The avatar 404 is unrelated."
        ),
        key_evidence=["Readiness probe failed: HTTP probe failed with statuscode: 503", "Access Denied"],
    )
    return p


def inventory_liveness_kills() -> Pack:
    """Liveness probe timeouts kill the container (exit 137, reason Error, not OOMKilled); a neighbour's old OOM."""
    p = Pack(
        "inventory-liveness-kills",
        title="inventory-svc restarts under load",
        description=(
            "Warehouse namespace. inventory-svc (Spring Boot 3, 1 vCPU) answers stock queries from the pickers' "
            "handhelds. Its liveness probe hits /actuator/health/liveness with a 1 s timeout. Recorded: Kubernetes "
            "objects, events, container logs."
        ),
        question="inventory-svc restarts every few minutes during the morning wave. Why?",
        start="2025-09-16T06:30:00Z",
        minutes=45,
    )
    p.service("picker-gateway", "http", namespace="warehouse", depends_on=["inventory-svc"])
    p.service("inventory-svc", "http", namespace="warehouse", depends_on=["stock-db"])
    p.service("pricing-svc", "http", namespace="warehouse")
    p.service("stock-db", "database", namespace="warehouse")
    ns = "warehouse"
    image = "registry.acme.io/warehouse/inventory-svc:4.11.2"
    ihash = suffix("inv", length=10)
    rs = f"inventory-svc-{ihash}"
    probes = {
        "livenessProbe": http_probe("/actuator/health/liveness", 8081, period=10, timeout=1, failures=3),
        "readinessProbe": http_probe("/actuator/health/readiness", 8081, period=5, timeout=1),
    }
    for i in range(3):
        pod = f"{rs}-{suffix(rs, i)}"
        node = f"aks-wh-40197731-vmss00000{i + 3}"
        ip = f"10.224.0.{60 + i}"
        code = 137 if i != 1 else 143
        p.pod(
            pod,
            ns,
            labels={"app": "inventory-svc", "pod-template-hash": ihash},
            node=node,
            created=-10000,
            owner=("ReplicaSet", rs),
            ip=ip,
            containers=[
                container("app", image, cpu="1", memory="1536Mi", limit_memory="1536Mi", limit_cpu="1", probes=probes)
            ],
            statuses=[
                status(
                    p,
                    "app",
                    image,
                    state=running(p, 40.0 + i),
                    ready=i != 0,
                    restarts=7 - i,
                    last=terminated(p, "Error", code, 29.0 + i, 39.9 + i, cid=pod),
                )
            ],
        )
        field = "spec.containers{app}"
        events = p.events_of(ns, "Pod", pod, host=node, field_path=field)
        events(
            9.0 + i,
            "Unhealthy",
            f'Liveness probe failed: Get "http://{ip}:8081/actuator/health/liveness": context deadline exceeded '
            "(Client.Timeout exceeded while awaiting headers)",
            type="Warning",
            count=21 - i * 3,
            last=39.5 + i,
        )
        events(
            9.1 + i,
            "Unhealthy",
            f'Readiness probe failed: Get "http://{ip}:8081/actuator/health/readiness": context deadline '
            "exceeded (Client.Timeout exceeded while awaiting headers)",
            type="Warning",
            count=44 - i * 5,
            last=39.6 + i,
        )
        events(9.5 + i, "Killing", "Container app failed liveness probe, will be restarted", count=7 - i, last=39.7 + i)
        events(9.6 + i, "Pulled", f'Container image "{image}" already present on machine', count=7 - i, last=39.9 + i)
        events(9.61 + i, "Started", "Started container app", count=7 - i, last=39.91 + i)
        lines = []
        for k in range(30):
            m = 1.0 + k * 1.4 + i * 0.2
            busy = 198 + min(k * 2, 2) if m > 8 else 40 + k
            lines.append(
                (
                    m,
                    f"{p.clock(m)}  INFO 1 "
                    f"--- [inventory-svc] [nio-8080-exec-{(k * 7) % 200 + 1}] c.a.inv.StockController : "
                    f"GET /v2/stock/bin/{1000 + k * 13} 200 in {90 + (k % 9) * 140 if m > 8 else 40 + k}ms",
                )
            )
            if m > 8 and k % 3 == 0:
                lines.append(
                    (
                        m + 0.05,
                        f"{p.clock(m + 0.05)}  WARN 1 --- "
                        "[inventory-svc] [           main] o.a.tomcat.util.threads.ThreadPoolExecutor "
                        f": Thread pool saturated: active={busy}, max=200, queue={310 + k * 11}",
                    )
                )
        lines.append(
            (
                39.8 + i,
                f"{p.clock(39.8 + i)}  INFO 1 --- [inventory-svc] [ionShutdownHook] "
                "o.s.b.w.e.tomcat.GracefulShutdown : Commencing graceful shutdown. Waiting for active "
                "requests to complete",
            )
        )
        p.stream({"namespace": ns, "app": "inventory-svc", "pod": pod, "container": "app"}, lines)
    # Red herring: pricing-svc was OOMKilled two days ago (fixed by a limit bump since).
    ph = suffix("ps", length=10)
    ppod = f"pricing-svc-{ph}-{suffix('ps')}"
    healthy_pod(
        p,
        name=ppod,
        namespace=ns,
        app="pricing-svc",
        rs=f"pricing-svc-{ph}",
        template_hash=ph,
        node="aks-wh-40197731-vmss000004",
        container_name="pricing",
        image="registry.acme.io/warehouse/pricing-svc:2.0.7",
        created=-3100,
        ip="10.224.0.88",
        restarts=1,
        last=terminated(p, "OOMKilled", 137, -3100, -2950, cid=ppod),
        labels={"app": "pricing-svc"},
    )
    p.stream(
        {"namespace": ns, "app": "stock-db", "pod": "stock-db-0", "container": "postgres"},
        [
            (
                m,
                f"2025-09-16 06:{30 + m:02d}:00.112 UTC [72] LOG:  checkpoint complete: wrote {900 + m * 11} "
                "buffers (5.5%)",
            )
            for m in range(0, 45, 10)
        ],
    )
    p.truth(
        kind="liveness_probe_failure",
        service="inventory-svc",
        summary=(
            "During the morning wave inventory-svc's 200 Tomcat threads saturate, the liveness endpoint (served by "
            "the same pool) misses its 1 s timeout three times and the kubelet kills the container ('Container app "
            "failed liveness probe, will be restarted'; exit 137/143, reason Error, not OOMKilled), which sheds more "
            "load onto the other pods. pricing-svc's OOMKilled is two days old."
        ),
        key_evidence=["Container app failed liveness probe, will be restarted", "Liveness probe failed"],
    )
    return p


def keycloak_startup_loop() -> Pack:
    """A startup probe that kills a slow schema migration, which then waits on its own stale changelog lock."""
    p = Pack(
        "keycloak-startup-loop",
        title="Logins failing after the Keycloak upgrade",
        description=(
            "Identity namespace. keycloak (StatefulSet, 2 replicas) was upgraded from 24 to 26 this morning; its "
            "startup probe allows 30 x 10 s. auth-gateway validates tokens against it. Recorded: Pods, events, logs."
        ),
        question="Nobody can log in since the Keycloak upgrade. Why does keycloak keep restarting?",
        start="2025-04-22T06:00:00Z",
        minutes=60,
    )
    p.service("auth-gateway", "http", namespace="identity", depends_on=["keycloak"])
    p.service("keycloak", "http", namespace="identity", depends_on=["keycloak-db"])
    p.service("keycloak-db", "database", namespace="identity")
    ns = "identity"
    image = "quay.io/keycloak/keycloak:26.0.7"
    probes = {
        "startupProbe": http_probe("/health/started", 9000, period=10, failures=30),
        "readinessProbe": http_probe("/health/ready", 9000, period=10),
    }
    for i in range(2):
        pod = f"keycloak-{i}"
        node = f"node-{i + 4}.k8s.int.acme.eu"
        ip = f"10.233.{70 + i}.{15 + i * 8}"
        p.pod(
            pod,
            ns,
            labels={"app.kubernetes.io/name": "keycloak", "statefulset.kubernetes.io/pod-name": pod},
            node=node,
            created=2.0 + i * 0.5,
            owner=("StatefulSet", "keycloak"),
            ip=ip,
            containers=[
                container("keycloak", image, cpu="1", memory="2Gi", limit_memory="2Gi", port=8080, probes=probes)
            ],
            statuses=[
                status(
                    p,
                    "keycloak",
                    image,
                    state=running(p, 51.0 + i),
                    ready=False,
                    started=False,
                    restarts=8 - i,
                    last=terminated(p, "Error", 143, 45.8 + i, 50.9 + i, cid=pod),
                )
            ],
        )
        field = "spec.containers{keycloak}"
        events = p.events_of(ns, "Pod", pod, host=node, field_path=field)
        events(
            7.2 + i,
            "Unhealthy",
            f'Startup probe failed: Get "http://{ip}:9000/health/started": dial tcp {ip}:9000: connect: '
            "connection refused",
            type="Warning",
            count=240 - i * 30,
            last=59.0,
        )
        events(
            7.3 + i, "Killing", "Container keycloak failed startup probe, will be restarted", count=8 - i, last=50.9 + i
        )
        lines = []
        for cycle in range(8 - i):
            base = 2.1 + cycle * 5.6 + i * 0.5
            lines += [
                (
                    base,
                    f"2025-04-22 06:{int(base):02d}:03,112 INFO  [org.keycloak.quarkus.runtime.hostname."
                    "DefaultHostnameProvider] (main) Hostname settings: Base URL: <unset>, Hostname: "
                    "sso.acme.eu, Strict HTTPS: true",
                ),
                (
                    base + 0.2,
                    f"2025-04-22 06:{int(base):02d}:15,804 INFO  [org.keycloak.quarkus.runtime.storage."
                    "database.liquibase.QuarkusJpaUpdaterProvider] (main) Updating database. Using changelog "
                    "META-INF/jpa-changelog-master.xml",
                ),
            ]
            if cycle == 0 and i == 0:
                lines.append(
                    (
                        base + 2.0,
                        "2025-04-22 06:04:10,004 INFO  [org.keycloak.connections.jpa.updater."
                        "liquibase.conn.DefaultLiquibaseConnectionProvider] (main) Applying "
                        "changeset 26.0.0-61 (jpa-changelog-26.0.0.xml): migrating 2,913,004 "
                        "offline sessions",
                    )
                )
            else:
                lines.append(
                    (
                        base + 0.5,
                        f"2025-04-22 06:{int(base + 0.5):02d}:44,330 INFO  [liquibase.lockservice] "
                        "(main) Waiting for changelog lock....",
                    )
                )
                lines.append(
                    (
                        base + 4.9,
                        f"2025-04-22 06:{int(base + 4.9):02d}:50,901 INFO  [liquibase.lockservice] "
                        "(main) Waiting for changelog lock....",
                    )
                )
            lines.append(
                (
                    base + 5.0,
                    f"2025-04-22 06:{int(base + 5.0):02d}:58,003 INFO  [io.quarkus] (Shutdown "
                    "thread) Keycloak stopped in 0.118s",
                )
            )
        p.pod_log(ns, pod, [line for _, line in lines[-5:]], container="keycloak", previous=True)
        p.stream({"namespace": ns, "app": "keycloak", "pod": pod, "container": "keycloak"}, lines)
    gw = {
        "namespace": ns,
        "app": "auth-gateway",
        "container": "gateway",
        "pod": f"auth-gateway-{suffix('ag', length=10)}-{suffix('ag')}",
    }
    p.stream(
        gw,
        [
            (
                3 + k * 2.1,
                f'{{"level":"error","ts":"2025-04-22T06:{int(3 + k * 2.1):02d}:11Z","msg":"jwks '
                f'refresh failed","url":"http://keycloak.identity.svc:8080/realms/acme/protocol/'
                f'openid-connect/certs","error":"503 Service Unavailable"}}',
            )
            for k in range(26)
        ],
    )
    p.stream(
        {"namespace": ns, "app": "keycloak-db", "pod": "keycloak-db-0", "container": "postgres"},
        [
            (
                5.0,
                "2025-04-22 06:05:00.014 UTC [4412] LOG:  duration: 58211.442 ms  statement: UPDATE "
                "OFFLINE_CLIENT_SESSION SET VERSION = 1 WHERE ...",
            ),
            (6.0, "2025-04-22 06:06:00.771 UTC [4412] LOG:  could not send data to client: Broken pipe"),
            (6.01, "2025-04-22 06:06:00.771 UTC [4412] FATAL:  connection to client lost"),
        ],
    )
    p.truth(
        kind="startup_probe_failure",
        service="keycloak",
        summary=(
            "The Keycloak 26 upgrade runs a long Liquibase migration (2.9M offline sessions); the startup probe "
            "(30 x 10 s) kills the container before it finishes ('Container keycloak failed startup probe, will be "
            "restarted'), leaving the Liquibase changelog lock held, so every later start waits on the lock "
            "('Waiting for changelog lock....') until the probe kills it again. auth-gateway's JWKS errors are the "
            "symptom."
        ),
        key_evidence=["Container keycloak failed startup probe, will be restarted", "Waiting for changelog lock"],
    )
    return p


def cart_worker_evictions() -> Pack:
    """Node memory pressure evicts the pod that uses far more than it requested, then a bystander."""
    p = Pack(
        "cart-worker-evictions",
        title="Pods evicted on ip-10-0-33-71",
        description=(
            "Shop namespace. cart-worker (Python) recomputes abandoned-cart reminders in a nightly-ish loop; "
            "recommendations-api serves suggestions. Both run on a general-purpose node group. Recorded: built-in "
            "events and metrics, raw Pods and node events."
        ),
        question="Why do cart-worker pods keep getting evicted?",
        start="2025-06-30T01:00:00Z",
        minutes=50,
    )
    p.service("cart-worker", "worker", namespace="shop", depends_on=["carts-db"])
    p.service("recommendations-api", "http", namespace="shop")
    p.service("carts-db", "database", namespace="shop")
    ns = "shop"
    node = "ip-10-0-33-71.ec2.internal"
    image = "registry.acme.io/shop/cart-worker:1.8.0"
    chash = suffix("cw", length=10)
    evicted = []
    for k, m in enumerate([11.0, 24.5, 38.0]):
        pod = f"cart-worker-{chash}-{suffix('cw', k)}"
        evicted.append(pod)
        message = (
            f"The node was low on resource: memory. Threshold quantity: 100Mi, available: {94844 - k * 1211}Ki. "
            f"Container worker was using {2964212 + k * 18420}Ki, request is 256Mi, has larger consumption of memory. "
        )
        p.pod(
            pod,
            ns,
            labels={"app": "cart-worker", "pod-template-hash": chash},
            node=node,
            created=m - 12,
            owner=("ReplicaSet", f"cart-worker-{chash}"),
            phase="Failed",
            reason="Evicted",
            message=message,
            containers=[container("worker", image, memory="256Mi", limit_memory=None, port=None)],
            statuses=[
                status(
                    p,
                    "worker",
                    image,
                    ready=False,
                    state=terminated(
                        p,
                        "ContainerStatusUnknown",
                        137,
                        m - 11.9,
                        m,
                        message="The container could not be located when the pod was terminated",
                        cid=pod,
                    ),
                )
            ],
            conditions=[
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "TerminationByKubelet",
                    "message": "The node was low on resource: memory. ",
                    "lastTransitionTime": p.ts(m),
                }
            ],
        )
        events = p.events_of(ns, "Pod", pod, host=node)
        events(m, "Evicted", message, type="Warning")
        events(m + 0.01, "Killing", "Stopping container worker", field_path="spec.containers{worker}")
        p.k8s_event(
            m + 0.2,
            ns,
            "Pod",
            f"cart-worker-{chash}-{suffix('cw', k + 10)}",
            "Scheduled",
            f"Successfully assigned shop/cart-worker-{chash}-{suffix('cw', k + 10)} to {node}",
            service="cart-worker",
        )
    events = p.events_of("default", "Node", node, host=node)
    events(10.8, "EvictionThresholdMet", "Attempting to reclaim memory", type="Warning", count=3, last=37.8)
    events(
        10.7, "NodeHasInsufficientMemory", f"Node {node} status is now: NodeHasInsufficientMemory", count=3, last=37.7
    )
    events(12.5, "NodeHasSufficientMemory", f"Node {node} status is now: NodeHasSufficientMemory", count=3, last=39.5)
    # The bystander: recommendations-api evicted once too, slightly over its own request.
    rhash = suffix("ra2", length=10)
    rpod = f"recommendations-api-{rhash}-{suffix('ra2')}"
    rmsg = (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 71220Ki. Container api was "
        "using 402112Ki, request is 384Mi, has larger consumption of memory. "
    )
    p.pod(
        rpod,
        ns,
        labels={"app": "recommendations-api", "pod-template-hash": rhash},
        node=node,
        created=-5000,
        owner=("ReplicaSet", f"recommendations-api-{rhash}"),
        phase="Failed",
        reason="Evicted",
        message=rmsg,
        containers=[container("api", "registry.acme.io/shop/recommendations-api:3.3.1", memory="384Mi")],
        statuses=[
            status(
                p,
                "api",
                "registry.acme.io/shop/recommendations-api:3.3.1",
                ready=False,
                state=terminated(p, "Error", 137, -5000, 24.9, cid=rpod),
            )
        ],
    )
    p.k8s_event(24.9, ns, "Pod", rpod, "Evicted", rmsg, type="Warning", service="recommendations-api")
    p.metric(
        "container_memory_working_set_bytes",
        "cart-worker",
        "bytes",
        [min(3.05e9, 2.6e8 + ((m - 0) % 13.5) * 2.2e8) for m in range(50)],
        labels={"container": "worker"},
    )
    p.metric(
        "container_memory_working_set_bytes",
        "recommendations-api",
        "bytes",
        [3.9e8 + (m % 4) * 2e6 for m in range(50)],
        labels={"container": "api"},
    )
    p.metric(
        "node_memory_MemAvailable_bytes",
        "cart-worker",
        "bytes",
        [max(9.1e7, 3.4e9 - ((m % 13.5) * 2.4e8)) for m in range(50)],
        labels={"node": node},
    )
    for m in range(0, 50, 4):
        p.log(
            m + 0.5,
            "cart-worker",
            "INFO",
            f"2025-06-30 01:{m:02d}:30 INFO reminders: loaded {120_000 + m * 9_500} "
            "abandoned carts into memory for scoring",
        )
    p.log(5.0, "recommendations-api", "WARN", "WARN model cache refresh took 2.3s (over 2s budget)")
    p.truth(
        kind="eviction_memory",
        service="cart-worker",
        summary=(
            "cart-worker requests 256Mi but loads every abandoned cart into memory and grows to ~2.9Gi with no "
            "limit; the node runs below its 100Mi memory.available threshold and the kubelet evicts the pod that "
            "exceeds its request the most ('Container worker was using 2964212Ki, request is 256Mi'), repeatedly, "
            "as each replacement lands on the same node. recommendations-api's one eviction is collateral."
        ),
        key_evidence=["The node was low on resource: memory", "Container worker was using 2964212Ki, request is 256Mi"],
    )
    return p


def thumbnailer_evicted() -> Pack:
    """Ephemeral storage over the pod's limit: 'Pod ephemeral local storage usage exceeds the total limit'."""
    p = Pack(
        "thumbnailer-evicted",
        title="Thumbnails missing for new uploads",
        description=(
            "Media namespace. thumbnailer (Go + libvips) renders previews of uploaded videos into /tmp before "
            "uploading them; each container has an ephemeral-storage limit of 2Gi. Recorded: Pods, events, Loki."
        ),
        question="New uploads have no thumbnails and thumbnailer pods keep disappearing. Why?",
        start="2025-08-05T12:00:00Z",
        minutes=40,
    )
    p.service("upload-api", "http", namespace="media", depends_on=["thumbnailer", "media-bucket"])
    p.service("thumbnailer", "worker", namespace="media", depends_on=["media-bucket"])
    p.service("media-bucket", "external")
    ns = "media"
    image = "registry.acme.io/media/thumbnailer:0.31.0"
    th = suffix("th", length=10)
    for k, m in enumerate([8.0, 15.2, 22.9, 31.5]):
        pod = f"thumbnailer-{th}-{suffix('th', k)}"
        node = f"gke-media-pool-1-5d2a9c1e-{suffix('nd', k % 2, length=4)}"
        msg = "Pod ephemeral local storage usage exceeds the total limit of containers 2Gi. "
        p.pod(
            pod,
            ns,
            labels={"app.kubernetes.io/name": "thumbnailer", "pod-template-hash": th},
            node=node,
            created=m - 7.5,
            owner=("ReplicaSet", f"thumbnailer-{th}"),
            phase="Failed",
            reason="Evicted",
            message=msg,
            containers=[
                {
                    **container("render", image, port=None),
                    "resources": {
                        "requests": {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi"},
                        "limits": {"memory": "2Gi", "ephemeral-storage": "2Gi"},
                    },
                }
            ],
            statuses=[status(p, "render", image, ready=False, state=terminated(p, "Error", 137, m - 7.4, m, cid=pod))],
        )
        events = p.events_of(ns, "Pod", pod, host=node)
        events(m, "Evicted", msg, type="Warning")
        events(m + 0.01, "Killing", "Stopping container render", field_path="spec.containers{render}")
        lines = [(m - 7.3, f'{{"level":"info","msg":"worker started","tmpdir":"/tmp","pod":"{pod}"}}')]
        for j in range(6):
            t = m - 7.0 + j * 1.1
            lines.append(
                (
                    t,
                    f'{{"level":"info","msg":"rendering preview","upload":"upl_{suffix("u", k, j, length=10)}"'
                    f',"source_bytes":{380_000_000 + j * 41_000_000},"frames":240,"tmp":"/tmp/render-'
                    f'{suffix("r", k, j, length=8)}"}}',
                )
            )
            lines.append(
                (
                    t + 0.9,
                    f'{{"level":"warn","msg":"cleanup skipped: file busy","path":"/tmp/render-'
                    f'{suffix("r", k, j, length=8)}/frames"}}',
                )
            )
        p.stream({"namespace": ns, "app": "thumbnailer", "pod": pod, "container": "render"}, lines)
    live = f"thumbnailer-{th}-{suffix('th', 9)}"
    p.pod(
        live,
        ns,
        labels={"app.kubernetes.io/name": "thumbnailer", "pod-template-hash": th},
        node="gke-media-pool-1-5d2a9c1e-q9zx",
        created=31.6,
        owner=("ReplicaSet", f"thumbnailer-{th}"),
        ip="10.96.3.44",
        containers=[container("render", image, port=None)],
        statuses=[status(p, "render", image, state=running(p, 31.7))],
    )
    p.stream(
        {
            "namespace": ns,
            "app": "upload-api",
            "container": "api",
            "pod": f"upload-api-{suffix('ua', length=10)}-{suffix('ua')}",
        },
        [
            (
                2 + k * 1.7,
                f'{{"level":"info","msg":"upload accepted","bytes":{200_000_000 + k * 9_000_000},'
                f'"duration_ms":{900 + k * 40}}}',
            )
            for k in range(22)
        ]
        + [(18.0, '{"level":"warn","msg":"multipart upload slow part","part":7,"duration_ms":4120}')],
    )
    p.truth(
        kind="eviction_ephemeral_storage",
        service="thumbnailer",
        summary=(
            "thumbnailer leaves each render's frames in /tmp (its cleanup skips files still open), so a pod's "
            "ephemeral storage grows past the 2Gi limit within minutes and the kubelet evicts it ('Pod ephemeral "
            "local storage usage exceeds the total limit of containers 2Gi'); the in-flight previews are lost. "
            "upload-api's slow multipart part is unrelated."
        ),
        key_evidence=["Pod ephemeral local storage usage exceeds the total limit of containers 2Gi"],
    )
    return p


def orders_evicted_disk_pressure() -> Pack:
    """DiskPressure on one node: a DaemonSet's hostPath buffer fills the disk; other pods are evicted, never it."""
    p = Pack(
        "orders-evicted-disk-pressure",
        title="orders-api pods evicted on one node",
        description=(
            "Orders namespace; logging namespace runs log-shipper (Fluent Bit DaemonSet, filesystem buffering "
            "under hostPath /var/lib/fluent-bit) shipping to logging-es. Recorded: Kubernetes, Prometheus "
            "(node-exporter), Loki."
        ),
        question="Why do orders-api pods keep getting evicted from ip-10-1-7-22?",
        start="2025-05-12T03:00:00Z",
        minutes=50,
    )
    p.service("orders-api", "http", namespace="orders", depends_on=["orders-db"])
    p.service("orders-db", "database", namespace="orders")
    p.service("log-shipper", "worker", namespace="logging", depends_on=["logging-es"])
    p.service("logging-es", "database", namespace="logging")
    p.service("payments-api", "http", namespace="payments")
    node = "ip-10-1-7-22.eu-west-1.compute.internal"
    image = "registry.acme.io/orders/orders-api:12.4.0"
    oh = suffix("oa", length=10)
    for k, m in enumerate([14.0, 19.5, 27.0, 36.5]):
        pod = f"orders-api-{oh}-{suffix('oa', k)}"
        msg = (
            f"The node was low on resource: ephemeral-storage. Threshold quantity: 10737418240, available: "
            f"{10413212 - k * 90112}Ki. Container api was using {88 + k * 4}Ki, request is 0, has larger consumption "
            "of ephemeral-storage. "
        )
        p.pod(
            pod,
            "orders",
            labels={"app": "orders-api", "pod-template-hash": oh},
            node=node,
            created=m - 6,
            owner=("ReplicaSet", f"orders-api-{oh}"),
            phase="Failed",
            reason="Evicted",
            message=msg,
            containers=[container("api", image)],
            statuses=[status(p, "api", image, ready=False, state=terminated(p, "Error", 143, m - 5.9, m, cid=pod))],
        )
        events = p.events_of("orders", "Pod", pod, host=node)
        events(m, "Evicted", msg, type="Warning")
        events(m + 0.01, "Killing", "Stopping container api", field_path="spec.containers{api}")
    events = p.events_of("default", "Node", node, host=node)
    events(13.0, "NodeHasDiskPressure", f"Node {node} status is now: NodeHasDiskPressure")
    events(13.2, "EvictionThresholdMet", "Attempting to reclaim ephemeral-storage", type="Warning", count=6, last=44.0)
    events(
        13.5,
        "FreeDiskSpaceFailed",
        "Failed to garbage collect required amount of images. Attempted to free 6442450944 bytes, but only found "
        "0 bytes eligible to free.",
        type="Warning",
        count=8,
        last=43.5,
    )
    p.event(
        20.0,
        "orders",
        "Pod",
        f"orders-api-{oh}-{suffix('oa', 20)}",
        "FailedScheduling",
        "0/6 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }, 5 "
        "Insufficient cpu. preemption: 0/6 nodes are available: 1 Preemption is not helpful for scheduling, 5 No "
        "preemption victims found for incoming pod.",
        type="Warning",
        component="default-scheduler",
        new_api=True,
        count=3,
        last=21.0,
    )
    fb = f"log-shipper-{suffix('ls', length=5)}"
    p.pod(
        fb,
        "logging",
        labels={
            "app.kubernetes.io/name": "log-shipper",
            "controller-revision-hash": suffix("ls-rev", length=10),
            "pod-template-generation": "9",
        },
        node=node,
        created=-60000,
        owner=("DaemonSet", "log-shipper"),
        ip=node_ip(node),
        qos="Burstable",
        containers=[
            container(
                "fluent-bit",
                "cr.fluentbit.io/fluent/fluent-bit:3.1.9",
                port=2020,
                memory="64Mi",
                limit_memory="256Mi",
                mounts=[
                    {"name": "buffer", "mountPath": "/var/lib/fluent-bit"},
                    {"name": "varlog", "mountPath": "/var/log", "readOnly": True},
                ],
            )
        ],
        volumes=[
            {"name": "buffer", "hostPath": {"path": "/var/lib/fluent-bit", "type": "DirectoryOrCreate"}},
            {"name": "varlog", "hostPath": {"path": "/var/log", "type": ""}},
        ],
        statuses=[status(p, "fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:3.1.9", state=running(p, -60000))],
    )
    lines = []
    for k in range(40):
        m = 0.5 + k * 1.2
        ts = f"[2025/05/12 03:{int(m):02d}:{int(m * 60) % 60:02d}]"
        chunk = f"1-{1747018800 + k * 72}.{118273112 + k * 991}.flb"
        lines.append(
            (
                m,
                f"{ts} [error] [output:es:es.0] HTTP status=429 URI=/_bulk, response: "
                '{"error":{"root_cause":[{"type":"es_rejected_execution_exception","reason":"rejected '
                "execution of coordinating operation [coordinating_and_primary_bytes=1073741824, "
                'max_coordinating_and_primary_bytes=1073741824]"}]},"status":429}',
            )
        )
        lines.append(
            (
                m + 0.01,
                f"{ts} [ warn] [engine] failed to flush chunk '{chunk}', retry in {7 + k % 9} "
                f"seconds: task_id={k % 512}, input=tail.0 > output=es.0 (out_id=0)",
            )
        )
        if k > 30:
            lines.append(
                (m + 0.02, f"{ts} [error] [storage] [cio file] error writing to file: No space left on device")
            )
    p.stream({"namespace": "logging", "app": "log-shipper", "pod": fb, "container": "fluent-bit"}, lines)
    p.series(
        {
            "__name__": "node_filesystem_avail_bytes",
            "instance": node,
            "job": "node-exporter",
            "mountpoint": "/",
            "device": "/dev/nvme0n1p1",
            "fstype": "xfs",
        },
        [max(2.9e9, 3.1e10 - m * 6.1e8) for m in range(50)],
    )
    p.series(
        {
            "__name__": "node_filesystem_size_bytes",
            "instance": node,
            "job": "node-exporter",
            "mountpoint": "/",
            "device": "/dev/nvme0n1p1",
            "fstype": "xfs",
        },
        [107374182400] * 50,
    )
    p.series(
        {"__name__": "fluentbit_storage_fs_chunks", "pod": fb, "namespace": "logging", "job": "log-shipper"},
        [8_000 + m * 1_310 for m in range(50)],
    )
    p.series(
        {
            "__name__": "elasticsearch_thread_pool_rejected_count",
            "cluster": "logging-es",
            "type": "write",
            "name": "logging-es-hot-1",
        },
        [401_000 + m * 2_200 for m in range(50)],
    )
    p.stream(
        {
            "namespace": "payments",
            "app": "payments-api",
            "container": "api",
            "pod": f"payments-api-{suffix('pa2', length=10)}-{suffix('pa2')}",
        },
        [(22.0, '{"level":"warn","msg":"3DS challenge timeout, retrying","psp":"adyen"}')],
    )
    p.truth(
        kind="disk_pressure",
        service="log-shipper",
        summary=(
            "logging-es rejects bulk writes (429), so log-shipper (Fluent Bit) buffers chunks under hostPath "
            "/var/lib/fluent-bit with no storage.total_limit_size and fills ip-10-1-7-22's root disk. The node "
            "reports DiskPressure and the kubelet evicts pods by their own ephemeral usage (orders-api: 88Ki), "
            "never the DaemonSet whose hostPath usage is not counted; image GC finds nothing to free. orders-api is "
            "the victim; the payments 3DS retry is unrelated."
        ),
        key_evidence=[
            "NodeHasDiskPressure",
            "No space left on device",
            "The node was low on resource: ephemeral-storage",
        ],
        ambiguous=True,
    )
    return p


PACKS = [
    profile_api_503,
    inventory_liveness_kills,
    keycloak_startup_loop,
    cart_worker_evictions,
    thumbnailer_evicted,
    orders_evicted_disk_pressure,
]
