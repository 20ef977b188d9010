"""Volumes (FailedMount, FailedAttachVolume, ProvisioningFailed, a missing StorageClass), jobs, container config."""

from __future__ import annotations

from tests.incidents.corpus.kit import (
    Pack,
    container,
    healthy_pod,
    running,
    status,
    suffix,
    terminated,
    unschedulable,
    waiting,
)


def grafana_containercreating() -> Pack:
    """FailedMount: the TLS secret does not exist because cert-manager cannot complete its ACME challenge."""
    p = Pack(
        "grafana-containercreating",
        title="Grafana down after the cluster upgrade",
        description=(
            "Observability namespace. grafana serves dashboards behind its own TLS listener; its certificate "
            "comes from cert-manager (Let's Encrypt, HTTP-01). The cluster was upgraded and the namespace was "
            "re-created from Git this morning. Recorded: Pods and events."
        ),
        question="Grafana is down after the cluster upgrade; its pod is stuck in ContainerCreating. Why?",
        start="2025-01-14T09:00:00Z",
        minutes=40,
    )
    p.service("grafana", "http", namespace="observability", depends_on=["prometheus-server"])
    p.service("prometheus-server", "database", namespace="observability")
    p.service("alertmanager", "http", namespace="observability")
    ns = "observability"
    image = "docker.io/grafana/grafana:11.4.0"
    gh = suffix("gr", length=10)
    pod = f"grafana-{gh}-{suffix('gr')}"
    node = "ip-10-20-4-18.ec2.internal"
    p.pod(
        pod,
        ns,
        labels={"app.kubernetes.io/name": "grafana", "pod-template-hash": gh},
        node=node,
        created=2.0,
        owner=("ReplicaSet", f"grafana-{gh}"),
        phase="Pending",
        containers=[
            container(
                "grafana",
                image,
                port=3000,
                mounts=[
                    {"name": "tls", "mountPath": "/etc/grafana/tls", "readOnly": True},
                    {"name": "storage", "mountPath": "/var/lib/grafana"},
                ],
            )
        ],
        volumes=[
            {"name": "tls", "secret": {"secretName": "grafana-tls", "defaultMode": 420}},
            {"name": "storage", "emptyDir": {}},
        ],
        statuses=[status(p, "grafana", image, state=waiting("ContainerCreating"), ready=False, started=False)],
    )
    p.scheduled(2.0, ns, pod, node)
    events = p.events_of(ns, "Pod", pod, host=node, type="Warning")
    events(
        2.05,
        "FailedMount",
        'MountVolume.SetUp failed for volume "tls" : secret "grafana-tls" not found',
        count=19,
        last=38.5,
    )
    events(
        4.1,
        "FailedMount",
        "Unable to attach or mount volumes: unmounted volumes=[tls], "
        "unattached volumes=[], failed to process volumes=[]: timed out waiting for the condition",
        count=16,
        last=38.2,
    )
    events = p.events_of(ns, "Certificate", "grafana-tls", api_version="cert-manager.io/v1")
    events(
        1.0, "Issuing", "Issuing certificate as Secret does not exist", component="cert-manager-certificates-trigger"
    )
    events(
        1.02,
        "Requested",
        'Created new CertificateRequest resource "grafana-tls-1"',
        component="cert-manager-certificates-request-manager",
    )
    events = p.events_of(
        ns,
        "Challenge",
        "grafana-tls-1-2938811504-1761913011",
        component="cert-manager-challenges",
        api_version="acme.cert-manager.io/v1",
    )
    events(1.5, "Presented", "Presented challenge using HTTP-01 challenge mechanism")
    events(
        3.0,
        "Failed",
        "Accepting challenge authorization failed: acme: authorization error for grafana.ops.acme.io: 403 "
        "urn:ietf:params:acme:error:unauthorized: 52.18.44.120: Invalid response from "
        "http://grafana.ops.acme.io/.well-known/acme-challenge/k4Yp2Q8xZw0bV1nR: 404",
        type="Warning",
    )
    p.event(
        3.1,
        ns,
        "Order",
        "grafana-tls-1-2938811504",
        "Failed",
        "Order failed, authorization for grafana.ops.acme.io failed",
        type="Warning",
        component="cert-manager-orders",
        api_version="acme.cert-manager.io/v1",
    )
    for name, app, img in (
        ("prometheus-server-0", "prometheus", "quay.io/prometheus/prometheus:v3.1.0"),
        ("alertmanager-0", "alertmanager", "quay.io/prometheus/alertmanager:v0.28.0"),
    ):
        p.pod(
            name,
            ns,
            labels={"app.kubernetes.io/name": app},
            node=node,
            created=1.0,
            owner=("StatefulSet", name.rsplit("-", 1)[0]),
            ip=f"10.20.4.{60 + len(app)}",
            containers=[container(app, img, port=9090)],
            statuses=[status(p, app, img, state=running(p, 1.5))],
        )
    p.event(
        1.6,
        ns,
        "Pod",
        "prometheus-server-0",
        "Unhealthy",
        'Readiness probe failed: Get "http://10.20.4.70:9090/-/ready": dial tcp 10.20.4.70:9090: connect: '
        "connection refused",
        type="Warning",
        host=node,
        field_path="spec.containers{prometheus}",
        count=3,
        last=1.9,
    )
    p.truth(
        kind="failed_mount",
        service="grafana",
        summary=(
            "grafana's pod mounts Secret grafana-tls, which does not exist yet: cert-manager's HTTP-01 challenge "
            "for grafana.ops.acme.io fails (404 from the re-created ingress), the Order fails and the Secret is "
            'never written, so the kubelet cannot set up the volume (\'MountVolume.SetUp failed for volume "tls" : '
            "secret \"grafana-tls\" not found') and the pod stays in ContainerCreating. Prometheus's readiness "
            "blip at start-up is normal."
        ),
        key_evidence=['secret "grafana-tls" not found', "FailedMount"],
    )
    return p


