"""Failing dependencies: DNS, a database refusing connections, timeouts naming the target, slow calls in INFO lines."""

from __future__ import annotations

from tests.incidents.corpus.kit import Pack, container, running, status, suffix


def orders_payments_nxdomain() -> Pack:
    """A renamed Service: 'no such host' from Go, NXDOMAIN in CoreDNS's log; a neighbour's deploy as bait. Loki only."""
    p = Pack(
        "orders-payments-nxdomain",
        title="Checkout fails at the payment step",
        description=(
            "orders-api (Go) charges cards through payments-gateway in namespace payments. Both teams deployed this "
            "afternoon. CoreDNS has its log plugin enabled. Recorded from Loki and the deploy log."
        ),
        question="Checkout fails at the payment step. Is orders-api or the payments side broken?",
        start="2025-06-05T15:00:00Z",
        minutes=40,
    )
    p.service("orders-api", "http", namespace="orders", depends_on=["payments-gateway"])
    p.service("payments-gateway", "http", namespace="payments", depends_on=["psp"])
    p.service("coredns", "http", namespace="kube-system")
    p.service("psp", "external")
    p.deploy(
        8.0,
        "payments-gateway",
        "3.2.0",
        "3.1.7",
        "payments-ci",
        "Rename Service payment-gateway to payments-gateway (old name kept as ExternalName until Friday)",
    )
    p.deploy(
        14.0,
        "orders-api",
        "8.2.0",
        "8.1.4",
        "orders-ci",
        "Read payment endpoint from PAYMENTS_URL; drop the hard-coded default",
    )
    orders = {"namespace": "orders", "app": "orders-api", "container": "api"}
    pods = [f"orders-api-{suffix('oa3', length=10)}-{suffix('oa3', i)}" for i in range(2)]
    for k in range(40):
        m = 0.5 + k * 0.95
        pod = pods[k % 2]
        if m < 14.3:
            line = (
                f'{{"time":"{p.clock(m)}","level":"INFO","msg":"charge ok","order":"ord_{suffix("o", k, length=10)}'
                f'","psp_ms":{310 + k % 7 * 23}}}'
            )
        else:
            line = (
                f'{{"time":"{p.clock(m)}","level":"ERROR","msg":"charge failed","order":"ord_'
                f'{suffix("o", k, length=10)}","error":"Post \\"http://payment-gateway.payments.svc.cluster.local'
                ':8080/v1/charges\\": dial tcp: lookup payment-gateway.payments.svc.cluster.local on '
                '10.96.0.10:53: no such host"}'
            )
        p.stream({**orders, "pod": pod}, [(m, line)])
    dns = {
        "namespace": "kube-system",
        "app": "coredns",
        "container": "coredns",
        "pod": f"coredns-{suffix('cd', length=10)}-{suffix('cd')}",
    }
    p.stream(
        dns,
        [
            (
                14.3 + k * 1.1,
                f'[INFO] 10.244.3.{18 + k % 2}:{53412 + k * 7} - {40177 + k * 13} "A IN '
                'payment-gateway.payments.svc.cluster.local. udp 71 false 1232" NXDOMAIN '
                f"qr,aa,rd 164 0.000{118 + k % 40}s",
            )
            for k in range(22)
        ],
    )
    p.stream(
        dns,
        [
            (
                5.0 + k * 6,
                f'[INFO] 10.244.1.7:{40100 + k} - {9000 + k} "A IN payments-gateway.payments.svc.'
                'cluster.local. udp 62 false 1232" NOERROR qr,aa,rd 112 0.000092s',
            )
            for k in range(6)
        ],
    )
    gw = {
        "namespace": "payments",
        "app": "payments-gateway",
        "container": "gateway",
        "pod": f"payments-gateway-{suffix('pg2', length=10)}-{suffix('pg2')}",
    }
    p.stream(
        gw,
        [(8.5, '{"level":"info","msg":"payments-gateway 3.2.0 listening on :8080"}')]
        + [
            (9 + k * 3, f'{{"level":"info","msg":"POST /v1/charges 201","duration_ms":{290 + k * 5}}}')
            for k in range(10)
        ]
        + [(21.0, '{"level":"warn","msg":"psp rate limited, backing off","status":429,"retry_after_s":2}')],
    )
    p.truth(
        kind="dns_resolution_failure",
        service="orders-api",
        summary=(
            "orders-api 8.2.0 reads its payment endpoint from PAYMENTS_URL, whose value still uses the old Service "
            "name payment-gateway; that name was removed by the payments-gateway rename (its ExternalName alias was "
            "never created), so every lookup is NXDOMAIN ('lookup payment-gateway.payments.svc.cluster.local on "
            "10.96.0.10:53: no such host') and every charge fails. payments-gateway itself is serving; its deploy "
            "and the PSP 429 are not the cause."
        ),
        key_evidence=["no such host", "NXDOMAIN"],
    )
    return p


