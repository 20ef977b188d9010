"""Image pull failures: a tag that does not exist, registry credentials refused, a registry that cannot be reached."""

from __future__ import annotations

from tests.incidents.corpus.kit import (
    Pack,
    container,
    healthy_pod,
    pod_start_events,
    status,
    suffix,
    waiting,
)


def _pull_failure_events(
    p: Pack,
    *,
    namespace: str,
    pod: str,
    node: str,
    image: str,
    error: str,
    first: float,
    last: float,
    attempts: int,
    container_name: str,
) -> None:
    """What the kubelet records for a failing pull (pkg/kubelet/images): Pulling, Failed x2, BackOff, Failed."""
    field = f"spec.containers{{{container_name}}}"
    events = p.events_of(namespace, "Pod", pod, host=node, field_path=field)
    events(first, "Pulling", f'Pulling image "{image}"', count=attempts, last=last - 1.0)
    events(
        first + 0.1,
        "Failed",
        f'Failed to pull image "{image}": {error}',
        type="Warning",
        count=attempts,
        last=last - 1.0,
    )
    events(first + 0.11, "Failed", "Error: ErrImagePull", type="Warning", count=attempts, last=last - 1.0)
    events(first + 0.3, "BackOff", f'Back-off pulling image "{image}"', count=attempts * 4, last=last)
    events(first + 0.31, "Failed", "Error: ImagePullBackOff", type="Warning", count=attempts * 4, last=last)