def kafka_broker_multiattach() -> Pack:
    """FailedAttachVolume Multi-Attach after a node failure; producers see NOT_ENOUGH_REPLICAS."""
    p = Pack(
        "kafka-broker-multiattach",
        title="Orders producer errors: not enough replicas",
        description=(
            "Streaming namespace. kafka (StatefulSet of 3 brokers on EBS gp3 volumes, min.insync.replicas=2). "
            "Node ip-10-3-2-87 stopped responding at 04:06. Recorded: events (built-in and raw), Pods, producer "
            "logs, broker metrics."
        ),
        question="orders-api can't publish to Kafka: NotEnoughReplicas. What's wrong with the kafka cluster?",
        start="2025-07-23T04:00:00Z",
        minutes=40,
    )
    p.service("orders-api", "http", namespace="orders", depends_on=["kafka"])
    p.service("kafka", "queue", namespace="streaming")
    p.service("schema-registry", "http", namespace="streaming", depends_on=["kafka"])
    ns = "streaming"
    image = "docker.io/bitnami/kafka:3.7.1"
    old_node, new_node = "ip-10-3-2-87.ec2.internal", "ip-10-3-3-140.ec2.internal"
    vol = "pvc-5d0e1c7a-3b44-4f2e-9a51-7be0c1d2e3f4"
    p.k8s_event(6.0, "default", "Node", old_node, "NodeNotReady", f"Node {old_node} status is now: NodeNotReady")
    events = p.k8s_events_of(ns, "Pod", "kafka-2", service="kafka")
    events(11.0, "TaintManagerEviction", "Marking for deletion Pod streaming/kafka-2")
    events(11.5, "Scheduled", f"Successfully assigned streaming/kafka-2 to {new_node}")
    events = p.events_of(ns, "Pod", "kafka-2", type="Warning")
    events(
        11.6,
        "FailedAttachVolume",
        f'Multi-Attach error for volume "{vol}" Volume is already exclusively attached to one node and can\'t be '
        "attached to another",
        component="attachdetach-controller",
        count=1,
    )
    events(
        13.6,
        "FailedMount",
        "Unable to attach or mount volumes: unmounted volumes=[data], "
        "unattached volumes=[data kube-api-access-7wq4k]: timed out waiting for the condition",
        host=new_node,
        count=12,
        last=37.7,
    )
    p.pod(
        "kafka-2",
        ns,
        labels={"app.kubernetes.io/name": "kafka", "statefulset.kubernetes.io/pod-name": "kafka-2"},
        node=new_node,
        created=11.5,
        owner=("StatefulSet", "kafka"),
        phase="Pending",
        containers=[
            container(
                "kafka",
                image,
                port=9092,
                cpu="2",
                memory="8Gi",
                limit_memory="8Gi",
                mounts=[{"name": "data", "mountPath": "/bitnami/kafka"}],
            )
        ],
        volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data-kafka-2"}}],
        statuses=[status(p, "kafka", image, state=waiting("ContainerCreating"), ready=False, started=False)],
    )
    for i in range(2):
        p.pod(
            f"kafka-{i}",
            ns,
            labels={"app.kubernetes.io/name": "kafka", "statefulset.kubernetes.io/pod-name": f"kafka-{i}"},
            node=f"ip-10-3-{i + 1}-{40 + i}.ec2.internal",
            created=-80000,
            owner=("StatefulSet", "kafka"),
            ip=f"10.3.{i + 1}.{101 + i}",
            containers=[container("kafka", image, port=9092)],
            statuses=[status(p, "kafka", image, state=running(p, -80000))],
        )
    for k in range(26):
        m = 12.0 + k
        p.log(
            m,
            "orders-api",
            "ERROR",
            f"{p.clock(m, '%Y-%m-%d %H:%M:%S.{ms}')} ERROR [kafka-producer-network-thread | orders-api-1] "
            "o.a.k.c.p.i.Sender : [Producer clientId=orders-api-1] Got error produce response with correlation id "
            f"{880120 + k * 17} on topic-partition orders.created-{k % 6}, retrying (2147483646 attempts left). "
            "Error: NOT_ENOUGH_REPLICAS",
        )
    p.log(
        38.0,
        "orders-api",
        "ERROR",
        "org.apache.kafka.common.errors.NotEnoughReplicasException: Messages are "
        "rejected since there are fewer in-sync replicas than required.",
    )
    p.log(
        20.0,
        "schema-registry",
        "WARN",
        "[2025-07-23 04:20:00,118] WARN [Producer clientId=producer-1] Connection "
        "to node 2 (kafka-2.kafka-headless.streaming.svc.cluster.local/"
        "10.3.2.103:9092) could not be established. Node may not be available.",
    )
    p.metric(
        "kafka_server_replicamanager_underreplicatedpartitions",
        "kafka",
        "partitions",
        [0] * 7 + [96] * 33,
        labels={"broker": "0"},
    )
    p.metric("kafka_controller_kafkacontroller_offlinepartitionscount", "kafka", "partitions", [0] * 40)
    p.metric(
        "http_requests_error_rate", "orders-api", "ratio", [0.001] * 12 + [0.38 + (m % 4) * 0.02 for m in range(28)]
    )
    p.truth(
        kind="failed_attach_volume",
        service="kafka",
        summary=(
            "Node ip-10-3-2-87 went NotReady and broker kafka-2 was evicted to another node, but its EBS volume is "
            "still attached to the dead node ('Multi-Attach error for volume ... Volume is already exclusively "
            "attached to one node'), so kafka-2 stays in ContainerCreating. With one of three brokers gone, 96 "
            "partitions are under-replicated and acks=all producers with min.insync.replicas=2 get "
            "NOT_ENOUGH_REPLICAS on partitions whose other replica is lagging. schema-registry's warning is the "
            "same missing broker."
        ),
        key_evidence=["Multi-Attach error for volume", "NOT_ENOUGH_REPLICAS"],
        ambiguous=True,
    )
    return p