def webhooks_dns_timeouts() -> Pack:
    """CoreDNS's upstream resolver times out for external names; three client libraries word it three ways."""
    p = Pack(
        "webhooks-dns-timeouts",
        title="Outbound webhooks and partner calls failing",
        description=(
            "webhook-dispatcher (Python, requests) delivers events to partners; shipping-sync (PHP, Guzzle) and "
            "mailer (Node.js) also call external APIs. In-cluster calls are fine. CoreDNS forwards external names "
            "to the VPC resolver. Recorded: built-in logs and metrics."
        ),
        question="Why are webhook-dispatcher deliveries failing? Partners say they get nothing from us.",
        start="2025-08-27T20:00:00Z",
        minutes=40,
    )
    p.service("webhook-dispatcher", "worker", namespace="integrations", depends_on=["coredns"])
    p.service("shipping-sync", "worker", namespace="integrations", depends_on=["coredns"])
    p.service("mailer", "worker", namespace="integrations", depends_on=["coredns"])
    p.service("coredns", "http", namespace="kube-system")
    p.service("events-db", "database", namespace="integrations")
    for k in range(30):
        m = 6.0 + k * 1.1
        host = ["hooks.partner-bank.example", "api.merchant-crm.example", "events.fulfil.example"][k % 3]
        p.log(
            m,
            "webhook-dispatcher",
            "ERROR",
            f"{p.clock(m, '%Y-%m-%d %H:%M:%S,{ms}')} ERROR dispatcher.deliver: delivery "
            f"evt_{suffix('e', k, length=12)} failed: requests.exceptions.ConnectionError: "
            f"HTTPSConnectionPool(host='{host}', port=443): Max "
            'retries exceeded with url: /v2/events (Caused by NameResolutionError("<urllib3.connection.'
            f"HTTPSConnection object at 0x7f3b2c1d{k:04x}>: Failed to resolve '{host}' ([Errno -3] Temporary "
            'failure in name resolution)"))',
        )
    for k in range(6):
        p.log(
            1.0 + k * 0.9,
            "webhook-dispatcher",
            "INFO",
            f"{p.clock(1.0 + k * 0.9, '%Y-%m-%d %H:%M:%S,{ms}')} INFO dispatcher.deliver: delivered "
            f"evt_{suffix('ok', k, length=12)} to hooks.partner-bank.example in 0.21s (200)",
        )
    for k in range(12):
        m = 6.4 + k * 2.7
        p.log(
            m,
            "shipping-sync",
            "ERROR",
            f"[{p.clock(m, '%Y-%m-%dT%H:%M:%S+00:00')}] production.ERROR: cURL error 6: Could not resolve host: "
            "api.shipping-partner.example (see https://curl.haxx.se/libcurl/c/libcurl-errors.html) for "
            "https://api.shipping-partner.example/v1/labels",
        )
    for k in range(8):
        m = 7.1 + k * 3.9
        p.log(
            m,
            "mailer",
            "ERROR",
            "Error: getaddrinfo EAI_AGAIN api.sendgrid.com\n    at GetAddrInfoReqWrap."
            "onlookupall [as oncomplete] (node:dns:120:26) {\n  errno: -3001,\n  code: "
            "'EAI_AGAIN',\n  syscall: 'getaddrinfo',\n  hostname: 'api.sendgrid.com'\n}",
        )
    for k in range(24):
        m = 5.8 + k * 1.4
        name = ["hooks.partner-bank.example", "api.sendgrid.com", "api.shipping-partner.example"][k % 3]
        p.log(
            m,
            "coredns",
            "ERROR",
            f"[ERROR] plugin/errors: 2 {name}. A: read udp 10.244.0.17:{40912 + k * 31}->10.0.0.2:53: i/o timeout",
        )
    p.log(2.0, "coredns", "INFO", "[INFO] plugin/reload: Running configuration SHA512 = 8f1c2ab0e4d5...")
    p.log(20.0, "events-db", "WARN", "2025-08-27 20:20:00.004 UTC [318] WARNING:  there is no transaction in progress")
    p.metric(
        "coredns_forward_requests_timeout_rate",
        "coredns",
        "ratio",
        [0.0] * 5 + [0.62 + (m % 3) * 0.05 for m in range(35)],
        labels={"to": "10.0.0.2:53"},
    )
    p.metric("coredns_dns_responses_servfail_per_s", "coredns", "count/s", [0.1] * 5 + [48 + m % 7 for m in range(35)])
    p.metric(
        "coredns_cache_hits_per_s", "coredns", "count/s", [1900 + m % 30 for m in range(40)], labels={"type": "success"}
    )
    p.metric("webhook_delivery_failures_per_min", "webhook-dispatcher", "count", [0] * 6 + [44] * 34)
    p.truth(
        kind="dns_failure",
        service="coredns",
        summary=(
            "CoreDNS's forwards to the VPC resolver 10.0.0.2 time out ('read udp ...->10.0.0.2:53: i/o timeout'; "
            "both CoreDNS pods run on one node and hit the per-interface DNS packet limit), so external names "
            "cannot be resolved while cached and in-cluster names still work: Python's NameResolutionError, "
            "Guzzle's 'Could not resolve host' and Node's EAI_AGAIN are one failure. events-db's warning is noise."
        ),
        key_evidence=["i/o timeout", "NameResolutionError", "Could not resolve host"],
        ambiguous=True,
    )
    return p


