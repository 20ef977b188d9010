"""Crash loops and the line that precedes them: missing config, a missing executable, syntax errors, a Go panic."""

from __future__ import annotations

from tests.incidents.corpus.kit import (
    Pack,
    backoff_event_message,
    container,
    crashloop_message,
    healthy_pod,
    running,
    status,
    suffix,
    terminated,
    waiting,
)


def _rollout(
    p: Pack,
    *,
    deployment: str,
    namespace: str,
    selector: dict[str, str],
    container_name: str,
    old_image: str,
    new_image: str,
    old_revision: int,
    old_created: float,
    new_created: float,
    replicas: int,
    new_ready: int,
    old_replicas: int,
) -> tuple[str, str]:
    """A Deployment mid-rollout: its old ReplicaSet still serving, its new one not becoming ready."""
    old_hash, new_hash = suffix(deployment, "old", length=10), suffix(deployment, "new", length=10)
    p.deployment(
        deployment,
        namespace,
        selector=selector,
        replicas=replicas,
        revision=old_revision + 1,
        image=new_image,
        container=container_name,
        created=-90000,
        ready=old_replicas + new_ready,
        updated=replicas - old_replicas,
        conditions=[
            {
                "type": "Available",
                "status": "True",
                "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
                "lastUpdateTime": p.ts(-90000),
                "lastTransitionTime": p.ts(-90000),
            },
            {
                "type": "Progressing",
                "status": "True",
                "reason": "ReplicaSetUpdated",
                "message": f'ReplicaSet "{deployment}-{new_hash}" is progressing.',
                "lastUpdateTime": p.ts(new_created),
                "lastTransitionTime": p.ts(new_created),
            },
        ],
    )
    old_rs = p.replicaset(
        deployment,
        namespace,
        old_hash,
        selector=selector,
        revision=old_revision,
        image=old_image,
        container=container_name,
        created=old_created,
        replicas=old_replicas,
    )
    new_rs = p.replicaset(
        deployment,
        namespace,
        new_hash,
        selector=selector,
        revision=old_revision + 1,
        image=new_image,
        container=container_name,
        created=new_created,
        replicas=replicas - old_replicas,
        ready=new_ready,
    )
    events = p.events_of(namespace, "Deployment", deployment, component="deployment-controller")
    events(new_created, "ScalingReplicaSet", f"Scaled up replica set {new_rs} to {replicas - old_replicas} from 0")
    events(
        new_created + 0.01, "ScalingReplicaSet", f"Scaled down replica set {old_rs} to {old_replicas} from {replicas}"
    )
    p.event(
        new_created + 0.005,
        namespace,
        "ReplicaSet",
        new_rs,
        "SuccessfulCreate",
        f"Created pod: {new_rs}-{suffix(new_rs, 0)}",
        component="replicaset-controller",
    )
    return old_rs, new_rs