def clickhouse_shard_pending() -> Pack:
    """ProvisioningFailed from the CSI driver: the StorageClass's KMS key is pending deletion."""
    p = Pack(
        "clickhouse-shard-pending",
        title="New ClickHouse shard not starting",
        description=(
            "Analytics namespace. clickhouse runs as a StatefulSet per shard with volumes from StorageClass "
            "gp3-encrypted (EBS CSI, customer-managed KMS key). A third shard was added for the quarter."
        ),
        question="The new clickhouse shard has been Pending for half an hour. Why?",
        start="2025-10-01T10:00:00Z",
        minutes=40,
    )
    p.service("clickhouse", "database", namespace="analytics")
    p.service("ingest-router", "worker", namespace="analytics", depends_on=["clickhouse"])
    p.service("superset", "http", namespace="analytics", depends_on=["clickhouse"])
    ns = "analytics"
    pvc = "data-clickhouse-shard2-0"
    err = (
        'failed to provision volume with StorageClass "gp3-encrypted": rpc error: code = Internal desc = Could not '
        'create volume "pvc-8f2b6c1e-77d4-4a10-b3c9-2e5f0a1d9c44": could not create volume in EC2: operation error '
        "EC2: CreateVolume, https response error StatusCode: 400, RequestID: 6b0f31c2-4d8e-4a77-9c1b-0e2f5a6d7b88, "
        "api error InvalidKMSKey.InvalidState: arn:aws:kms:eu-west-1:111122223333:key/7c1f2e9a-3b4d-4e8f-a1b2-"
        "c3d4e5f6a7b8 is pending deletion."
    )
    msg = (
        "0/9 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/9 nodes are "
        "available: 9 Preemption is not helpful for scheduling."
    )
    p.pod(
        "clickhouse-shard2-0",
        ns,
        labels={
            "app.kubernetes.io/name": "clickhouse",
            "clickhouse.altinity.com/shard": "2",
            "statefulset.kubernetes.io/pod-name": "clickhouse-shard2-0",
        },
        node=None,
        created=4.0,
        owner=("StatefulSet", "clickhouse-shard2"),
        phase="Pending",
        containers=[
            container(
                "clickhouse",
                "docker.io/clickhouse/clickhouse-server:24.8",
                port=8123,
                cpu="4",
                memory="32Gi",
                limit_memory="32Gi",
                mounts=[{"name": "data", "mountPath": "/var/lib/clickhouse"}],
            )
        ],
        volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": pvc}}],
        conditions=unschedulable(p, 4.0, msg),
    )
    p.event(
        4.0,
        ns,
        "Pod",
        "clickhouse-shard2-0",
        "FailedScheduling",
        msg,
        type="Warning",
        component="default-scheduler",
        new_api=True,
        count=8,
        last=36.0,
    )
    events = p.events_of(ns, "PersistentVolumeClaim", pvc)
    events(
        4.01,
        "ExternalProvisioning",
        "Waiting for a volume to be created either by the external provisioner 'ebs.csi.aws.com' or manually by "
        "the system administrator. If volume creation is delayed, please verify that the provisioner is running "
        "and correctly registered.",
        component="persistentvolume-controller",
        count=140,
        last=39.8,
    )
    events(
        4.02,
        "Provisioning",
        f'External provisioner is provisioning volume for claim "{ns}/{pvc}"',
        component="ebs.csi.aws.com_ebs-csi-controller-6d9f8b7c5d-2kq8w_5b1e7c20-8f3a-4d2b-9e61-7a0c3d2f1e4b",
        count=14,
        last=38.0,
    )
    events(
        4.3,
        "ProvisioningFailed",
        err,
        type="Warning",
        component="ebs.csi.aws.com_ebs-csi-controller-6d9f8b7c5d-2kq8w_5b1e7c20-8f3a-4d2b-9e61-7a0c3d2f1e4b",
        count=14,
        last=38.0,
    )
    for s in range(2):
        name = f"clickhouse-shard{s}-0"
        p.pod(
            name,
            ns,
            labels={"app.kubernetes.io/name": "clickhouse", "clickhouse.altinity.com/shard": str(s)},
            node=f"ip-10-14-{s + 1}-{77 + s}.eu-west-1.compute.internal",
            created=-400000,
            owner=("StatefulSet", f"clickhouse-shard{s}"),
            ip=f"10.14.{s + 1}.{30 + s}",
            containers=[container("clickhouse", "docker.io/clickhouse/clickhouse-server:24.8", port=8123)],
            statuses=[
                status(p, "clickhouse", "docker.io/clickhouse/clickhouse-server:24.8", state=running(p, -400000))
            ],
        )
    ir = suffix("ir2", length=10)
    healthy_pod(
        p,
        name=f"ingest-router-{ir}-{suffix('ir2')}",
        namespace=ns,
        app="ingest-router",
        rs=f"ingest-router-{ir}",
        template_hash=ir,
        node="ip-10-14-1-77.eu-west-1.compute.internal",
        container_name="router",
        image="registry.acme.io/analytics/ingest-router:5.1.0",
        created=-9000,
        ip="10.14.1.61",
    )
    p.event(
        15.0,
        ns,
        "Pod",
        f"ingest-router-{ir}-{suffix('ir2')}",
        "Unhealthy",
        "Readiness probe failed: HTTP probe failed with statuscode: 429",
        type="Warning",
        host="ip-10-14-1-77.eu-west-1.compute.internal",
        field_path="spec.containers{router}",
        count=2,
        last=15.2,
    )
    p.truth(
        kind="provisioning_failed",
        service="clickhouse",
        summary=(
            "The new shard's claim data-clickhouse-shard2-0 cannot be provisioned: the EBS CSI driver's CreateVolume "
            "is refused because the StorageClass's KMS key is pending deletion (ProvisioningFailed ... "
            "InvalidKMSKey.InvalidState), so the claim stays unbound and clickhouse-shard2-0 Pending ('pod has "
            "unbound immediate PersistentVolumeClaims'). ingest-router's 429 readiness blip is rate limiting."
        ),
        key_evidence=["ProvisioningFailed", "InvalidKMSKey.InvalidState"],
    )
    return p


