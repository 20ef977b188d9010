"""Pods that are never placed or never created: resources and taints, node selectors, unbound claims, quota."""

from __future__ import annotations

from tests.incidents.corpus.kit import (
    Pack,
    container,
    healthy_pod,
    status,
    suffix,
    unschedulable,
)


def search_slow_during_sale() -> Pack:
    """HPA scales out, the new pods stay Pending (Insufficient cpu, untolerated taint); latency rises meanwhile."""
    p = Pack(
        "search-slow-during-sale",
        title="Search slow during the autumn sale",
        description=(
            "Search namespace on a 5-node cluster (3 workers, 2 control-plane nodes). search-api (Java) queries "
            "search-es. The autumn sale started at 19:00. Recorded: Kubernetes objects and events, Prometheus."
        ),
        question="Search has been slow since the sale started. What's wrong with search-api?",
        start="2025-10-24T18:50:00Z",
        minutes=50,
    )
    p.service("search-api", "http", namespace="search", depends_on=["search-es"])
    p.service("search-es", "database", namespace="search")
    p.service("suggest-api", "http", namespace="search", depends_on=["search-es"])
    ns = "search"
    sel = {"app": "search-api"}
    image = "registry.acme.io/search/search-api:11.3.0"
    shash = suffix("sa", length=10)
    rs = f"search-api-{shash}"
    nodes = ["worker-a.k8s.acme.internal", "worker-b.k8s.acme.internal", "worker-c.k8s.acme.internal"]
    for i in range(4):
        healthy_pod(
            p,
            name=f"{rs}-{suffix(rs, i)}",
            namespace=ns,
            app="search-api",
            rs=rs,
            template_hash=shash,
            node=nodes[i % 3],
            container_name="api",
            image=image,
            created=-30000 + i,
            ip=f"10.42.{i % 3}.{20 + i}",
            labels=sel,
            memory="2Gi",
            limit_memory="2Gi",
        )
    message = (
        "0/5 nodes are available: 3 Insufficient cpu, 2 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }. preemption: 0/5 nodes are available: 2 Preemption is not "
        "helpful for scheduling, 3 No preemption victims found for incoming pod."
    )
    p.event(
        12.0,
        ns,
        "HorizontalPodAutoscaler",
        "search-api",
        "SuccessfulRescale",
        "New size: 8; reason: cpu resource utilization (percentage of request) above target",
        component="horizontal-pod-autoscaler",
        api_version="autoscaling/v2",
    )
    p.event(
        12.01,
        ns,
        "Deployment",
        "search-api",
        "ScalingReplicaSet",
        f"Scaled up replica set {rs} to 8 from 4",
        component="deployment-controller",
    )
    for i in range(4, 8):
        pod = f"{rs}-{suffix(rs, i)}"
        p.pod(
            pod,
            ns,
            labels={**sel, "pod-template-hash": shash},
            node=None,
            created=12.0 + i * 0.01,
            owner=("ReplicaSet", rs),
            phase="Pending",
            containers=[container("api", image, cpu="2", memory="2Gi", limit_memory="2Gi")],
            conditions=unschedulable(p, 12.02, message),
        )
        p.event(
            12.0 + i * 0.01,
            ns,
            "ReplicaSet",
            rs,
            "SuccessfulCreate",
            f"Created pod: {pod}",
            component="replicaset-controller",
        )
        events = p.events_of(ns, "Pod", pod)
        events(
            12.03,
            "FailedScheduling",
            message,
            type="Warning",
            component="default-scheduler",
            new_api=True,
            count=9,
            last=47.0,
        )
        events(
            12.5,
            "NotTriggerScaleUp",
            "pod didn't trigger scale-up: 1 max node group size reached",
            component="cluster-autoscaler",
            count=40,
            last=48.0,
        )
    cpu = [0.58] * 10 + [0.8, 0.93, 0.97] + [0.99] * 37
    for i in range(4):
        p.series(
            {
                "__name__": "namespace_pod:container_cpu_usage_seconds_total:sum_rate",
                "namespace": ns,
                "pod": f"{rs}-{suffix(rs, i)}",
            },
            [round(v * 2 - i * 0.01, 3) for v in cpu],
        )
    p.series(
        {"__name__": "http_server_requests_seconds:p99", "namespace": ns, "service": "search-api", "uri": "/v2/search"},
        [0.21] * 10 + [0.42, 0.9, 1.6] + [2.4 + (m % 4) * 0.2 for m in range(37)],
    )
    p.series(
        {
            "__name__": "http_server_requests_seconds:rate5m",
            "namespace": ns,
            "service": "search-api",
            "uri": "/v2/search",
        },
        [310] * 10 + [640, 820, 905] + [930 + (m % 5) * 9 for m in range(37)],
    )
    p.series(
        {
            "__name__": "kube_pod_status_phase",
            "namespace": ns,
            "pod": f"{rs}-{suffix(rs, 4)}",
            "phase": "Pending",
            "job": "kube-state-metrics",
        },
        [1] * 38,
        start=12.0,
    )
    p.series(
        {
            "__name__": "elasticsearch_jvm_gc_collection_seconds_count",
            "cluster": "search-es",
            "gc": "young",
            "name": "search-es-1",
        },
        [88000 + m * 14 for m in range(50)],
    )
    p.series(
        {"__name__": "elasticsearch_indices_search_query_time_seconds", "cluster": "search-es", "name": "search-es-1"},
        [41_200 + m * 6 for m in range(50)],
    )
    p.event(
        20.0,
        ns,
        "Pod",
        "search-es-1",
        "Unhealthy",
        "Readiness probe failed: Waiting for elasticsearch cluster to "
        'become ready (request params: "wait_for_status=green&timeout=1s" )',
        type="Warning",
        host=nodes[1],
        field_path="spec.containers{elasticsearch}",
        count=2,
        last=20.2,
    )
    p.truth(
        kind="scheduling_insufficient_cpu",
        service="search-api",
        summary=(
            "The sale doubles search traffic; the HPA scales search-api from 4 to 8 but the four new pods stay "
            "Pending ('0/5 nodes are available: 3 Insufficient cpu, 2 node(s) had untolerated taint "
            "{node-role.kubernetes.io/control-plane: }') and the cluster autoscaler is at its maximum, so the four "
            "running pods saturate their CPU and p99 latency goes from 0.2 s to 2.4 s. search-es is fine (one "
            "readiness blip)."
        ),
        key_evidence=["Insufficient cpu", "FailedScheduling"],
    )
    return p