def notifier_rollout_stuck() -> Pack:
    """A missing environment variable: the new ReplicaSet crash-loops, the old one still serves. Kubernetes only."""
    p = Pack(
        "notifier-rollout-stuck",
        title="notification-dispatcher rollout not finishing",
        description=(
            "Messaging namespace. notification-dispatcher (Go) sends transactional email through an SMTP relay "
            "and push through a vendor. A Helm upgrade started 20 minutes ago. Recorded with kubectl."
        ),
        question="The notifier rollout has been stuck for 20 minutes. Why won't the new pods come up?",
        start="2025-06-17T14:00:00Z",
        minutes=40,
    )
    p.service("notification-dispatcher", "worker", namespace="messaging", depends_on=["smtp-relay"])
    p.service("smtp-relay", "external")
    p.service("push-gateway", "http", namespace="messaging")
    ns = "messaging"
    sel = {"app.kubernetes.io/name": "notification-dispatcher", "app.kubernetes.io/instance": "notifier"}
    old_image = "ghcr.io/acme/notification-dispatcher:2.14.3"
    new_image = "ghcr.io/acme/notification-dispatcher:2.15.0"
    old_rs, new_rs = _rollout(
        p,
        deployment="notification-dispatcher",
        namespace=ns,
        selector=sel,
        container_name="app",
        old_image=old_image,
        new_image=new_image,
        old_revision=18,
        old_created=-4320 * 3,
        new_created=18.0,
        replicas=4,
        new_ready=0,
        old_replicas=3,
    )
    nodes = ["aks-system-31442021-vmss000004", "aks-apps-31442021-vmss00000b", "aks-apps-31442021-vmss00000c"]
    old_hash, new_hash = old_rs.rsplit("-", 1)[1], new_rs.rsplit("-", 1)[1]
    for i in range(3):
        healthy_pod(
            p,
            name=f"{old_rs}-{suffix(old_rs, i)}",
            namespace=ns,
            app="notification-dispatcher",
            rs=old_rs,
            template_hash=old_hash,
            node=nodes[i],
            container_name="app",
            image=old_image,
            created=-4320 * 3 + i,
            ip=f"10.244.{3 + i}.{17 + i * 9}",
            extra_labels={"app.kubernetes.io/instance": "notifier"},
        )
    bad = f"{new_rs}-{suffix(new_rs, 0)}"
    p.pod(
        bad,
        ns,
        labels={**sel, "pod-template-hash": new_hash},
        node=nodes[1],
        created=18.0,
        owner=("ReplicaSet", new_rs),
        ip="10.244.4.61",
        containers=[
            container(
                "app",
                new_image,
                env=[
                    {"name": "SMTP_PORT", "value": "587"},
                    {"name": "PUSH_GATEWAY_URL", "value": "http://push-gateway.messaging.svc:8080"},
                    {"name": "LOG_LEVEL", "value": "info"},
                ],
                env_from=[{"configMapRef": {"name": "notifier-env"}}],
            )
        ],
        statuses=[
            status(
                p,
                "app",
                new_image,
                state=waiting("CrashLoopBackOff", crashloop_message("app", bad, ns, p)),
                ready=False,
                restarts=6,
                last=terminated(p, "Error", 1, 36.2, 36.21, cid=bad),
            )
        ],
    )
    field = "spec.containers{app}"
    p.scheduled(18.0, ns, bad, nodes[1])
    events = p.events_of(ns, "Pod", bad, host=nodes[1], field_path=field)
    events(18.02, "Pulling", f'Pulling image "{new_image}"')
    events(
        18.1,
        "Pulled",
        f'Successfully pulled image "{new_image}" in 4.126s (4.126s including waiting). Image size: 21754368 bytes.',
    )
    events(18.11, "Created", "Created container app", count=7, last=36.2)
    events(18.12, "Started", "Started container app", count=7, last=36.2)
    events(18.4, "Pulled", f'Container image "{new_image}" already present on machine', count=6, last=36.2)
    events(18.5, "BackOff", backoff_event_message("app", bad, ns, p), type="Warning", count=88, last=39.6)
    lines = [
        '{"level":"info","ts":1750170960.1182,"caller":"cmd/dispatcher/main.go:39","msg":"starting '
        'notification-dispatcher","version":"2.15.0","commit":"9f1c2ab"}',
        '{"level":"info","ts":1750170960.1191,"caller":"internal/config/load.go:22","msg":"loading configuration '
        'from environment","prefix":"NOTIFIER"}',
        '{"level":"fatal","ts":1750170960.1194,"caller":"cmd/dispatcher/main.go:44","msg":"invalid configuration",'
        '"error":"required key SMTP_RELAY_HOST missing value"}',
    ]
    p.pod_log(ns, bad, lines, container="app", previous=True)
    p.pod_log(ns, bad, lines[:2], container="app")
    # Noise: an HPA elsewhere that cannot read metrics (it never could: metrics-server is not installed there).
    p.event(
        2.0,
        ns,
        "HorizontalPodAutoscaler",
        "push-gateway",
        "FailedGetResourceMetric",
        "failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from "
        "resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)",
        type="Warning",
        component="horizontal-pod-autoscaler",
        count=480,
        last=39.0,
        api_version="autoscaling/v2",
    )
    pg_hash = suffix("pg", length=9)
    healthy_pod(
        p,
        name=f"push-gateway-{pg_hash}-{suffix('pg-pod')}",
        namespace=ns,
        app="push-gateway",
        rs=f"push-gateway-{pg_hash}",
        template_hash=pg_hash,
        node=nodes[2],
        container_name="gateway",
        image="ghcr.io/acme/push-gateway:1.9.0",
        created=-30000,
        ip="10.244.5.12",
    )
    p.truth(
        kind="crash_loop_missing_config",
        service="notification-dispatcher",
        summary=(
            "Release 2.15.0 of notification-dispatcher requires SMTP_RELAY_HOST, which the notifier-env ConfigMap "
            "does not set: the new pod exits 1 at start-up ('required key SMTP_RELAY_HOST missing value') and sits "
            "in CrashLoopBackOff, so the rollout never progresses while the three old pods keep serving. The "
            "push-gateway HPA warning is long-standing noise."
        ),
        key_evidence=["required key SMTP_RELAY_HOST missing value", "CrashLoopBackOff"],
    )
    return p