def minio_pool_pending() -> Pack:
    """A StorageClass that does not exist on this cluster: ProvisioningFailed, storageclass ... not found."""
    p = Pack(
        "minio-pool-pending",
        title="MinIO expansion stuck",
        description=(
            "Storage namespace on a GKE cluster. minio is being expanded with a second server pool; the Helm values "
            "were copied from the AKS cluster. Recorded with the built-in tools (events) and raw Pods."
        ),
        question="The minio expansion is stuck: the new pool's pods never start. Why?",
        start="2025-11-04T13:00:00Z",
        minutes=30,
    )
    p.service("minio", "database", namespace="storage")
    p.service("backup-uploader", "worker", namespace="storage", depends_on=["minio"])
    ns = "storage"
    msg = (
        "0/4 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/4 nodes are "
        "available: 4 Preemption is not helpful for scheduling."
    )
    for i in range(4):
        pod = f"minio-pool-1-{i}"
        pvc = f"data0-minio-pool-1-{i}"
        p.pod(
            pod,
            ns,
            labels={"app": "minio", "v1.min.io/pool": "pool-1"},
            node=None,
            created=2.0 + i * 0.01,
            owner=("StatefulSet", "minio-pool-1"),
            phase="Pending",
            containers=[
                container(
                    "minio",
                    "quay.io/minio/minio:RELEASE.2025-10-15T17-29-55Z",
                    port=9000,
                    mounts=[{"name": "data0", "mountPath": "/export0"}],
                )
            ],
            volumes=[{"name": "data0", "persistentVolumeClaim": {"claimName": pvc}}],
            conditions=unschedulable(p, 2.0, msg),
        )
        p.k8s_event(
            2.1 + i * 0.01,
            ns,
            "PersistentVolumeClaim",
            pvc,
            "ProvisioningFailed",
            'storageclass.storage.k8s.io "managed-csi-premium" not found',
            type="Warning",
            count=120,
            service="minio",
        )
        p.k8s_event(2.2 + i * 0.01, ns, "Pod", pod, "FailedScheduling", msg, type="Warning", count=6, service="minio")
    for i in range(4):
        p.pod(
            f"minio-pool-0-{i}",
            ns,
            labels={"app": "minio", "v1.min.io/pool": "pool-0"},
            node=f"gke-storage-pool-8a1b2c3d-{suffix('mn', i, length=4)}",
            created=-500000,
            owner=("StatefulSet", "minio-pool-0"),
            ip=f"10.88.{i}.12",
            containers=[container("minio", "quay.io/minio/minio:RELEASE.2025-10-15T17-29-55Z", port=9000)],
            statuses=[
                status(p, "minio", "quay.io/minio/minio:RELEASE.2025-10-15T17-29-55Z", state=running(p, -500000))
            ],
        )
    p.k8s_event(
        1.0,
        ns,
        "StatefulSet",
        "minio-pool-1",
        "SuccessfulCreate",
        "create Claim data0-minio-pool-1-0 Pod minio-pool-1-0 in StatefulSet minio-pool-1 success",
        service="minio",
    )
    p.log(
        10.0,
        "minio",
        "WARN",
        "API: SYSTEM.storage\nTime: 13:10:00 UTC 11/04/2025\nDeploymentID: 6e1c2f0a-3b44-"
        "4f2e-9a51-7be0c1d2e3f4\nError: Disk https://minio-pool-1-0.minio-hl.storage.svc."
        "cluster.local:9000/export0 is offline (*errors.errorString)",
    )
    p.log(
        12.0,
        "backup-uploader",
        "WARN",
        "restic: Save(<data/3f9a1c2b>) returned error, retrying after 720ms: "
        "client.PutObject: We encountered an internal error, please try again.",
    )
    p.log(12.1, "backup-uploader", "INFO", "restic: snapshot 8c1e4a2f saved")
    p.truth(
        kind="missing_storage_class",
        service="minio",
        summary=(
            "The new pool's claims ask for StorageClass managed-csi-premium, which exists on AKS but not on this GKE "
            'cluster (ProvisioningFailed: storageclass.storage.k8s.io "managed-csi-premium" not found), so no '
            "volume is ever provisioned and the four minio-pool-1 pods stay Pending. MinIO's 'disk offline' and the "
            "backup retry are the same missing pool, seen from inside."
        ),
        key_evidence=['storageclass.storage.k8s.io "managed-csi-premium" not found'],
    )
    return p