def storefront_rollout_stuck() -> Pack:
    """A tag that was never pushed: NotFound from containerd; the old ReplicaSet keeps serving. Kubernetes only."""
    p = Pack(
        "storefront-rollout-stuck",
        title="storefront-web deploy never finishes",
        description=(
            "Web namespace. storefront-web (Next.js) is deployed by Argo CD from the web-apps repository. The "
            "2.19.0 sync started 25 minutes ago and the app is still 'Progressing'. Recorded with kubectl."
        ),
        question="The storefront-web deploy never finishes. Why?",
        start="2025-10-06T13:00:00Z",
        minutes=40,
    )
    p.service("storefront-web", "http", namespace="web", depends_on=["catalog-api"])
    p.service("catalog-api", "http", namespace="web")
    p.service("image-resizer", "http", namespace="web")
    ns = "web"
    sel = {"app.kubernetes.io/name": "storefront-web", "app.kubernetes.io/instance": "storefront-web-prod"}
    old_image = "registry.acme.io/web/storefront-web:2.18.4"
    new_image = "registry.acme.io/web/storefront-web:2.19.0"
    old_hash, new_hash = suffix("sw-old", length=10), suffix("sw-new", length=9)
    old_rs, new_rs = f"storefront-web-{old_hash}", f"storefront-web-{new_hash}"
    p.deployment(
        "storefront-web",
        ns,
        selector=sel,
        replicas=6,
        revision=31,
        image=new_image,
        container="next",
        created=-200000,
        ready=5,
        updated=2,
        available=5,
        conditions=[
            {
                "type": "Available",
                "status": "True",
                "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
                "lastUpdateTime": p.ts(-200000),
                "lastTransitionTime": p.ts(-200000),
            },
            {
                "type": "Progressing",
                "status": "False",
                "reason": "ProgressDeadlineExceeded",
                "message": f'ReplicaSet "{new_rs}" has timed out progressing.',
                "lastUpdateTime": p.ts(25.0),
                "lastTransitionTime": p.ts(25.0),
            },
        ],
    )
    p.replicaset(
        "storefront-web",
        ns,
        old_hash,
        selector=sel,
        revision=30,
        image=old_image,
        container="next",
        created=-86000,
        replicas=5,
    )
    p.replicaset(
        "storefront-web",
        ns,
        new_hash,
        selector=sel,
        revision=31,
        image=new_image,
        container="next",
        created=15.0,
        replicas=2,
        ready=0,
    )
    events = p.events_of(ns, "Deployment", "storefront-web", component="deployment-controller")
    events(15.0, "ScalingReplicaSet", f"Scaled up replica set {new_rs} to 2 from 0")
    events(15.01, "ScalingReplicaSet", f"Scaled down replica set {old_rs} to 5 from 6")
    nodes = [f"ip-10-2-{k}-{60 + k * 7}.us-east-2.compute.internal" for k in range(1, 5)]
    for i in range(5):
        healthy_pod(
            p,
            name=f"{old_rs}-{suffix(old_rs, i)}",
            namespace=ns,
            app="storefront-web",
            rs=old_rs,
            template_hash=old_hash,
            node=nodes[i % 4],
            container_name="next",
            image=old_image,
            created=-86000 + i,
            ip=f"10.2.{i % 4 + 1}.{100 + i}",
            labels=sel,
            port=3000,
        )
    error = (
        f'rpc error: code = NotFound desc = failed to pull and unpack image "{new_image}": failed to resolve '
        f'reference "{new_image}": {new_image}: not found'
    )
    for i in range(2):
        pod = f"{new_rs}-{suffix(new_rs, i)}"
        node = nodes[i + 1]
        p.pod(
            pod,
            ns,
            labels={**sel, "pod-template-hash": new_hash},
            node=node,
            created=15.0 + i * 0.01,
            owner=("ReplicaSet", new_rs),
            ip=f"10.2.{i + 2}.{140 + i}",
            phase="Pending",
            containers=[container("next", new_image, port=3000, memory="512Mi", limit_memory="1Gi")],
            statuses=[
                status(
                    p,
                    "next",
                    new_image,
                    state=waiting("ImagePullBackOff", f'Back-off pulling image "{new_image}"'),
                    ready=False,
                    started=False,
                )
            ],
        )
        p.event(
            15.0 + i * 0.01,
            ns,
            "ReplicaSet",
            new_rs,
            "SuccessfulCreate",
            f"Created pod: {pod}",
            component="replicaset-controller",
        )
        p.scheduled(15.02, ns, pod, node)
        _pull_failure_events(
            p,
            namespace=ns,
            pod=pod,
            node=node,
            image=new_image,
            error=error,
            first=15.1,
            last=39.5,
            attempts=7,
            container_name="next",
        )
    # Noise: the image-resizer rolled normally half an hour earlier with a slow (but successful) pull.
    ir_hash = suffix("ir-new", length=10)
    ir_pod = f"image-resizer-{ir_hash}-{suffix('ir-p')}"
    healthy_pod(
        p,
        name=ir_pod,
        namespace=ns,
        app="image-resizer",
        rs=f"image-resizer-{ir_hash}",
        template_hash=ir_hash,
        node=nodes[3],
        container_name="resizer",
        image="registry.acme.io/web/image-resizer:0.9.3",
        created=2.0,
        ip="10.2.4.201",
    )
    pod_start_events(
        p, ns, ir_pod, nodes[3], "resizer", "registry.acme.io/web/image-resizer:0.9.3", 2.0, pull_seconds=48.213
    )
    p.event(
        2.9,
        ns,
        "Pod",
        ir_pod,
        "Unhealthy",
        "Readiness probe failed: HTTP probe failed with statuscode: 503",
        type="Warning",
        host=nodes[3],
        field_path="spec.containers{resizer}",
        count=2,
        last=3.0,
    )
    p.truth(
        kind="image_pull_not_found",
        service="storefront-web",
        summary=(
            "Revision 31 of storefront-web points at registry.acme.io/web/storefront-web:2.19.0, a tag that does not "
            "exist in the registry (the pipeline pushed 2.19.0-rc.2): the new pods fail with ErrImagePull / "
            "ImagePullBackOff ('... 2.19.0: not found') and the Deployment hits ProgressDeadlineExceeded while five "
            "2.18.4 pods keep serving. image-resizer's slow pull and startup readiness blip are normal."
        ),
        key_evidence=["not found", "Back-off pulling image", "Error: ErrImagePull"],
    )
    return p