def pricing_api_wont_start() -> Pack:
    """The container never starts: "executable file not found in $PATH" (StartError, exit code 128)."""
    p = Pack(
        "pricing-api-wont-start",
        title="pricing-api 4.0 release: new pods not starting",
        description=(
            "Catalog namespace. pricing-api (Python, gunicorn) serves prices to catalog-web. Release 4.0.0 moved "
            "the image to a distroless base. Recorded: Kubernetes objects and events, the deploy log, catalog-web's "
            "logs."
        ),
        question="pricing-api pods won't come up after the 4.0 release. What's wrong?",
        start="2025-01-22T10:00:00Z",
        minutes=45,
    )
    p.service("catalog-web", "http", namespace="catalog", depends_on=["pricing-api"])
    p.service("pricing-api", "http", namespace="catalog", depends_on=["pricing-db"])
    p.service("pricing-db", "database", namespace="catalog")
    ns = "catalog"
    sel = {"app": "pricing-api"}
    old_image = "registry.acme.io/catalog/pricing-api:3.9.2"
    new_image = "registry.acme.io/catalog/pricing-api:4.0.0"
    old_rs, new_rs = _rollout(
        p,
        deployment="pricing-api",
        namespace=ns,
        selector=sel,
        container_name="web",
        old_image=old_image,
        new_image=new_image,
        old_revision=57,
        old_created=-20000,
        new_created=12.0,
        replicas=4,
        new_ready=0,
        old_replicas=3,
    )
    p.deploy(
        11.5,
        "pricing-api",
        "4.0.0",
        "3.9.2",
        "ci-bot",
        "Distroless base image (gcr.io/distroless/python3); drop shell and build tooling from the runtime image",
    )
    p.deploy(3.0, "catalog-web", "12.8.1", "12.8.0", "m.kowalski", "Copy change on the product page")
    nodes = ["gke-prod-pool-2-8c1d2e3f-x7q1", "gke-prod-pool-2-8c1d2e3f-m2n8", "gke-prod-pool-2-8c1d2e3f-b4k9"]
    old_hash, new_hash = old_rs.rsplit("-", 1)[1], new_rs.rsplit("-", 1)[1]
    for i in range(3):
        healthy_pod(
            p,
            name=f"{old_rs}-{suffix(old_rs, i)}",
            namespace=ns,
            app="pricing-api",
            rs=old_rs,
            template_hash=old_hash,
            node=nodes[i],
            container_name="web",
            image=old_image,
            created=-20000,
            ip=f"10.8.{i}.{40 + i}",
            labels=sel,
        )
    bad = f"{new_rs}-{suffix(new_rs, 0)}"
    message = (
        "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create "
        'failed: unable to start container process: exec: "gunicorn": executable file not found in $PATH: unknown'
    )
    p.pod(
        bad,
        ns,
        labels={**sel, "pod-template-hash": new_hash},
        node=nodes[0],
        created=12.0,
        owner=("ReplicaSet", new_rs),
        ip="10.8.0.77",
        containers=[
            container(
                "web",
                new_image,
                command=["gunicorn"],
                args=["pricing.wsgi:app", "--bind", "0.0.0.0:8080", "--workers", "4"],
            )
        ],
        statuses=[
            status(
                p,
                "web",
                new_image,
                state=waiting("CrashLoopBackOff", crashloop_message("web", bad, ns, p)),
                ready=False,
                restarts=5,
                last=terminated(p, "StartError", 128, 0, 41.9, message=message, cid=bad, never_started=True),
            )
        ],
    )
    field = "spec.containers{web}"
    p.scheduled(12.0, ns, bad, nodes[0])
    events = p.events_of(ns, "Pod", bad, host=nodes[0], field_path=field)
    events(12.02, "Pulling", f'Pulling image "{new_image}"')
    events(
        12.2,
        "Pulled",
        f'Successfully pulled image "{new_image}" in 9.871s (9.871s including waiting). Image size: 58120704 bytes.',
    )
    events(12.21, "Created", "Created container web", count=6, last=41.9)
    events(12.22, "Failed", f"Error: {message}", type="Warning", count=6, last=41.9)
    events(12.6, "BackOff", backoff_event_message("web", bad, ns, p), type="Warning", count=131, last=44.7)
    for m in range(0, 45, 3):
        p.log(
            m + 0.4,
            "catalog-web",
            "INFO",
            f'10.8.3.{m + 10} - - [22/Jan/2025:10:{m:02d}:24 +0000] "GET /p/'
            f'{40112 + m} HTTP/1.1" 200 {18220 + m * 7} "-" "Mozilla/5.0" '
            f"0.{180 + m}",
        )
    p.log(
        21.0,
        "catalog-web",
        "WARN",
        "2025/01/22 10:21:00 [warn] 31#31: *88120 an upstream response is buffered "
        "to a temporary file /var/cache/nginx/proxy_temp/3/08/0000001083 while reading "
        'upstream, client: 10.8.3.31, server: catalog, request: "GET /sitemap.xml '
        'HTTP/1.1"',
    )
    p.truth(
        kind="crash_loop_executable_not_found",
        service="pricing-api",
        summary=(
            "The 4.0.0 image is built on distroless, which has no gunicorn on $PATH, while the Deployment still runs "
            'command [gunicorn]: the container fails to start (StartError, exit code 128, \'exec: "gunicorn": '
            "executable file not found in $PATH') and crash-loops; the rollout stalls with the three 3.9.2 pods "
            "serving. The catalog-web deploy and its nginx buffering warning are unrelated."
        ),
        key_evidence=['exec: "gunicorn": executable file not found in $PATH', "StartError"],
    )
    return p