def nightly_etl_failed() -> Pack:
    """BackoffLimitExceeded; the failing container's last lines name the reason (a column renamed upstream)."""
    p = Pack(
        "nightly-etl-failed",
        title="Nightly ETL did not finish",
        description=(
            "Data namespace. CronJob nightly-etl (Python, psycopg) copies yesterday's orders into the warehouse at "
            "02:00 with backoffLimit 3. Recorded: Pods, events, previous logs."
        ),
        question="The nightly-etl job failed last night and the finance dashboards are empty. Why?",
        start="2025-03-05T02:00:00Z",
        minutes=45,
    )
    p.service("nightly-etl", "worker", namespace="data", depends_on=["orders-db", "warehouse"])
    p.service("cache-warmer", "worker", namespace="data")
    p.service("orders-db", "database", namespace="orders")
    p.service("warehouse", "database", namespace="data")
    ns = "data"
    job = "nightly-etl-29019720"
    image = "registry.acme.io/data/nightly-etl:2025.02.27"
    tail = [
        "2025-03-05 02:%02d:04,118 INFO etl.extract: extracting orders for 2025-03-04 from orders-db",
        "2025-03-05 02:%02d:04,920 INFO etl.extract: 412,883 rows in orders.orders, 1,204,117 in orders.order_lines",
        "Traceback (most recent call last):",
        '  File "/app/etl/extract.py", line 57, in extract_orders',
        '    cur.execute(ORDERS_SQL, {"day": day})',
        '  File "/usr/local/lib/python3.12/site-packages/psycopg/cursor.py", line 732, in execute',
        "    raise ex.with_traceback(None)",
        'psycopg.errors.UndefinedColumn: column "discount_code" does not exist',
        "LINE 1: SELECT o.id, o.customer_id, o.total_cents, o.discount_code, o...",
        "                                                   ^",
        'HINT:  Perhaps you meant to reference the column "o.promo_code".',
    ]
    for k in range(4):
        pod = f"{job}-{suffix(job, k)}"
        start = [0.1, 0.3, 0.7, 1.4][k]
        p.pod(
            pod,
            ns,
            labels={
                "batch.kubernetes.io/job-name": job,
                "job-name": job,
                "batch.kubernetes.io/controller-uid": "c1e2" + suffix("uid", length=4),
            },
            node=f"ip-10-9-{k % 2 + 1}-{33 + k}.ec2.internal",
            created=start,
            owner=("Job", job),
            phase="Failed",
            restart_policy="Never",
            containers=[container("etl", image, port=None, memory="1Gi", limit_memory="2Gi")],
            statuses=[
                status(p, "etl", image, ready=False, state=terminated(p, "Error", 1, start + 0.1, start + 0.2, cid=pod))
            ],
        )
        p.pod_log(ns, pod, [line % (int(start)) if "%02d" in line else line for line in tail], container="etl")
        p.event(start, ns, "Job", job, "SuccessfulCreate", f"Created pod: {pod}", component="job-controller")
    p.event(
        1.6,
        ns,
        "Job",
        job,
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
        type="Warning",
        component="job-controller",
    )
    events = p.events_of(ns, "CronJob", "nightly-etl", component="cronjob-controller")
    events(0.0, "SuccessfulCreate", f"Created job {job}")
    events(1.7, "SawCompletedJob", f"Saw completed job: {job}, status: Failed")
    # Red herring: cache-warmer's job failed once (a spot node went away) and succeeded on retry.
    cw = "cache-warmer-29019725"
    events = p.events_of(ns, "Job", cw, component="job-controller")
    events(5.0, "SuccessfulCreate", f"Created pod: {cw}-{suffix(cw, 0)}")
    events(7.0, "SuccessfulCreate", f"Created pod: {cw}-{suffix(cw, 1)}")
    events(9.0, "Completed", "Job completed")
    p.pod(
        f"{cw}-{suffix(cw, 0)}",
        ns,
        labels={"job-name": cw},
        node="ip-10-9-3-201.ec2.internal",
        created=5.0,
        owner=("Job", cw),
        phase="Failed",
        restart_policy="Never",
        reason="Terminated",
        message="Pod was terminated in response to imminent node shutdown.",
        containers=[container("warmer", "registry.acme.io/data/cache-warmer:1.4.2", port=None)],
        statuses=[
            status(
                p,
                "warmer",
                "registry.acme.io/data/cache-warmer:1.4.2",
                ready=False,
                state=terminated(p, "Error", 143, 5.1, 6.6, cid=cw),
            )
        ],
    )
    p.event(
        6.5,
        "default",
        "Node",
        "ip-10-9-3-201.ec2.internal",
        "SpotInterrupted",
        "Spot interruption warning received; node will be terminated",
        type="Warning",
        component="aws-node-termination-handler",
    )
    p.truth(
        kind="job_backoff_limit",
        service="nightly-etl",
        summary=(
            "Every attempt of job nightly-etl-29019720 fails within seconds on 'psycopg.errors.UndefinedColumn: "
            "column \"discount_code\" does not exist' (orders-db renamed it to promo_code in last week's "
            "migration), and after four attempts the Job stops with BackoffLimitExceeded, so the warehouse has no "
            "data for 2025-03-04. cache-warmer's failed pod was a spot interruption; its retry succeeded."
        ),
        key_evidence=["BackoffLimitExceeded", 'column "discount_code" does not exist'],
    )
    return p