def ingest_worker_scale_out() -> Pack:
    """Registry auth refused (401) only on new nodes: old nodes have the image cached."""
    p = Pack(
        "ingest-worker-scale-out",
        title="ingest-worker not scaling out",
        description=(
            "Data namespace. ingest-worker pulls from ghcr.io with an imagePullSecret; KEDA scales it on the "
            "events backlog and Karpenter adds nodes. Recorded: Pods, events, KEDA and queue metrics."
        ),
        question="ingest-worker isn't scaling out; the new pods are stuck and the backlog keeps growing. Why?",
        start="2025-11-12T16:00:00Z",
        minutes=45,
    )
    p.service("ingest-worker", "worker", namespace="data", depends_on=["events-stream", "lakehouse"])
    p.service("events-stream", "queue", namespace="data")
    p.service("lakehouse", "external")
    p.service("schema-registry", "http", namespace="data")
    ns = "data"
    image = "ghcr.io/acme-data/ingest-worker:v3.2.0"
    ihash = suffix("iw", length=10)
    rs = f"ingest-worker-{ihash}"
    old_nodes = ["ip-10-9-1-14.ec2.internal", "ip-10-9-2-201.ec2.internal"]
    new_nodes = ["ip-10-9-3-77.ec2.internal", "ip-10-9-1-152.ec2.internal"]
    for i in range(4):
        healthy_pod(
            p,
            name=f"{rs}-{suffix(rs, i)}",
            namespace=ns,
            app="ingest-worker",
            rs=rs,
            template_hash=ihash,
            node=old_nodes[i % 2],
            container_name="worker",
            image=image,
            created=-40000 + i,
            ip=f"10.9.{i % 2 + 1}.{30 + i}",
            labels={"app": "ingest-worker"},
            port=9102,
        )
    p.event(
        6.0,
        ns,
        "Deployment",
        "ingest-worker",
        "ScalingReplicaSet",
        f"Scaled up replica set {rs} to 10 from 4",
        component="deployment-controller",
    )
    p.event(
        5.9,
        ns,
        "HorizontalPodAutoscaler",
        "keda-hpa-ingest-worker",
        "SuccessfulRescale",
        "New size: 10; reason: external metric s0-kafka-events-ingest(&LabelSelector{MatchLabels:map[string]string"
        "{scaledobject.keda.sh/name: ingest-worker,},MatchExpressions:[]LabelSelectorRequirement{},}) above target",
        component="horizontal-pod-autoscaler",
        api_version="autoscaling/v2",
    )
    auth_error = (
        f'failed to pull and unpack image "{image}": failed to resolve reference "{image}": failed to authorize: '
        "failed to fetch oauth token: unexpected status from GET request to https://ghcr.io/token?scope=repository"
        "%3Aacme-data%2Fingest-worker%3Apull&service=ghcr.io: 401 Unauthorized"
    )
    for i in range(6):
        pod = f"{rs}-{suffix(rs, 10 + i)}"
        node = new_nodes[i % 2]
        p.pod(
            pod,
            ns,
            labels={"app": "ingest-worker", "pod-template-hash": ihash},
            node=node,
            created=6.0 + i * 0.01,
            owner=("ReplicaSet", rs),
            ip=f"10.9.{3 if i % 2 == 0 else 1}.{180 + i}",
            phase="Pending",
            containers=[container("worker", image, port=9102, memory="1Gi", limit_memory="1Gi")],
            statuses=[
                status(
                    p,
                    "worker",
                    image,
                    state=waiting(
                        "ErrImagePull" if i == 5 else "ImagePullBackOff",
                        auth_error if i == 5 else f'Back-off pulling image "{image}"',
                    ),
                    ready=False,
                    started=False,
                )
            ],
        )
        p.event(
            6.0 + i * 0.01,
            ns,
            "ReplicaSet",
            rs,
            "SuccessfulCreate",
            f"Created pod: {pod}",
            component="replicaset-controller",
        )
        events = p.events_of(ns, "Pod", pod)
        events(
            6.02,
            "FailedScheduling",
            "0/2 nodes are available: 2 Insufficient memory. preemption: 0/2 nodes are available: 2 No "
            "preemption victims found for incoming pod.",
            type="Warning",
            component="default-scheduler",
            new_api=True,
        )
        events(
            6.03, "Nominated", f"Pod should schedule on: nodeclaim/default-{suffix('nc', i % 2)}", component="karpenter"
        )
        p.scheduled(8.1, ns, pod, node)
        _pull_failure_events(
            p,
            namespace=ns,
            pod=pod,
            node=node,
            image=image,
            error=auth_error,
            first=8.3 + i * 0.02,
            last=44.0,
            attempts=8,
            container_name="worker",
        )
    p.series(
        {
            "__name__": "kafka_consumergroup_lag_sum",
            "consumergroup": "ingest-worker",
            "topic": "events.raw",
            "job": "kafka-exporter",
        },
        [52_000 + m * 3_900 for m in range(46)],
    )
    p.series(
        {
            "__name__": "kube_deployment_status_replicas_available",
            "namespace": ns,
            "deployment": "ingest-worker",
            "job": "kube-state-metrics",
        },
        [4] * 46,
    )
    p.series(
        {
            "__name__": "kube_deployment_spec_replicas",
            "namespace": ns,
            "deployment": "ingest-worker",
            "job": "kube-state-metrics",
        },
        [4] * 6 + [10] * 40,
    )
    p.series(
        {
            "__name__": "kube_pod_container_status_waiting_reason",
            "namespace": ns,
            "pod": f"{rs}-{suffix(rs, 10)}",
            "container": "worker",
            "reason": "ImagePullBackOff",
            "job": "kube-state-metrics",
        },
        [1] * 36,
        start=9.0,
    )
    # Red herring: schema-registry logs a compatibility warning; an old-node pod pulled "already present".
    sr = f"schema-registry-{suffix('sr', length=9)}-{suffix('sr-p')}"
    healthy_pod(
        p,
        name=sr,
        namespace=ns,
        app="schema-registry",
        rs=f"schema-registry-{suffix('sr', length=9)}",
        template_hash=suffix("sr", length=9),
        node=old_nodes[0],
        container_name="registry",
        image="confluentinc/cp-schema-registry:7.6.1",
        created=-99000,
        ip="10.9.1.9",
        port=8081,
    )
    p.event(
        20.0,
        ns,
        "Pod",
        sr,
        "Unhealthy",
        'Readiness probe failed: Get "http://10.9.1.9:8081/subjects": context '
        "deadline exceeded (Client.Timeout exceeded while awaiting headers)",
        type="Warning",
        host=old_nodes[0],
        field_path="spec.containers{registry}",
    )
    p.truth(
        kind="image_pull_auth",
        service="ingest-worker",
        summary=(
            "KEDA scales ingest-worker from 4 to 10 and Karpenter brings up two fresh nodes, which do not have the "
            "image cached; pulling ghcr.io/acme-data/ingest-worker:v3.2.0 there fails because the registry refuses "
            "the pull secret (401 Unauthorized: the token in the imagePullSecret has expired). The four pods on old "
            "nodes keep running from the cached image, so only the scale-out fails and the lag grows. The "
            "schema-registry readiness blip is unrelated."
        ),
        key_evidence=["401 Unauthorized", "Error: ErrImagePull"],
    )
    return p