def embedding_backlog() -> Pack:
    """A nodeSelector that matches no node after a GPU pool was renamed; built-in k8s events and metrics, raw pods."""
    p = Pack(
        "embedding-backlog",
        title="Embedding jobs piling up",
        description=(
            "ML namespace. embedding-worker (PyTorch) runs on GPU nodes and turns uploaded documents into vectors "
            "stored in qdrant. The platform team replaced the A10G node pool with L4 nodes yesterday."
        ),
        question="Embedding jobs are piling up; embedding-worker isn't processing anything. Why?",
        start="2025-03-27T09:00:00Z",
        minutes=45,
    )
    p.service("embedding-worker", "worker", namespace="ml", depends_on=["doc-queue", "qdrant"])
    p.service("doc-queue", "queue", namespace="ml")
    p.service("qdrant", "database", namespace="ml")
    p.service("search-gateway", "http", namespace="ml", depends_on=["qdrant"])
    ns = "ml"
    image = "registry.acme.io/ml/embedding-worker:0.18.0"
    ehash = suffix("ew", length=10)
    rs = f"embedding-worker-{ehash}"
    message = (
        "0/6 nodes are available: 6 node(s) didn't match Pod's node affinity/selector. preemption: 0/6 nodes are "
        "available: 6 Preemption is not helpful for scheduling."
    )
    for i in range(3):
        pod = f"{rs}-{suffix(rs, i)}"
        p.pod(
            pod,
            ns,
            labels={"app.kubernetes.io/name": "embedding-worker", "pod-template-hash": ehash},
            node=None,
            created=-700 + i,
            owner=("ReplicaSet", rs),
            phase="Pending",
            containers=[
                {
                    **container("embedder", image, cpu="4", memory="16Gi", limit_memory="16Gi", port=None),
                    "resources": {
                        "requests": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"},
                        "limits": {"memory": "16Gi", "nvidia.com/gpu": "1"},
                    },
                }
            ],
            node_selector={"node.acme.io/pool": "gpu-a10g"},
            tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            conditions=unschedulable(p, -700, message),
        )
        events = p.k8s_events_of(ns, "Pod", pod, service="embedding-worker")
        events(1.0 + i * 0.1, "FailedScheduling", message, type="Warning", count=170 + i)
        events(
            1.2 + i * 0.1,
            "NotTriggerScaleUp",
            "pod didn't trigger scale-up: 3 node(s) didn't match Pod's node affinity/selector",
            count=60,
        )
    events = p.k8s_events_of(ns, "Node", "ip-10-5-9-31.ec2.internal")
    events(0.5, "NodeReady", "Node ip-10-5-9-31.ec2.internal status is now: NodeReady")
    events(
        0.6,
        "RegisteredNode",
        "Node ip-10-5-9-31.ec2.internal event: Registered Node ip-10-5-9-31.ec2.internal in Controller",
    )
    p.metric(
        "queue_depth",
        "doc-queue",
        "messages",
        [18_400 + m * 520 for m in range(45)],
        labels={"queue": "documents.embed"},
    )
    p.metric("embeddings_written_per_min", "embedding-worker", "count", [0] * 45)
    p.metric("http_request_duration_p99_ms", "search-gateway", "ms", [88 + (m % 6) * 3 for m in range(45)])
    p.log(
        12.0,
        "qdrant",
        "WARN",
        "2025-03-27T09:12:00.118872Z  WARN qdrant::actix::api::search_api: Slow search "
        "detected: collection=docs_v3 took 1.21s (limit=64, ef=256)",
    )
    p.log(
        30.0,
        "qdrant",
        "INFO",
        "2025-03-27T09:30:00.002551Z  INFO storage::content_manager::toc: Optimizing "
        "segments of collection docs_v3 (3 segments, 2.1M points)",
    )
    for m in range(2, 45, 5):
        p.log(m, "search-gateway", "INFO", f"GET /v1/semantic?q=invoice+template 200 {70 + m}ms")
    p.truth(
        kind="scheduling_node_selector",
        service="embedding-worker",
        summary=(
            "embedding-worker still selects node.acme.io/pool=gpu-a10g, but the A10G pool was replaced by an L4 "
            "pool with a different label: no node matches ('6 node(s) didn't match Pod's node affinity/selector'), "
            "the autoscaler cannot help, all three pods stay Pending and the documents.embed queue grows. qdrant's "
            "slow-search warning and segment optimisation are routine."
        ),
        key_evidence=["didn't match Pod's node affinity/selector"],
    )
    return p