def db_backup_deadline() -> Pack:
    """DeadlineExceeded: the backup job is killed at its activeDeadlineSeconds; its log shows why it was slow."""
    p = Pack(
        "db-backup-deadline",
        title="Database backup missing",
        description=(
            "Platform namespace. CronJob db-backup dumps orders-db and uploads it to object storage with "
            "activeDeadlineSeconds 3600. The backup alert fired at 04:00. Recorded with the built-in tools."
        ),
        question="Last night's db-backup never completed. What happened?",
        start="2025-04-09T02:55:00Z",
        minutes=70,
    )
    p.service("db-backup", "worker", namespace="platform", depends_on=["orders-db", "backup-bucket"])
    p.service("orders-db", "database", namespace="orders")
    p.service("backup-bucket", "external")
    p.service("nat-gateway", "external")
    job = "db-backup-29069460"
    pod = f"{job}-{suffix(job)}"
    p.k8s_event(5.0, "platform", "CronJob", "db-backup", "SuccessfulCreate", f"Created job {job}", service="db-backup")
    p.k8s_event(5.01, "platform", "Job", job, "SuccessfulCreate", f"Created pod: {pod}", service="db-backup")
    p.k8s_event(5.1, "platform", "Pod", pod, "Started", "Started container backup", service="db-backup")
    p.k8s_event(
        65.0,
        "platform",
        "Job",
        job,
        "DeadlineExceeded",
        "Job was active longer than specified deadline",
        type="Warning",
        service="db-backup",
    )
    p.k8s_event(65.01, "platform", "Pod", pod, "Killing", "Stopping container backup", service="db-backup")
    p.log(5.2, "db-backup", "INFO", "pg_dump: dumping orders (format=custom, jobs=4)")
    p.log(19.0, "db-backup", "INFO", "pg_dump finished: 61.8 GiB in 13m48s")
    total = 3956
    for k in range(20):
        m = 20.0 + k * 2.2
        done = int(60 + k * 70.5)
        rate = 2.1 if k > 2 else 38.0
        p.log(
            m,
            "db-backup",
            "INFO",
            f"upload progress: part {done}/{total} ({done * 100 // total}%), throughput {rate} MiB/s, "
            f"eta {int((total - done) * 16 / rate / 60)}m",
        )
    p.log(
        26.0,
        "db-backup",
        "WARN",
        "s3: RequestTimeout on part 281, retry 1/5 (Your socket connection to the server "
        "was not read from or written to within the timeout period.)",
    )
    p.log(64.9, "db-backup", "INFO", "upload progress: part 1480/3956 (37%), throughput 1.9 MiB/s, eta 1085m")
    p.metric(
        "nat_gateway_bytes_out_per_s",
        "nat-gateway",
        "bytes/s",
        [4.1e7] * 25 + [2.2e6 + (m % 5) * 1e5 for m in range(45)],
        labels={"gateway": "nat-0a1b2c3d"},
    )
    p.metric(
        "nat_gateway_packets_drop_count",
        "nat-gateway",
        "count/min",
        [0] * 25 + [18_000 + m * 40 for m in range(45)],
        labels={"gateway": "nat-0a1b2c3d"},
    )
    p.log(30.0, "orders-db", "INFO", "2025-04-09 03:25:00.019 UTC [71] LOG:  checkpoint complete: wrote 2188 buffers")
    p.truth(
        kind="job_deadline_exceeded",
        service="db-backup",
        summary=(
            "db-backup's upload to the bucket drops from ~38 MiB/s to ~2 MiB/s shortly after it starts (the NAT "
            "gateway starts dropping packets at 03:20), so after an hour only 37% of the parts are uploaded and "
            "the job is killed at its deadline ('Job was active longer than specified deadline', DeadlineExceeded). "
            "orders-db and the dump itself are fine."
        ),
        key_evidence=["DeadlineExceeded", "Job was active longer than specified deadline"],
    )
    return p