def catalog_mysql_refused() -> Pack:
    """The database restarts after a node drain and spends minutes in crash recovery; clients get refused."""
    p = Pack(
        "catalog-mysql-refused",
        title="Product pages erroring",
        description=(
            "Catalog namespace. catalog-web (PHP) and catalog-importer (Python) use catalog-mysql (a single MySQL "
            "8.0 StatefulSet). The cluster's node pool upgrade ran this morning. Recorded: Pods, events, Loki."
        ),
        question="Product pages error out with database errors. What's wrong with catalog-mysql?",
        start="2025-11-20T06:00:00Z",
        minutes=45,
    )
    p.service("catalog-web", "http", namespace="catalog", depends_on=["catalog-mysql", "catalog-cache"])
    p.service("catalog-importer", "worker", namespace="catalog", depends_on=["catalog-mysql"])
    p.service("catalog-mysql", "database", namespace="catalog")
    p.service("catalog-cache", "cache", namespace="catalog")
    ns = "catalog"
    old_node, node = "gke-prod-default-4f2a9c1e-h7k2", "gke-prod-default-4f2a9c1e-t9m4"
    image = "docker.io/library/mysql:8.0.39"
    p.event(
        2.0,
        "default",
        "Node",
        old_node,
        "NodeNotSchedulable",
        f"Node {old_node} status is now: NodeNotSchedulable",
        host=old_node,
    )
    p.event(
        2.5,
        ns,
        "Pod",
        "catalog-mysql-0",
        "Killing",
        "Stopping container mysql",
        host=old_node,
        field_path="spec.containers{mysql}",
    )
    p.scheduled(3.2, ns, "catalog-mysql-0", node)
    events = p.events_of(ns, "Pod", "catalog-mysql-0")
    events(
        3.25,
        "SuccessfulAttachVolume",
        'AttachVolume.Attach succeeded for volume "pvc-0e4b5c6d-7f81-4a2b-9c3d-5e6f7a8b9c0d"',
        component="attachdetach-controller",
    )
    events(3.9, "Started", "Started container mysql", host=node, field_path="spec.containers{mysql}")
    events(
        4.5,
        "Unhealthy",
        "Readiness probe failed: mysqladmin: connect to server at "
        "'localhost' failed\nerror: 'Can't connect to local MySQL server through socket "
        "'/var/run/mysqld/mysqld.sock' (2)'\nCheck that mysqld is running and that the socket: "
        "'/var/run/mysqld/mysqld.sock' exists!",
        type="Warning",
        host=node,
        field_path="spec.containers{mysql}",
        count=52,
        last=31.0,
    )
    p.pod(
        "catalog-mysql-0",
        ns,
        labels={"app.kubernetes.io/name": "catalog-mysql", "statefulset.kubernetes.io/pod-name": "catalog-mysql-0"},
        node=node,
        created=3.2,
        owner=("StatefulSet", "catalog-mysql"),
        ip="10.52.3.19",
        containers=[container("mysql", image, port=3306, cpu="2", memory="8Gi", limit_memory="8Gi")],
        statuses=[status(p, "mysql", image, state=running(p, 3.9), ready=True)],
    )
    my = {"namespace": ns, "app": "catalog-mysql", "pod": "catalog-mysql-0", "container": "mysql"}
    p.stream(
        my,
        [
            (
                2.6,
                "2025-11-20T06:02:36.118812Z 0 [System] [MY-013172] [Server] Received SHUTDOWN from user <via user "
                "signal>. Shutting down mysqld (Version: 8.0.39).",
            ),
            (
                3.0,
                "2025-11-20T06:03:00.004118Z 0 [Warning] [MY-010909] [Server] /usr/sbin/mysqld: Forcing close of "
                "thread 4412  user: 'catalog'.",
            ),
            (
                3.95,
                "2025-11-20T06:03:57.201336Z 0 [System] [MY-010116] [Server] /usr/sbin/mysqld (mysqld 8.0.39) "
                "starting as process 1",
            ),
            (4.0, "2025-11-20T06:04:00.551002Z 1 [System] [MY-013576] [InnoDB] InnoDB initialization has started."),
            (4.1, "2025-11-20T06:04:06.889120Z 1 [Note] [MY-012557] [InnoDB] Database was not shutdown normally!"),
            (4.11, "2025-11-20T06:04:06.889203Z 1 [Note] [MY-012558] [InnoDB] Starting crash recovery."),
            (9.0, "2025-11-20T06:09:00.330991Z 1 [Note] [MY-013083] [InnoDB] Log background threads are being started"),
            (
                18.0,
                "2025-11-20T06:18:00.120447Z 1 [Note] [MY-012532] [InnoDB] Applying a batch of 2938114 redo log "
                "records ...",
            ),
            (
                29.0,
                "2025-11-20T06:29:00.004221Z 1 [Note] [MY-013086] [InnoDB] Starting to parse redo log at lsn = "
                "948811202211, whereas checkpoint_lsn = 948811202048 and start_lsn = 948811201536",
            ),
            (30.6, "2025-11-20T06:30:36.771206Z 1 [System] [MY-013577] [InnoDB] InnoDB initialization has ended."),
            (
                31.1,
                "2025-11-20T06:31:06.044119Z 0 [System] [MY-010931] [Server] /usr/sbin/mysqld: ready for "
                "connections. Version: '8.0.39'  socket: '/var/run/mysqld/mysqld.sock'  port: 3306  MySQL Community "
                "Server - GPL.",
            ),
        ],
    )
    web = {
        "namespace": ns,
        "app": "catalog-web",
        "container": "php-fpm",
        "pod": f"catalog-web-{suffix('cw3', length=10)}-{suffix('cw3')}",
    }
    entries = []
    for k in range(40):
        m = 2.7 + k * 0.7
        entries.append(
            (
                m,
                f"[{p.clock(m, '%d-%b-%Y %H:%M:%S')} UTC] PHP Fatal error:  Uncaught PDOException: "
                "SQLSTATE[HY000] [2002] Connection refused in /var/www/src/Catalog/ProductRepository.php:41",
            )
        )
    entries += [
        (32.0 + k, f'{p.clock(32.0 + k, "%d/%b/%Y:%H:%M:%S +0000")} "GET /p/sku-{7712 + k}" 200') for k in range(10)
    ]
    p.stream(web, entries)
    imp = {
        "namespace": ns,
        "app": "catalog-importer",
        "container": "importer",
        "pod": f"catalog-importer-{suffix('ci', length=10)}-{suffix('ci')}",
    }
    p.stream(
        imp,
        [
            (
                3.0 + k * 2.4,
                f"{p.clock(3.0 + k * 2.4, '%Y-%m-%d %H:%M:%S,{ms}')} ERROR importer.feed: batch "
                f"{901 + k} failed: pymysql.err.OperationalError: (2003, \"Can't connect to MySQL "
                "server on 'catalog-mysql.catalog.svc.cluster.local' ([Errno 111] Connection "
                'refused)")',
            )
            for k in range(11)
        ],
    )
    p.stream(
        {"namespace": ns, "app": "catalog-cache", "pod": "catalog-cache-0", "container": "redis"},
        [
            (1.0, "1:M 20 Nov 2025 06:01:00.118 * 100 changes in 300 seconds. Saving..."),
            (1.02, "1:M 20 Nov 2025 06:01:00.210 * Background saving terminated with success"),
        ],
    )
    p.truth(
        kind="dependency_unavailable",
        service="catalog-mysql",
        summary=(
            "The node pool upgrade drained the node under catalog-mysql-0 (a single replica, PodDisruptionBudget "
            "allowing it); mysqld was killed before a clean shutdown and InnoDB's crash recovery on the new node "
            "takes 27 minutes, so clients get 'Connection refused' (PHP PDO SQLSTATE[HY000] [2002], PyMySQL "
            "(2003, \"Can't connect to MySQL server ...\")) until 'ready for connections' at 06:31."
        ),
        key_evidence=["Can't connect to MySQL server", "Starting crash recovery", "Connection refused"],
    )
    return p