def invoice_renderer_crashloop() -> Pack:
    """A Python SyntaxError after a hotfix: traceback in the previous container's log and in Loki."""
    p = Pack(
        "invoice-renderer-crashloop",
        title="Invoices not rendering after the tax hotfix",
        description=(
            "Billing namespace. invoice-renderer (FastAPI on uvicorn) renders invoice PDFs for billing-api. A "
            "hotfix for line-item tax rounding shipped this morning. Recorded: Pods and previous logs, Loki."
        ),
        question="Invoice PDFs stopped rendering after this morning's hotfix. What is invoice-renderer doing?",
        start="2025-07-08T07:30:00Z",
        minutes=50,
    )
    p.service("billing-api", "http", namespace="billing", depends_on=["invoice-renderer", "billing-db"])
    p.service("invoice-renderer", "http", namespace="billing")
    p.service("invoice-mailer", "worker", namespace="billing", depends_on=["billing-db"])
    p.service("billing-db", "database", namespace="billing")
    ns = "billing"
    rhash = suffix("ir", length=10)
    image = "registry.acme.io/billing/invoice-renderer:5.4.1-hotfix.1"
    traceback = [
        "Traceback (most recent call last):",
        '  File "/usr/local/bin/uvicorn", line 8, in <module>',
        "    sys.exit(main())",
        '  File "/usr/local/lib/python3.12/site-packages/uvicorn/config.py", line 435, in load',
        "    self.loaded_app = import_from_string(self.app)",
        '  File "/usr/local/lib/python3.12/site-packages/uvicorn/importer.py", line 19, in import_from_string',
        "    module = importlib.import_module(module_str)",
        '  File "/usr/local/lib/python3.12/importlib/__init__.py", line 90, in import_module',
        "    return _bootstrap._gcd_import(name[level:], package, level)",
        '  File "<frozen importlib._bootstrap>", line 1387, in _gcd_import',
        '  File "<frozen importlib._bootstrap_external>", line 995, in exec_module',
        '  File "/app/invoice_renderer/main.py", line 9, in <module>',
        "    from invoice_renderer.pdf import render_invoice",
        '  File "/app/invoice_renderer/pdf.py", line 212',
        "    if line.tax_rate > 0",
        "                        ^",
        "SyntaxError: expected ':'",
    ]
    for i in range(2):
        pod = f"invoice-renderer-{rhash}-{suffix('ir-pod', i)}"
        node = f"ip-10-3-{14 + i}-{201 - i * 40}.eu-central-1.compute.internal"
        p.pod(
            pod,
            ns,
            labels={"app.kubernetes.io/name": "invoice-renderer", "pod-template-hash": rhash},
            node=node,
            created=2.0 + i * 0.3,
            owner=("ReplicaSet", f"invoice-renderer-{rhash}"),
            ip=f"10.3.{14 + i}.{90 + i}",
            containers=[
                container(
                    "renderer",
                    image,
                    command=["uvicorn"],
                    args=["invoice_renderer.main:app", "--host", "0.0.0.0", "--port", "8000"],
                    port=8000,
                )
            ],
            statuses=[
                status(
                    p,
                    "renderer",
                    image,
                    state=waiting("CrashLoopBackOff", crashloop_message("renderer", pod, ns, p)),
                    ready=False,
                    restarts=11 - i,
                    last=terminated(p, "Error", 1, 44.0 + i, 44.03 + i, cid=pod),
                )
            ],
        )
        p.pod_log(ns, pod, traceback, container="renderer", previous=True)
        entries = [(4.0 + k * 4.1 + i * 0.2, line) for k in range(10) for line in ["\n".join(traceback)]]
        p.stream(
            {"namespace": ns, "app": "invoice-renderer", "pod": pod, "container": "renderer", "stream": "stderr"},
            entries,
        )
    # billing-api's view: the renderer's Service has no ready endpoints.
    api = {
        "namespace": ns,
        "app": "billing-api",
        "container": "api",
        "stream": "stdout",
        "pod": f"billing-api-{suffix('ba', length=10)}-{suffix('ba-pod')}",
    }
    p.stream(
        api,
        [
            (
                5.0 + k * 2.5,
                f"{p.clock(5.0 + k * 2.5, '%Y-%m-%d %H:%M:%S,{ms}')} ERROR billing.invoices: "
                f"render failed for invoice INV-2025-{88120 + k:06d}: httpx.ConnectError: [Errno "
                "111] Connection refused",
            )
            for k in range(16)
        ],
    )
    p.stream(
        api,
        [
            (
                1.0 + k * 3,
                f"{p.clock(1.0 + k * 3, '%Y-%m-%d %H:%M:%S,{ms}')} INFO uvicorn.access: "
                f'10.3.2.18:0 - "GET /v1/accounts/acc_{4410 + k} HTTP/1.1" 200',
            )
            for k in range(15)
        ],
    )
    p.stream(
        {"namespace": ns, "app": "billing-db", "pod": "billing-db-0", "container": "postgres", "stream": "stderr"},
        [
            (
                17.0,
                "2025-07-08 07:47:00.118 UTC [69] LOG:  checkpoints are occurring too frequently (24 seconds apart)",
            ),
            (
                17.0,
                "2025-07-08 07:47:00.118 UTC [69] HINT:  Consider increasing the configuration parameter "
                '"max_wal_size".',
            ),
        ],
    )
    mailer_hash = suffix("im", length=9)
    healthy_pod(
        p,
        name=f"invoice-mailer-{mailer_hash}-{suffix('im-pod')}",
        namespace=ns,
        app="invoice-mailer",
        rs=f"invoice-mailer-{mailer_hash}",
        template_hash=mailer_hash,
        node="ip-10-3-14-201.eu-central-1.compute.internal",
        container_name="mailer",
        image="registry.acme.io/billing/invoice-mailer:2.2.0",
        created=-12000,
        ip="10.3.14.33",
        restarts=1,
        last=terminated(p, "Error", 137, -14000, -9000, cid="mailer"),
    )
    p.truth(
        kind="crash_loop_syntax_error",
        service="invoice-renderer",
        summary=(
            "The 5.4.1-hotfix.1 image of invoice-renderer has a syntax error in invoice_renderer/pdf.py line 212 "
            "(\"SyntaxError: expected ':'\"): uvicorn cannot import the app, the container exits 1 at start-up and "
            "both pods crash-loop, so billing-api's render calls are refused. The billing-db checkpoint warning and "
            "invoice-mailer's old restart are unrelated."
        ),
        key_evidence=["SyntaxError: expected ':'"],
    )
    return p