def ledger_replica_pending() -> Pack:
    """A StatefulSet's new replica waits on a claim no volume can satisfy (static provisioning, no class)."""
    p = Pack(
        "ledger-replica-pending",
        title="Third ledger-postgres replica not coming up",
        description=(
            "Finance namespace on an on-premises cluster with statically provisioned local volumes. ledger-postgres "
            "(CloudNativePG-style StatefulSet) was scaled from 2 to 3 replicas this morning."
        ),
        question="Why is the third ledger-postgres replica not coming up?",
        start="2025-02-18T08:00:00Z",
        minutes=30,
    )
    p.service("ledger-api", "http", namespace="finance", depends_on=["ledger-postgres"])
    p.service("ledger-postgres", "database", namespace="finance")
    p.service("ledger-backup", "worker", namespace="finance", depends_on=["ledger-postgres"])
    ns = "finance"
    image = "ghcr.io/cloudnative-pg/postgresql:16.4"
    for i in range(2):
        name = f"ledger-postgres-{i}"
        p.pod(
            name,
            ns,
            labels={
                "app.kubernetes.io/name": "ledger-postgres",
                "apps.kubernetes.io/pod-index": str(i),
                "statefulset.kubernetes.io/pod-name": name,
            },
            node=f"node-0{i + 1}.dc2.acme.lan",
            created=-90000,
            owner=("StatefulSet", "ledger-postgres"),
            ip=f"10.60.{i + 1}.12",
            containers=[
                container(
                    "postgres",
                    image,
                    cpu="2",
                    memory="8Gi",
                    limit_memory="8Gi",
                    port=5432,
                    mounts=[{"name": "pgdata", "mountPath": "/var/lib/postgresql/data"}],
                )
            ],
            statuses=[status(p, "postgres", image, state={"running": {"startedAt": p.ts(-90000)}})],
            volumes=[{"name": "pgdata", "persistentVolumeClaim": {"claimName": f"pgdata-ledger-postgres-{i}"}}],
        )
    message = (
        "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling."
    )
    p.pod(
        "ledger-postgres-2",
        ns,
        labels={
            "app.kubernetes.io/name": "ledger-postgres",
            "apps.kubernetes.io/pod-index": "2",
            "statefulset.kubernetes.io/pod-name": "ledger-postgres-2",
        },
        node=None,
        created=3.0,
        owner=("StatefulSet", "ledger-postgres"),
        phase="Pending",
        containers=[
            container(
                "postgres",
                image,
                cpu="2",
                memory="8Gi",
                limit_memory="8Gi",
                port=5432,
                mounts=[{"name": "pgdata", "mountPath": "/var/lib/postgresql/data"}],
            )
        ],
        volumes=[{"name": "pgdata", "persistentVolumeClaim": {"claimName": "pgdata-ledger-postgres-2"}}],
        conditions=unschedulable(p, 3.0, message),
    )
    events = p.events_of(ns, "StatefulSet", "ledger-postgres", component="statefulset-controller")
    events(
        3.0,
        "SuccessfulCreate",
        "create Claim pgdata-ledger-postgres-2 Pod ledger-postgres-2 in StatefulSet ledger-postgres success",
    )
    events(3.01, "SuccessfulCreate", "create Pod ledger-postgres-2 in StatefulSet ledger-postgres successful")
    p.event(
        3.02,
        ns,
        "PersistentVolumeClaim",
        "pgdata-ledger-postgres-2",
        "FailedBinding",
        "no persistent volumes available for this claim and no storage class is set",
        component="persistentvolume-controller",
        count=118,
        last=29.5,
    )
    p.event(
        3.03,
        ns,
        "Pod",
        "ledger-postgres-2",
        "FailedScheduling",
        message,
        type="Warning",
        component="default-scheduler",
        new_api=True,
        count=7,
        last=28.0,
    )
    p.stream(
        {"namespace": ns, "pod": "ledger-postgres-0", "container": "postgres", "app": "ledger-postgres"},
        [
            (
                m,
                f"2025-02-18 08:{m:02d}:00.118 UTC [61] LOG:  checkpoint complete: wrote {300 + m * 7} buffers "
                "(1.8%); 0 WAL file(s) added, 0 removed, 1 recycled",
            )
            for m in range(0, 30, 5)
        ]
        + [
            (
                14.2,
                "2025-02-18 08:14:12.004 UTC [88213] LOG:  could not receive data from client: Connection "
                "reset by peer",
            )
        ],
    )
    p.stream(
        {
            "namespace": ns,
            "pod": f"ledger-backup-{suffix('lb', length=8)}-{suffix('lb')}",
            "container": "backup",
            "app": "ledger-backup",
        },
        [(20.0, "WARNING: barman-cloud-wal-archive: WAL file 000000010000004A000000B3 already archived, skipping")],
    )
    p.truth(
        kind="unbound_pvc",
        service="ledger-postgres",
        summary=(
            "Scaling ledger-postgres to 3 created claim pgdata-ledger-postgres-2, but the cluster provisions local "
            "volumes statically and no free PersistentVolume matches it (FailedBinding: 'no persistent volumes "
            "available for this claim and no storage class is set'), so ledger-postgres-2 stays Pending ('pod has "
            "unbound immediate PersistentVolumeClaims'). The primary's log and the backup warning are routine."
        ),
        key_evidence=["pod has unbound immediate PersistentVolumeClaims", "no persistent volumes available"],
    )
    return p