def tax_quote_timeouts() -> Pack:
    """Callers time out naming the target; the target's own INFO lines show the slow calls and why. Loki only."""
    p = Pack(
        "tax-quote-timeouts",
        title="Checkout totals timing out",
        description=(
            "checkout-svc (Java, Spring RestTemplate) and invoicing (Go) ask tax-engine (Python) for tax quotes. "
            "tax-engine caches jurisdiction rates and refreshes them from a vendor API. Nothing logs at WARN in "
            "tax-engine. Recorded from Loki."
        ),
        question="Checkout totals keep timing out. Is it checkout-svc or one of its dependencies?",
        start="2025-12-15T09:00:00Z",
        minutes=40,
    )
    p.service("checkout-svc", "http", namespace="shop", depends_on=["tax-engine", "basket-svc"])
    p.service("invoicing", "worker", namespace="finance", depends_on=["tax-engine"])
    p.service("tax-engine", "http", namespace="finance", depends_on=["rates-vendor"])
    p.service("basket-svc", "http", namespace="shop")
    p.service("rates-vendor", "external")
    te = {
        "namespace": "finance",
        "app": "tax-engine",
        "container": "app",
        "pod": f"tax-engine-{suffix('te', length=10)}-{suffix('te')}",
    }
    entries = []
    for k in range(60):
        m = 0.3 + k * 0.65
        slow = m > 9.0
        ms = (6800 + (k * 373) % 3400) if slow else (38 + k % 9 * 4)
        entries.append(
            (
                m,
                f"{p.clock(m, '%Y-%m-%d %H:%M:%S,{ms}')} INFO tax.api: POST /v2/quote jurisdiction="
                f"{['US-CA', 'US-NY', 'DE', 'US-TX'][k % 4]} lines={k % 5 + 1} status=200 "
                f"elapsed_ms={ms}",
            )
        )
    for k in range(8):
        m = 8.8 + k * 3.9
        entries.append(
            (
                m,
                f"{p.clock(m, '%Y-%m-%d %H:%M:%S,{ms}')} INFO tax.rates: cache miss for jurisdiction set "
                f"(ttl expired), refreshing 13402 jurisdictions from rates-vendor (attempt {k % 3 + 1})",
            )
        )
        entries.append(
            (
                m + 3.5,
                f"{p.clock(m + 3.5, '%Y-%m-%d %H:%M:%S,{ms}')} INFO tax.rates: vendor refresh took "
                f"{208 + k * 7}.4s for 13402 jurisdictions",
            )
        )
    p.stream(te, entries)
    co = {
        "namespace": "shop",
        "app": "checkout-svc",
        "container": "app",
        "pod": f"checkout-svc-{suffix('cs', length=10)}-{suffix('cs')}",
    }
    lines = []
    for k in range(34):
        m = 9.2 + k * 0.9
        lines.append(
            (
                m,
                f"{p.clock(m)} ERROR 1 --- [checkout-svc] [nio-8080-exec-{k % 40 + 1}] "
                "c.a.checkout.TotalsService : tax quote failed\norg.springframework.web.client."
                'ResourceAccessException: I/O error on POST request for "http://tax-engine.finance.svc.'
                'cluster.local:8080/v2/quote": Read timed out\n\tat org.springframework.web.client.'
                "RestTemplate.createResourceAccessException(RestTemplate.java:926)\nCaused by: "
                "java.net.SocketTimeoutException: Read timed out",
            )
        )
    lines += [
        (
            1.0 + k * 2,
            f"{p.clock(1.0 + k * 2)}  INFO 1 --- [checkout-svc] [nio-8080-exec-3] "
            f"c.a.checkout.TotalsService : totals computed in {61 + k}ms",
        )
        for k in range(4)
    ]
    p.stream(co, lines)
    p.stream(
        {
            "namespace": "finance",
            "app": "invoicing",
            "container": "invoicing",
            "pod": f"invoicing-{suffix('inv2', length=10)}-{suffix('inv2')}",
        },
        [
            (
                10.0 + k * 2.7,
                f'time={p.clock(10.0 + k * 2.7)} level=ERROR msg="tax quote" err="Post \\"http://'
                'tax-engine.finance.svc.cluster.local:8080/v2/quote\\": context deadline exceeded '
                '(Client.Timeout exceeded while awaiting headers)"',
            )
            for k in range(11)
        ],
    )
    p.stream(
        {
            "namespace": "shop",
            "app": "basket-svc",
            "container": "app",
            "pod": f"basket-svc-{suffix('bs', length=10)}-{suffix('bs')}",
        },
        [
            (14.0, "WARN basket-svc: cache eviction storm: 1200 keys evicted in 1s (maxmemory-policy allkeys-lru)"),
            (15.0, "INFO basket-svc: GET /v1/basket 200 12ms"),
        ],
    )
    p.truth(
        kind="upstream_latency",
        service="tax-engine",
        summary=(
            "tax-engine's jurisdiction-rate cache expired at 09:09 and every refresh from rates-vendor takes over "
            "200 s; meanwhile quotes are computed on the slow path (elapsed_ms 6800-10200 in its INFO access lines), "
            "so checkout-svc's RestTemplate (Read timed out) and invoicing (context deadline exceeded) time out "
            "calling it. basket-svc's eviction warning is unrelated."
        ),
        key_evidence=["Read timed out", "elapsed_ms="],
    )
    return p