def edge_gateway_502() -> Pack:
    """A Node.js SyntaxError after a deploy; the built-in sections only (events, logs, metrics, deploys)."""
    p = Pack(
        "edge-gateway-502",
        title="Mobile API returning 502s",
        description=(
            "Mobile namespace. The apps call edge-gateway (Node.js 20, Express), a backend-for-frontend in front of "
            "orders-api and profile-api, through ingress-nginx. Recorded with the built-in tools only."
        ),
        question="Why is edge-gateway (the mobile API) returning 502s?",
        start="2025-08-14T18:00:00Z",
        minutes=60,
    )
    p.service("ingress-nginx", "http", namespace="ingress", depends_on=["edge-gateway"])
    p.service("edge-gateway", "http", namespace="mobile", depends_on=["orders-api", "profile-api"])
    p.service("orders-api", "http", namespace="mobile")
    p.service("profile-api", "http", namespace="mobile")
    p.deploy(24.0, "edge-gateway", "3.7.0", "3.6.4", "deploy-bot", "Pagination for /v2/orders; bump express to 4.21")
    p.deploy(22.5, "orders-api", "8.1.0", "8.0.9", "deploy-bot", "Add index hint for order history query")
    pods = [f"edge-gateway-{suffix('eg-new', length=10)}-{suffix('eg', i)}" for i in range(3)]
    trace = (
        "/srv/app/dist/routes/orders.js:88\n"
        "    const page = Number(req.query.page ?? 1));\n"
        "                                             ^\n"
        "\n"
        "SyntaxError: Unexpected token ')'\n"
        "    at internalCompileFunction (node:internal/vm:76:18)\n"
        "    at wrapSafe (node:internal/modules/cjs/loader:1283:20)\n"
        "    at Module._compile (node:internal/modules/cjs/loader:1328:27)\n"
        "    at Module._extensions..js (node:internal/modules/cjs/loader:1422:10)\n"
        "    at Module.load (node:internal/modules/cjs/loader:1203:32)\n"
        "    at Module._load (node:internal/modules/cjs/loader:1019:12)\n"
        "    at Module.require (node:internal/modules/cjs/loader:1231:19)\n"
        "    at require (node:internal/modules/helpers:177:18)\n"
        "    at Object.<anonymous> (/srv/app/dist/server.js:14:22)\n"
        "\n"
        "Node.js v20.11.1"
    )
    for m in range(0, 24, 2):
        p.log(
            m + 0.3,
            "edge-gateway",
            "INFO",
            f'{{"level":30,"time":{1755194400000 + m * 60000},"pid":1,'
            f'"hostname":"edge-gateway-{suffix("eg-old", length=10)}-'
            f'{suffix("eg-o", m % 3)}","req":{{"method":"GET","url":"/v2/orders?'
            f'page={m % 4 + 1}"}},"res":{{"statusCode":200}},"responseTime":'
            f'{38 + m % 9},"msg":"request completed"}}',
        )
    p.log(
        6.0,
        "edge-gateway",
        "WARN",
        "(node:1) [DEP0040] DeprecationWarning: The `punycode` module is deprecated. "
        "Please use a userland alternative instead.",
    )
    for k in range(12):
        p.log(24.6 + k * 2.9, "edge-gateway", "ERROR", trace)
    for i, pod in enumerate(pods):
        p.k8s_event(
            58.0 + i * 0.3,
            "mobile",
            "Pod",
            pod,
            "BackOff",
            backoff_event_message("gateway", pod, "mobile", p),
            type="Warning",
            count=64 - i * 5,
            service="edge-gateway",
        )
    for i, pod in enumerate(pods):
        events = p.k8s_events_of("mobile", "Pod", pod, service="edge-gateway")
        events(
            24.1 + i * 0.1, "Scheduled", f"Successfully assigned mobile/{pod} to ip-10-6-{i + 1}-{30 + i}.ec2.internal"
        )
        events(24.3 + i * 0.1, "Started", "Started container gateway", count=6)
    for k in range(30):
        at = 24.5 + k * 1.1
        p.log(
            at,
            "ingress-nginx",
            "ERROR",
            f"{p.clock(at, '%Y/%m/%d %H:%M:%S')} [error] 31#31: *{992100 + k * 37} connect() "
            f"failed (111: Connection refused) while connecting to upstream, client: 100.64.{k % 9}.{k + 20}, "
            f'server: m.acme.app, request: "GET /v2/orders?page=1 HTTP/2.0", upstream: '
            f'"http://10.6.{k % 3 + 1}.{55 + k % 3}:3000/v2/orders?page=1", host: "m.acme.app"',
        )
    p.log(40.0, "orders-api", "INFO", "order history query p95=41ms (index hint active)")
    p.log(41.0, "profile-api", "WARN", "slow request GET /v1/profile/avatar 1.2s (S3 cold read)")
    p.metric(
        "http_requests_error_rate",
        "ingress-nginx",
        "ratio",
        [0.002] * 24 + [0.31, 0.42, 0.44, 0.47] + [0.46 + (m % 3) * 0.01 for m in range(32)],
        labels={"host": "m.acme.app"},
    )
    p.metric(
        "http_request_duration_p99_ms",
        "ingress-nginx",
        "ms",
        [180 + (m % 5) * 6 for m in range(60)],
        labels={"host": "m.acme.app"},
    )
    p.metric("http_requests_error_rate", "orders-api", "ratio", [0.001] * 60)
    p.truth(
        kind="crash_loop_syntax_error",
        service="edge-gateway",
        summary=(
            'edge-gateway 3.7.0 ships a compiled routes/orders.js with a syntax error ("SyntaxError: Unexpected token '
            "')'\"): every new container exits at start-up and crash-loops, so ingress-nginx gets connection refused "
            "from the upstream and answers 502. The orders-api deploy minutes earlier, the punycode deprecation "
            "warning and profile-api's slow avatar read are unrelated."
        ),
        key_evidence=["SyntaxError: Unexpected token ')'", "Back-off restarting failed container gateway"],
    )
    return p