def payments_manual_review() -> Pack:
    """Registry unreachable (dial tcp ...:443: i/o timeout) from a new node pool; mixed built-in and raw sections."""
    p = Pack(
        "payments-manual-review",
        title="Payments falling back to manual review",
        description=(
            "Risk namespace. payments-api asks fraud-scorer for a score on every payment and falls back to manual "
            "review when it cannot get one. The node pool was replaced overnight. Images come from the on-premises "
            "Harbor registry over the VPN."
        ),
        question="Why are so many payments going to manual review? fraud-scorer looks unhappy.",
        start="2025-12-02T07:00:00Z",
        minutes=60,
    )
    p.service("payments-api", "http", namespace="payments", depends_on=["fraud-scorer"])
    p.service("fraud-scorer", "http", namespace="risk")
    p.service("harbor", "external")
    image = "harbor.corp.acme.net/risk/fraud-scorer:1.14.2"
    error = (
        f'rpc error: code = DeadlineExceeded desc = failed to pull and unpack image "{image}": failed to resolve '
        f'reference "{image}": failed to do request: Head "https://harbor.corp.acme.net/v2/risk/fraud-scorer/'
        'manifests/1.14.2": dial tcp 10.40.0.15:443: i/o timeout'
    )
    pods = [f"fraud-scorer-{suffix('fs2', length=10)}-{suffix('fs2', i)}" for i in range(3)]
    nodes = [f"ip-10-12-{4 + i}-{21 + i * 30}.eu-west-1.compute.internal" for i in range(3)]
    for i, pod in enumerate(pods):
        events = p.k8s_events_of("risk", "Pod", pod, service="fraud-scorer")
        events(1.0 + i * 0.2, "Scheduled", f"Successfully assigned risk/{pod} to {nodes[i]}")
        events(1.1 + i * 0.2, "Pulling", f'Pulling image "{image}"', count=9)
    # One pod's failure is recorded as raw events, the others' as the built-in k8s events.
    _pull_failure_events(
        p,
        namespace="risk",
        pod=pods[0],
        node=nodes[0],
        image=image,
        error=error,
        first=3.2,
        last=58.0,
        attempts=9,
        container_name="scorer",
    )
    for i, pod in enumerate(pods[1:], start=1):
        events = p.k8s_events_of("risk", "Pod", pod, service="fraud-scorer")
        events(3.4 + i * 0.2, "Failed", f'Failed to pull image "{image}": {error}', type="Warning", count=9)
        events(3.41 + i * 0.2, "Failed", "Error: ErrImagePull", type="Warning", count=9)
        events(3.6 + i * 0.2, "BackOff", f'Back-off pulling image "{image}"', count=30)
    p.k8s_event(
        0.5,
        "risk",
        "Node",
        "ip-10-12-1-14.eu-west-1.compute.internal",
        "NodeNotSchedulable",
        "Node ip-10-12-1-14.eu-west-1.compute.internal status is now: NodeNotSchedulable",
    )
    p.k8s_event(
        0.6,
        "risk",
        "Pod",
        f"fraud-scorer-{suffix('fs-old', length=10)}-{suffix('fs-old')}",
        "Killing",
        "Stopping container scorer",
        service="fraud-scorer",
    )
    p.deploy(2.0, "payments-api", "9.12.0", "9.11.3", "release-train", "Apple Pay tokens for EU merchants")
    for k in range(40):
        m = 3.0 + k * 1.4
        p.log(
            m,
            "payments-api",
            "WARN",
            f'{{"ts":"2025-12-02T07:{int(m):02d}:{int(m * 60) % 60:02d}.{k * 7 % 1000:03d}Z","level":"warn",'
            f'"logger":"risk.client","msg":"fraud score unavailable, routing to manual review","payment_id":'
            f'"pay_{suffix("pay", k, length=12)}","error":"Post \\"http://fraud-scorer.risk.svc.cluster.local:8080/'
            f'v3/score\\": dial tcp 172.20.118.40:8080: connect: connection refused"}}',
        )
    for k in range(30):
        m = 1.0 + k * 2.0
        p.log(
            m,
            "payments-api",
            "INFO",
            f'{{"ts":"2025-12-02T07:{int(m):02d}:00.{k * 11 % 1000:03d}Z","level":"info","logger":"http",'
            f'"msg":"POST /v2/payments 201","duration_ms":{180 + k % 7 * 11}}}',
        )
    p.metric("manual_review_ratio", "payments-api", "ratio", [0.01, 0.01, 0.01] + [0.97] * 57)
    p.metric("http_requests_error_rate", "payments-api", "ratio", [0.002] * 60)
    p.metric(
        "kube_deployment_status_replicas_available",
        "fraud-scorer",
        "count",
        [3, 2, 1] + [0] * 57,
        labels={"namespace": "risk"},
    )
    p.truth(
        kind="image_pull_registry_unreachable",
        service="fraud-scorer",
        summary=(
            "The replacement node pool cannot reach the on-premises Harbor registry (dial tcp 10.40.0.15:443: i/o "
            "timeout, the new subnet is missing from the VPN route), so the fraud-scorer pods rescheduled off the "
            "drained nodes never pull their image (ErrImagePull / Back-off pulling image); with no fraud-scorer "
            "endpoints payments-api routes every payment to manual review. Its 9.12.0 deploy is unrelated."
        ),
        key_evidence=["dial tcp 10.40.0.15:443: i/o timeout", "Error: ErrImagePull"],
    )
    return p


PACKS = [storefront_rollout_stuck, ingest_worker_scale_out, payments_manual_review]