def product_page_slow() -> Pack:
    """No error anywhere: slow calls only in INFO access lines and Postgres duration LOG lines."""
    p = Pack(
        "product-page-slow",
        title="Product pages slow since the pricing migration",
        description=(
            "storefront (nginx + Node SSR) calls pricing-engine (Go), which reads price rules from pricing-db "
            "(Postgres, log_min_duration_statement=500ms). pricing-engine ran a schema migration this morning. "
            "Recorded with the built-in tools; nothing above INFO/LOG anywhere."
        ),
        question="Why have storefront product pages been slow since this morning? No errors anywhere.",
        start="2025-05-28T09:20:00Z",
        minutes=55,
    )
    p.service("storefront", "http", namespace="shop", depends_on=["pricing-engine", "cdn"])
    p.service("pricing-engine", "http", namespace="pricing", depends_on=["pricing-db"])
    p.service("pricing-db", "database", namespace="pricing")
    p.service("cdn", "external")
    p.deploy(
        14.0,
        "pricing-engine",
        "2.9.0",
        "2.8.3",
        "pricing-ci",
        "Migration 0042: replace price_rules_sku_idx with a partial index on active rules",
    )
    for k in range(62):
        m = 0.4 + k * 0.88
        slow = m > 15.0
        rt = (3.1 + (k % 7) * 0.31) if slow else (0.18 + (k % 5) * 0.02)
        p.log(
            m,
            "storefront",
            "INFO",
            f'10.1.{k % 4}.{k + 3} - - [{p.clock(m, "%d/%b/%Y:%H:%M:%S +0000")}] "GET /p/'
            f'sku-{30112 + k * 17} HTTP/2.0" 200 {41_000 + k * 37} "-" "Mozilla/5.0" '
            f'rt={rt:.3f} urt="{rt - 0.04:.3f}"',
        )
        dur = (2900 + (k * 211) % 900) if slow else (7 + k % 4)
        p.log(
            m - 0.01,
            "pricing-engine",
            "INFO",
            f'{{"level":"info","ts":"{p.clock(m - 0.01)}","msg":"quote",'
            f'"sku":"sku-{30112 + k * 17}","rules":{3 + k % 4},'
            f'"db_ms":{dur},"total_ms":{dur + 3}}}',
        )
        if slow and k % 2 == 0:
            p.log(
                m - 0.02,
                "pricing-db",
                "INFO",
                f"{p.clock(m - 0.02, '%Y-%m-%d %H:%M:%S.{ms} UTC')} [{48000 + k}] LOG:  duration: {dur - 2}.{k % 9}31 "
                "ms  execute <unnamed>: SELECT r.id, r.kind, r.amount FROM price_rules r WHERE r.sku = $1 AND "
                "r.active AND now() BETWEEN r.valid_from AND r.valid_to",
            )
    p.log(
        14.1,
        "pricing-db",
        "INFO",
        "2025-05-28 09:34:06.118 UTC [47712] LOG:  statement: DROP INDEX price_rules_sku_idx",
    )
    p.log(
        14.2,
        "pricing-db",
        "INFO",
        "2025-05-28 09:34:12.771 UTC [47712] LOG:  statement: CREATE INDEX "
        "CONCURRENTLY price_rules_sku_active_idx ON price_rules (sku) WHERE active",
    )
    p.log(
        14.9,
        "pricing-db",
        "INFO",
        "2025-05-28 09:34:54.002 UTC [47712] LOG:  duration: 41803.441 ms  statement: "
        "CREATE INDEX CONCURRENTLY price_rules_sku_active_idx ON price_rules (sku) WHERE "
        "active",
    )
    p.log(
        15.5,
        "pricing-db",
        "INFO",
        "2025-05-28 09:35:30.118 UTC [71] LOG:  automatic analyze of table "
        '"pricing.public.price_rules" system usage: CPU: user: 1.02 s, system: 0.11 s, '
        "elapsed: 3.88 s",
    )
    p.log(30.0, "cdn", "INFO", "cache purge completed for /static/* (412 objects)")
    p.metric(
        "http_request_duration_p99_ms",
        "storefront",
        "ms",
        [240 + (m % 4) * 7 for m in range(15)] + [4100 + (m % 6) * 90 for m in range(40)],
    )
    p.metric("http_requests_error_rate", "storefront", "ratio", [0.001] * 55)
    p.metric(
        "pg_stat_statements_mean_exec_time_ms",
        "pricing-db",
        "ms",
        [6] * 15 + [3050 + (m % 5) * 60 for m in range(40)],
        labels={"queryid": "-6412881020190021217"},
    )
    p.truth(
        kind="slow_queries",
        service="pricing-db",
        summary=(
            "Migration 0042 replaced price_rules_sku_idx with a partial index on (sku) WHERE active, but the "
            "quote query's plan no longer uses it (the time-range predicate makes the planner pick a sequential "
            "scan), so every price lookup takes ~3 s in pricing-db ('LOG:  duration: ... SELECT ... FROM "
            "price_rules'), pricing-engine's quotes take as long and storefront pages follow (rt=3.1-5.0). No "
            "line is above INFO; the CDN purge is unrelated."
        ),
        key_evidence=["LOG:  duration:", "price_rules"],
    )
    return p


PACKS = [orders_payments_nxdomain, webhooks_dns_timeouts, catalog_mysql_refused, tax_quote_timeouts, product_page_slow]
