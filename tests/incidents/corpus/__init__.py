"""The incident corpus builder: one TOML file per incident, ``reader`` to read it, ``kit`` for the shapes they share.

``python -m tests.incidents.corpus`` rewrites ``tests/incidents/packs/*.json`` (deterministic: same input, same bytes).
Edit a pack in its ``<family>/<pack name>.toml`` here, not in its JSON; add its entry to
``tests/incidents/expected.toml``. The families:

- ``memory``: out-of-memory incidents: the container status, kube-state-metrics, the JVM's own error, the kernel's OOM
  killer.
- ``crashes``: crash loops and the line that precedes them: missing config, a missing executable, syntax errors, a Go
  panic.
- ``images``: image pull failures: a tag that does not exist, registry credentials refused, a registry that cannot be
  reached.
- ``scheduling``: Pods that are never placed or never created: resources and taints, node selectors, unbound claims,
  quota.
- ``probes``: probe failures (readiness, liveness, startup) and evictions (memory, ephemeral storage, disk pressure).
- ``storage``: volumes (FailedMount, FailedAttachVolume, ProvisioningFailed, a missing StorageClass), jobs, container
  config.
- ``dependencies``: failing dependencies: DNS, a database refusing connections, timeouts naming the target, slow calls
  in INFO lines.
- ``pools``: connection-pool exhaustion in four libraries' words: HikariCP, SQLAlchemy, PgBouncer, node-postgres.
- ``changes``: TLS errors (expired, unknown authority, hostname mismatch), full disks, and bad rollouts.
- ``quiet``: windows without an incident (noise only), and questions about a service the data does not know.

An incident file: its comments say what the incident is built to test; ``title``, ``description``, ``question``,
``start`` and ``minutes`` (the window); ``[truth]`` (``kit.Pack.truth``); and the sections, each a list of entries
whose keys are the arguments of the kit call that writes one: ``services`` (``Pack.service``), ``deployments``,
``replicasets``, ``pods``, ``events`` (``Pack.event``), ``pod_logs``, ``series``, ``streams``, ``logs``, ``metrics``,
``deploys`` and ``k8s_events`` (``Pack.k8s_event``). Times are minutes into the window (negative: before it). An entry
with ``each`` is a group: each of its items is one entry, with the group's other keys as defaults. Beyond the kit's
arguments:

- pods: ``healthy = true``, the arguments of ``kit.healthy_pod``; ``containers``, the arguments of ``kit.container``
  (``port = false``: none; a probe with a ``path``, those of ``kit.http_probe``); ``statuses``, those of ``kit.status``
  with ``state`` and ``last`` as ``{ running = since }``, ``{ waiting = reason, message }``,
  ``{ waiting = "CrashLoopBackOff", back_off = "5m0s" }`` (the kubelet's message for the Pod's container) or
  ``{ terminated = reason, code, started, finished, ... }`` (``kit.terminated``); ``unschedulable = { message, at }``;
  ``conditions`` as ``{ type, status, reason, message, at }`` (``kit.condition``, likewise a Deployment's);
- events and k8s_events: ``back_off = container`` for the kubelet's "Back-off restarting failed container" message of
  the Pod ``obj``; events: ``scheduled = node`` (``Pack.scheduled``) and ``pod_start`` (``kit.pod_start_events``);
- series and metrics: ``values = { from, step, count }`` for a constant (no ``step``) or evenly stepping series;
- streams: ``labels`` and ``entries = [[minute, line], ...]``.

An event's ``first`` and a termination's ``started`` are kept to the digit: the event's name and the container's id
derive from them.
"""