def route_planner_panics() -> Pack:
    """A Go panic in a consumer goroutine (nil pointer) kills the process, exit code 2, with its stack trace."""
    p = Pack(
        "route-planner-panics",
        title="route-planner restarting since this morning",
        description=(
            "Logistics namespace. route-planner (Go) consumes shipment events and asks the OSRM backend for routes; "
            "fleet-tracker streams vehicle positions. Recorded: Pods, events, previous logs, Loki."
        ),
        question="route-planner keeps restarting since this morning, ETAs are missing in the driver app. Why?",
        start="2025-09-02T06:00:00Z",
        minutes=60,
    )
    p.service("route-planner", "worker", namespace="logistics", depends_on=["osrm-backend", "shipment-events"])
    p.service("fleet-tracker", "http", namespace="logistics")
    p.service("osrm-backend", "http", namespace="logistics")
    p.service("shipment-events", "queue", namespace="logistics")
    ns = "logistics"
    rhash = suffix("rp", length=10)
    image = "quay.io/acme-logistics/route-planner:v2.40.1"
    panic = [
        "panic: runtime error: invalid memory address or nil pointer dereference",
        "[signal SIGSEGV: segmentation violation code=0x1 addr=0x30 pc=0x1a2b3c4]",
        "",
        "goroutine 87 [running]:",
        "github.com/acme/route-planner/internal/eta.(*Estimator).Estimate(0x0, {0xc000a1e0c0, 0x24}, 0xc0004f2a80)",
        "\t/build/internal/eta/estimator.go:118 +0x44",
        "github.com/acme/route-planner/internal/consumer.(*Handler).handle(0xc0001b6000, {0x2c1f8e0, 0xc000482f00}, "
        "0xc0007ac1e0)",
        "\t/build/internal/consumer/handler.go:73 +0x1b5",
        "created by github.com/acme/route-planner/internal/consumer.(*Handler).Run in goroutine 1",
        "\t/build/internal/consumer/handler.go:41 +0x98",
    ]
    before = [
        'time=2025-09-02T06:41:02.118Z level=INFO msg="consumer started" topic=shipment.created group=route-planner',
        'time=2025-09-02T06:41:02.902Z level=INFO msg="eta estimator" mode=osrm region=""',
        'time=2025-09-02T06:41:03.004Z level=WARN msg="region profile not found, estimator disabled" region=""',
        'time=2025-09-02T06:41:04.551Z level=INFO msg="handling shipment" id=shp_7Hq2XkP0 depot=DE-BER-03',
    ]
    for i in range(3):
        pod = f"route-planner-{rhash}-{suffix('rp-pod', i)}"
        node = f"worker-{i + 2}.k8s.dc1.acme-logistics.net"
        crashing = i < 2
        state = (
            waiting("CrashLoopBackOff", crashloop_message("planner", pod, ns, p))
            if crashing and i == 0
            else running(p, 55.0 + i)
        )
        p.pod(
            pod,
            ns,
            labels={"app": "route-planner", "pod-template-hash": rhash, "tier": "backend"},
            node=node,
            created=-600,
            owner=("ReplicaSet", f"route-planner-{rhash}"),
            ip=f"172.20.{i + 2}.{71 + i}",
            containers=[container("planner", image, port=9090)],
            statuses=[
                status(
                    p,
                    "planner",
                    image,
                    state=state,
                    ready=not (crashing and i == 0),
                    restarts=9 - i * 3,
                    last=terminated(p, "Error", 2, 52.0 + i, 54.9 + i, cid=pod),
                )
            ],
        )
        p.pod_log(ns, pod, before + panic, container="planner", previous=True)
        p.event(
            3 + i,
            ns,
            "Pod",
            pod,
            "BackOff",
            backoff_event_message("planner", pod, ns, p),
            type="Warning",
            host=node,
            field_path="spec.containers{planner}",
            count=31 - i * 8,
            last=57.0,
        )
        entries = []
        for k in range(6 - i * 2):
            m = 8 + k * 8 + i
            entries += [
                (m + j * 0.01, f"time={p.clock(m + j * 0.01)} " + line.split(" ", 1)[1])
                for j, line in enumerate(before)
            ]
            entries.append((m + 0.9, "\n".join(panic)))
        p.stream({"namespace": ns, "app": "route-planner", "pod": pod, "container": "planner"}, entries)
    # Red herrings: fleet-tracker had one liveness failure and a restart; osrm logs a slow request.
    fhash = suffix("ft", length=9)
    fpod = f"fleet-tracker-{fhash}-{suffix('ft-pod')}"
    healthy_pod(
        p,
        name=fpod,
        namespace=ns,
        app="fleet-tracker",
        rs=f"fleet-tracker-{fhash}",
        template_hash=fhash,
        node="worker-2.k8s.dc1.acme-logistics.net",
        container_name="tracker",
        image="quay.io/acme-logistics/fleet-tracker:1.12.0",
        created=-8000,
        ip="172.20.2.14",
        restarts=1,
        last=terminated(p, "Error", 137, -8000, 21.4, cid=fpod),
    )
    events = p.events_of(
        ns, "Pod", fpod, host="worker-2.k8s.dc1.acme-logistics.net", field_path="spec.containers{tracker}"
    )
    events(
        21.0,
        "Unhealthy",
        'Liveness probe failed: Get "http://172.20.2.14:8080/healthz": '
        "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
        type="Warning",
        count=3,
        last=21.3,
    )
    events(21.35, "Killing", "Container tracker failed liveness probe, will be restarted")
    p.stream(
        {"namespace": ns, "app": "osrm-backend", "pod": "osrm-backend-0", "container": "osrm"},
        [
            (30.0, "[warn] slow request: /route/v1/driving/13.388860,52.517037;13.397634,52.529407 took 1840ms"),
            (31.0, "[info] 200 /route/v1/driving/13.40,52.52;13.41,52.51 12ms"),
        ],
    )
    p.truth(
        kind="crash_loop_panic",
        service="route-planner",
        summary=(
            "route-planner starts with an empty region profile, disables its ETA estimator (nil), and the first "
            "shipment it handles panics with a nil pointer dereference in eta.(*Estimator).Estimate "
            "(estimator.go:118); the process exits 2 and the pods crash-loop. fleet-tracker's single liveness "
            "restart and OSRM's slow request are unrelated."
        ),
        key_evidence=["panic: runtime error: invalid memory address or nil pointer dereference"],
    )
    return p


PACKS = [
    notifier_rollout_stuck,
    pricing_api_wont_start,
    invoice_renderer_crashloop,
    edge_gateway_502,
    route_planner_panics,
]