def payouts_config_error() -> Pack:
    """CreateContainerConfigError: a Secret key the new release needs is missing. Kubernetes only."""
    p = Pack(
        "payouts-config-error",
        title="payouts-api release not rolling out",
        description=(
            "Payouts namespace. payouts-api (Node.js) pays sellers through the PSP and receives its webhooks. "
            "Release 7.0.0 adds webhook signature checks. Recorded with kubectl."
        ),
        question="The payouts-api 7.0 release is stuck and the new pods show an error. What's missing?",
        start="2025-02-26T11:00:00Z",
        minutes=30,
    )
    p.service("payouts-api", "http", namespace="payouts", depends_on=["payouts-db"])
    p.service("payouts-db", "database", namespace="payouts")
    p.service("seller-portal", "http", namespace="payouts", depends_on=["payouts-api"])
    ns = "payouts"
    sel = {"app.kubernetes.io/name": "payouts-api"}
    new_image = "registry.acme.io/payouts/payouts-api:7.0.0"
    old_image = "registry.acme.io/payouts/payouts-api:6.9.3"
    oh, nh = suffix("po-old", length=10), suffix("po-new", length=9)
    p.deployment(
        "payouts-api",
        ns,
        selector=sel,
        replicas=3,
        revision=44,
        image=new_image,
        container="api",
        created=-300000,
        ready=2,
        updated=1,
    )
    p.replicaset(
        "payouts-api", ns, oh, selector=sel, revision=43, image=old_image, container="api", created=-60000, replicas=2
    )
    p.replicaset(
        "payouts-api",
        ns,
        nh,
        selector=sel,
        revision=44,
        image=new_image,
        container="api",
        created=4.0,
        replicas=1,
        ready=0,
    )
    events = p.events_of(ns, "Deployment", "payouts-api", component="deployment-controller")
    events(4.0, "ScalingReplicaSet", f"Scaled up replica set payouts-api-{nh} to 1 from 0")
    events(4.01, "ScalingReplicaSet", f"Scaled down replica set payouts-api-{oh} to 2 from 3")
    for i in range(2):
        healthy_pod(
            p,
            name=f"payouts-api-{oh}-{suffix('po-old', i)}",
            namespace=ns,
            app="payouts-api",
            rs=f"payouts-api-{oh}",
            template_hash=oh,
            node=f"pool-apps-{suffix('n', i, length=5)}",
            container_name="api",
            image=old_image,
            created=-60000,
            ip=f"10.110.{i}.{19 + i}",
            port=3000,
        )
    bad = f"payouts-api-{nh}-{suffix('po-new')}"
    node = "pool-apps-" + suffix("n", 2, length=5)
    reason = "couldn't find key PSP_WEBHOOK_SIGNING_KEY in Secret payouts/payouts-api-env"
    p.pod(
        bad,
        ns,
        labels={**sel, "pod-template-hash": nh},
        node=node,
        created=4.0,
        owner=("ReplicaSet", f"payouts-api-{nh}"),
        ip="10.110.2.77",
        phase="Pending",
        containers=[
            container(
                "api",
                new_image,
                port=3000,
                env=[
                    {"name": "NODE_ENV", "value": "production"},
                    {
                        "name": "PSP_WEBHOOK_SIGNING_KEY",
                        "valueFrom": {"secretKeyRef": {"name": "payouts-api-env", "key": "PSP_WEBHOOK_SIGNING_KEY"}},
                    },
                    {
                        "name": "DATABASE_URL",
                        "valueFrom": {"secretKeyRef": {"name": "payouts-api-env", "key": "DATABASE_URL"}},
                    },
                ],
            )
        ],
        statuses=[
            status(p, "api", new_image, state=waiting("CreateContainerConfigError", reason), ready=False, started=False)
        ],
    )
    field = "spec.containers{api}"
    p.scheduled(4.0, ns, bad, node)
    events = p.events_of(ns, "Pod", bad, host=node, field_path=field)
    events(4.05, "Pulled", f'Container image "{new_image}" already present on machine', count=140, last=29.8)
    events(4.06, "Failed", f"Error: {reason}", type="Warning", count=140, last=29.8)
    p.event(
        1.0,
        ns,
        "Pod",
        f"payouts-api-{oh}-{suffix('po-old', 0)}",
        "DNSConfigForming",
        "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: "
        "10.96.0.10 169.254.169.254 10.110.0.2",
        type="Warning",
        host=f"pool-apps-{suffix('n', 0, length=5)}",
        count=212,
        last=28.0,
    )
    sp = suffix("sp", length=10)
    healthy_pod(
        p,
        name=f"seller-portal-{sp}-{suffix('sp')}",
        namespace=ns,
        app="seller-portal",
        rs=f"seller-portal-{sp}",
        template_hash=sp,
        node=node,
        container_name="web",
        image="registry.acme.io/payouts/seller-portal:3.2.0",
        created=-80000,
        ip="10.110.2.30",
        port=3000,
    )
    p.truth(
        kind="create_container_config_error",
        service="payouts-api",
        summary=(
            "payouts-api 7.0.0 reads PSP_WEBHOOK_SIGNING_KEY from Secret payouts-api-env, which has no such key yet: "
            "the kubelet cannot build the container's environment (CreateContainerConfigError: couldn't find key "
            "PSP_WEBHOOK_SIGNING_KEY in Secret payouts/payouts-api-env), so the new pod never starts and the "
            "rollout waits while two 6.9.3 pods serve. The DNSConfigForming warning is a long-standing node setting."
        ),
        key_evidence=[
            "couldn't find key PSP_WEBHOOK_SIGNING_KEY in Secret payouts/payouts-api-env",
            "CreateContainerConfigError",
        ],
    )
    return p