def reports_api_missing_replicas() -> Pack:
    """Pods never created: the ReplicaSet's FailedCreate "exceeded quota"; dashboards slow."""
    p = Pack(
        "reports-api-missing-replicas",
        title="reports-api stuck at 3 of 6 replicas",
        description=(
            "team-analytics namespace, shared by the reporting stack and the analysts' Jupyter notebooks under one "
            "ResourceQuota. A release scaled reports-api to 6 replicas for quarter close."
        ),
        question="reports-api is stuck at 3 of 6 replicas and dashboards are slow. What's blocking it?",
        start="2025-03-31T15:00:00Z",
        minutes=40,
    )
    p.service("dashboards-ui", "http", namespace="team-analytics", depends_on=["reports-api"])
    p.service("reports-api", "http", namespace="team-analytics", depends_on=["warehouse"])
    p.service("warehouse", "database", namespace="team-analytics")
    p.service("jupyterhub", "http", namespace="team-analytics")
    ns = "team-analytics"
    sel = {"app": "reports-api", "component": "api"}
    image = "registry.acme.io/analytics/reports-api:2025.3.4"
    rhash = suffix("ra", length=10)
    rs = f"reports-api-{rhash}"
    refusal = (
        f'pods "{rs}-" is forbidden: exceeded quota: team-analytics-compute, requested: requests.memory=2Gi, '
        "used: requests.memory=62Gi, limited: requests.memory=64Gi"
    )
    p.deployment(
        "reports-api",
        ns,
        selector=sel,
        replicas=6,
        revision=12,
        image=image,
        container="api",
        created=-400000,
        ready=3,
        conditions=[
            {
                "type": "Available",
                "status": "True",
                "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
                "lastUpdateTime": p.ts(2.0),
                "lastTransitionTime": p.ts(2.0),
            },
            {
                "type": "ReplicaFailure",
                "status": "True",
                "reason": "FailedCreate",
                "message": refusal,
                "lastUpdateTime": p.ts(2.1),
                "lastTransitionTime": p.ts(2.1),
            },
            {
                "type": "Progressing",
                "status": "True",
                "reason": "NewReplicaSetAvailable",
                "message": f'ReplicaSet "{rs}" has successfully progressed.',
                "lastUpdateTime": p.ts(-3000),
                "lastTransitionTime": p.ts(-3000),
            },
        ],
    )
    p.replicaset(
        "reports-api",
        ns,
        rhash,
        selector=sel,
        revision=12,
        image=image,
        container="api",
        created=-3000,
        replicas=6,
        ready=3,
    )
    p.event(
        2.0,
        ns,
        "Deployment",
        "reports-api",
        "ScalingReplicaSet",
        f"Scaled up replica set {rs} to 6 from 3",
        component="deployment-controller",
    )
    p.event(
        2.05,
        ns,
        "ReplicaSet",
        rs,
        "FailedCreate",
        f"Error creating: {refusal}",
        type="Warning",
        component="replicaset-controller",
        count=23,
        last=38.0,
    )
    for i in range(3):
        healthy_pod(
            p,
            name=f"{rs}-{suffix(rs, i)}",
            namespace=ns,
            app="reports-api",
            rs=rs,
            template_hash=rhash,
            node=f"aks-analytics-18274411-vmss00000{i}",
            container_name="api",
            image=image,
            created=-3000 + i,
            ip=f"10.240.1.{40 + i}",
            labels=sel,
            memory="2Gi",
            limit_memory="3Gi",
        )
    for k in range(14):
        nb = f"jupyter-{['amelia', 'bogdan', 'chen', 'dara', 'eitan', 'fatima', 'goran'][k % 7]}{k // 7 or ''}"
        p.pod(
            nb,
            ns,
            labels={
                "app": "jupyterhub",
                "component": "singleuser-server",
                "hub.jupyter.org/username": nb.removeprefix("jupyter-"),
            },
            node=f"aks-analytics-18274411-vmss00000{k % 3}",
            created=-2000 + k * 60,
            ip=f"10.240.2.{k + 10}",
            containers=[
                container(
                    "notebook",
                    "quay.io/jupyter/pyspark-notebook:2025-03-24",
                    cpu="1",
                    memory="4Gi",
                    limit_memory="4Gi",
                    port=8888,
                )
            ],
            statuses=[
                status(
                    p,
                    "notebook",
                    "quay.io/jupyter/pyspark-notebook:2025-03-24",
                    state={"running": {"startedAt": p.ts(-2000 + k * 60)}},
                )
            ],
        )
    p.series(
        {
            "__name__": "kube_resourcequota",
            "namespace": ns,
            "resourcequota": "team-analytics-compute",
            "resource": "requests.memory",
            "type": "used",
            "job": "kube-state-metrics",
        },
        [66571993088] * 40,
    )
    p.series(
        {
            "__name__": "kube_resourcequota",
            "namespace": ns,
            "resourcequota": "team-analytics-compute",
            "resource": "requests.memory",
            "type": "hard",
            "job": "kube-state-metrics",
        },
        [68719476736] * 40,
    )
    p.series(
        {"__name__": "http_request_duration_seconds:p95", "namespace": ns, "service": "reports-api"},
        [0.8, 0.9] + [2.9 + (m % 5) * 0.3 for m in range(38)],
    )
    p.series(
        {
            "__name__": "kube_deployment_status_replicas_available",
            "namespace": ns,
            "deployment": "reports-api",
            "job": "kube-state-metrics",
        },
        [3] * 40,
    )
    p.series(
        {
            "__name__": "kube_deployment_spec_replicas",
            "namespace": ns,
            "deployment": "reports-api",
            "job": "kube-state-metrics",
        },
        [3, 3] + [6] * 38,
    )
    p.event(
        9.0,
        ns,
        "Pod",
        "jupyter-chen",
        "Unhealthy",
        'Readiness probe failed: Get "http://10.240.2.12:8888/api": '
        "dial tcp 10.240.2.12:8888: connect: connection refused",
        type="Warning",
        host="aks-analytics-18274411-vmss000002",
        field_path="spec.containers{notebook}",
    )
    p.truth(
        kind="quota_exceeded",
        service="reports-api",
        summary=(
            "Scaling reports-api to 6 needs 3 x 2Gi more memory requests, but the namespace's ResourceQuota "
            "team-analytics-compute is nearly used up by 14 analysts' notebooks (62Gi of 64Gi): the ReplicaSet's "
            "pod creations are refused (FailedCreate 'exceeded quota'), the Deployment reports ReplicaFailure and "
            "stays at 3 replicas, and quarter-close dashboards are slow. No pod is Pending; none was ever created."
        ),
        key_evidence=["exceeded quota: team-analytics-compute", "FailedCreate"],
    )
    return p


PACKS = [search_slow_during_sale, embedding_backlog, ledger_replica_pending, reports_api_missing_replicas]