def search_ui_configmap_missing() -> Pack:
    """CreateContainerConfigError from a missing ConfigMap (envFrom); the built-in sections only."""
    p = Pack(
        "search-ui-configmap-missing",
        title="search-ui not serving after the namespace move",
        description=(
            "search-ui moved from namespace web to namespace search this morning. Its runtime settings come from a "
            "ConfigMap through envFrom. Recorded with the built-in tools."
        ),
        question="search-ui is down since it moved to the search namespace. Why?",
        start="2025-09-25T08:00:00Z",
        minutes=30,
    )
    p.service("search-ui", "http", namespace="search", depends_on=["search-api"])
    p.service("search-api", "http", namespace="search")
    p.service("edge-proxy", "http", namespace="edge", depends_on=["search-ui"])
    pods = [f"search-ui-{suffix('su', length=10)}-{suffix('su', i)}" for i in range(2)]
    p.deploy(2.0, "search-ui", "5.6.0", "5.6.0", "platform-bot", "Move search-ui to namespace search (no code change)")
    for i, pod in enumerate(pods):
        events = p.k8s_events_of("search", "Pod", pod, service="search-ui")
        events(2.1 + i * 0.02, "Scheduled", f"Successfully assigned search/{pod} to node-{i + 7}.k8s.acme.local")
        events(
            2.2 + i * 0.02,
            "Pulled",
            'Container image "registry.acme.io/search/search-ui:5.6.0" already present on machine',
            count=90,
        )
        events(2.21 + i * 0.02, "Failed", 'Error: configmap "search-ui-runtime" not found', type="Warning", count=90)
    p.k8s_event(
        2.5,
        "web",
        "Pod",
        f"search-ui-{suffix('su-old', length=10)}-{suffix('su-old')}",
        "Killing",
        "Stopping container ui",
    )
    for k in range(28):
        m = 2.3 + k
        p.log(
            m,
            "edge-proxy",
            "WARN",
            f'[{p.clock(m, "%Y-%m-%dT%H:%M:%S.{ms}Z")}] "GET /search?q=boots HTTP/1.1" 503 UH 0 91 0 - '
            '"100.64.1.18" "Mozilla/5.0" "6c1f2e0a-3b44" "www.acme.shop" "-" no_healthy_upstream',
        )
    p.log(1.0, "search-api", "INFO", "GET /v3/query?q=boots 200 31ms")
    p.log(12.0, "search-api", "WARN", "synonyms reload skipped: file unchanged")
    p.metric(
        "http_requests_error_rate", "edge-proxy", "ratio", [0.001, 0.001] + [0.21] * 28, labels={"route": "search-ui"}
    )
    p.truth(
        kind="create_container_config_error",
        service="search-ui",
        summary=(
            "search-ui's Deployment was re-applied in namespace search but its envFrom ConfigMap search-ui-runtime "
            "stayed in namespace web: the kubelet cannot create the container (Failed: Error: configmap "
            '"search-ui-runtime" not found, CreateContainerConfigError), the new pods never start, the old ones '
            "were deleted with the old namespace, and edge-proxy has no healthy upstream (503 UH)."
        ),
        key_evidence=['configmap "search-ui-runtime" not found'],
    )
    return p


PACKS = [
    grafana_containercreating,
    kafka_broker_multiattach,
    clickhouse_shard_pending,
    minio_pool_pending,
    nightly_etl_failed,
    db_backup_deadline,
    payouts_config_error,
    search_ui_configmap_missing,
]
