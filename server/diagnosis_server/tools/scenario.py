"""Incident scenario packs: the file format (pydantic models) and the loader.

A pack is one JSON file: a topology of services, and the logs, metrics, deploys and Kubernetes events
those services produced inside one time window. The ``truth`` block says what really happened; it exists
for tests and evaluations only, and no tool ever reads it.

The loader checks more than the shape: every service a record names is in the topology, every timestamp
is UTC and inside the pack's time window, metric series are unique per (metric, service) and in time
order, the pack's ``name`` is its file stem, and a directory has exactly one default pack. A bad pack is
a ``ScenarioError`` naming the file and the field (``logs.12.service``).

A pack may also carry upstream-shaped data (``kubernetes``: raw objects of any kind a diagnosis reads under
their API plural names, ``pods``, ``events``, ``services``, ``nodes``, ..., and pod logs; ``prometheus``: series of
labels and ``[unix_seconds, "value"]`` samples; ``loki``: streams of labels and ``["<unix ns>", "line"]`` values) so
that ``sources.packs`` answers the live tools' names in the live shapes. A user's pack (``load_user_scenarios``: the
directory of ``--scenarios-dir``) needs no ``truth`` block, its root-cause kind is free text, and its ``default``
flag is not used.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

BUNDLED_DIR = Path(__file__).with_name("scenarios")

ServiceKind = Literal["http", "worker", "database", "cache", "queue", "external"]
LogLevel = Literal["DEBUG", "INFO", "WARN", "ERROR", "FATAL"]
EventType = Literal["Normal", "Warning"]
# The root-cause kinds of the bundled packs (a user's pack may name any kind).
ROOT_CAUSE_KINDS = (
    "oom_crash_loop",
    "bad_deploy",
    "db_pool_exhaustion",
    "disk_full",
    "tls_expired",
    "upstream_latency",
    "failed_mount",
    "none",
)
LOG_LEVELS: tuple[LogLevel, ...] = ("DEBUG", "INFO", "WARN", "ERROR", "FATAL")


class ScenarioError(ValueError):
    """A scenario pack could not be loaded; the message names the file and the field."""


def _require_utc(value: datetime) -> datetime:
    if value.utcoffset() != UTC.utcoffset(None):
        raise ValueError("timestamp must be UTC (end with Z or +00:00)")
    return value.astimezone(UTC)


UtcTime = Annotated[AwareDatetime, AfterValidator(_require_utc)]
Name = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[a-z0-9][a-z0-9._-]*$")]
Text = Annotated[str, Field(min_length=1)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TimeWindow(_Model):
    start: UtcTime
    end: UtcTime

    def contains(self, ts: datetime) -> bool:
        return self.start <= ts <= self.end


class Service(_Model):
    name: Name
    kind: ServiceKind
    depends_on: tuple[Name, ...] = ()
    labels: dict[str, str] = Field(default_factory=dict)


class Topology(_Model):
    services: tuple[Service, ...] = Field(min_length=1)


class LogLine(_Model):
    ts: UtcTime
    service: Name
    level: LogLevel
    message: Text


class MetricSeries(_Model):
    metric: Annotated[str, Field(pattern=r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")]
    service: Name
    unit: Text
    labels: dict[str, str] = Field(default_factory=dict)
    points: tuple[tuple[UtcTime, Annotated[float, Field(allow_inf_nan=False)]], ...] = Field(min_length=1)


class Deploy(_Model):
    ts: UtcTime
    service: Name
    version: Text
    previous_version: str | None = None
    author: Text
    summary: Text


class K8sEvent(_Model):
    ts: UtcTime
    namespace: Name
    kind: Text
    object: Text
    reason: Text
    type: EventType = "Normal"
    message: Text
    count: int = Field(default=1, ge=1)
    # The topology service the object belongs to; None for cluster objects (nodes).
    service: Name | None = None


class RootCause(_Model):
    service: Name | None
    kind: Annotated[str, Field(min_length=1, max_length=100)]
    summary: Text


class Truth(_Model):
    """What really happened. For tests and evaluations only: no tool reads it."""

    root_cause: RootCause
    key_evidence: tuple[Text, ...] = ()
    healthy: bool
    ambiguous: bool = False


RawObject = dict[str, Any]


class PodLog(_Model):
    namespace: Name
    pod: Text
    container: Text | None = None
    previous: bool = False
    lines: tuple[str, ...] = ()


CLUSTER_SCOPED = frozenset({"nodes", "persistentvolumes", "storageclasses"})


class KubernetesData(_Model):
    """Raw API objects as ``kubectl get -o json`` shows them (one object each, not Lists)."""

    pods: tuple[RawObject, ...] = ()
    events: tuple[RawObject, ...] = ()
    deployments: tuple[RawObject, ...] = ()
    replicasets: tuple[RawObject, ...] = ()
    pod_logs: tuple[PodLog, ...] = ()
    # Any other kind a diagnosis reads, under its API plural name (``sources.k8s_kinds``), answered by
    # kubernetes.list and kubernetes.get; cluster-scoped kinds (nodes, persistentvolumes, storageclasses) have no
    # namespace.
    services: tuple[RawObject, ...] = ()
    endpoints: tuple[RawObject, ...] = ()
    endpointslices: tuple[RawObject, ...] = ()
    statefulsets: tuple[RawObject, ...] = ()
    daemonsets: tuple[RawObject, ...] = ()
    jobs: tuple[RawObject, ...] = ()
    cronjobs: tuple[RawObject, ...] = ()
    ingresses: tuple[RawObject, ...] = ()
    networkpolicies: tuple[RawObject, ...] = ()
    nodes: tuple[RawObject, ...] = ()
    persistentvolumeclaims: tuple[RawObject, ...] = ()
    persistentvolumes: tuple[RawObject, ...] = ()
    storageclasses: tuple[RawObject, ...] = ()
    resourcequotas: tuple[RawObject, ...] = ()
    limitranges: tuple[RawObject, ...] = ()
    serviceaccounts: tuple[RawObject, ...] = ()
    configmaps: tuple[RawObject, ...] = ()
    secrets: tuple[RawObject, ...] = ()
    horizontalpodautoscalers: tuple[RawObject, ...] = ()
    poddisruptionbudgets: tuple[RawObject, ...] = ()


SampleValue = Annotated[str, Field(pattern=r"^[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+|NaN|[-+]?Inf)$")]


class PromSeries(_Model):
    """One series as Prometheus answers it: labels (``__name__`` included) and samples oldest first."""

    metric: dict[str, str] = Field(min_length=1)
    values: tuple[tuple[float, SampleValue], ...] = Field(min_length=1)


class PrometheusData(_Model):
    series: tuple[PromSeries, ...] = ()


class LokiStream(_Model):
    stream: dict[str, str] = Field(min_length=1)
    values: tuple[tuple[Annotated[str, Field(pattern=r"^\d{1,20}$")], str], ...] = Field(min_length=1)


class LokiData(_Model):
    streams: tuple[LokiStream, ...] = ()


class Scenario(_Model):
    name: Name
    title: Text
    description: Text
    # A question an operator would ask about this incident (for demos and evaluations).
    question: Text
    default: bool = False
    time_window: TimeWindow
    topology: Topology
    logs: tuple[LogLine, ...] = ()
    metrics: tuple[MetricSeries, ...] = ()
    deploys: tuple[Deploy, ...] = ()
    k8s_events: tuple[K8sEvent, ...] = ()
    kubernetes: KubernetesData = Field(default_factory=lambda: KubernetesData())
    prometheus: PrometheusData = Field(default_factory=lambda: PrometheusData())
    loki: LokiData = Field(default_factory=lambda: LokiData())
    # Required in the bundled packs (tests and evaluations read it); a user's pack may leave it out.
    truth: Truth | None = None

    @property
    def service_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.topology.services)

    def service(self, name: str) -> Service | None:
        return next((s for s in self.topology.services if s.name == name), None)


# ------------------------------------------------------------------------------------------ loading
def _loc(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


def load_scenario(path: Path | str, *, user: bool = False) -> Scenario:
    """Read and validate one pack; ``ScenarioError`` names the file and the field on any problem.

    A bundled-style pack (``user`` False) must have a ``truth`` block with a known root-cause kind.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read scenario pack: {exc.strerror or exc}") from exc
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScenarioError(f"{path}: not valid JSON: {exc}") from exc
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
        raise ScenarioError(f"{path}: field {_loc(tuple(first['loc']))}: {first['msg']}{more}") from exc
    problem = next(_reference_problems(scenario, path.stem, user=user), None)
    if problem is not None:
        field, message = problem
        raise ScenarioError(f"{path}: field {field}: {message}")
    return scenario


def _reference_problems(s: Scenario, stem: str, *, user: bool = False) -> Iterator[tuple[str, str]]:
    """Cross-reference problems as (field, message), in file order."""
    if s.name != stem:
        yield "name", f"{s.name!r} must equal the file name stem {stem!r}"
    window = s.time_window
    if window.start >= window.end:
        yield "time_window.end", "must be after time_window.start"
    names: set[str] = set()
    for i, service in enumerate(s.topology.services):
        if service.name in names:
            yield f"topology.services.{i}.name", f"duplicate service {service.name!r}"
        names.add(service.name)
    known = ", ".join(s.service_names)

    def unknown(value: str) -> str:
        return f"unknown service {value!r} (topology has: {known})"

    for i, service in enumerate(s.topology.services):
        for j, dep in enumerate(service.depends_on):
            if dep not in names:
                yield f"topology.services.{i}.depends_on.{j}", unknown(dep)
            elif dep == service.name:
                yield f"topology.services.{i}.depends_on.{j}", "a service cannot depend on itself"

    def outside(ts: datetime) -> str:
        return f"{ts.isoformat()} is outside time_window [{window.start.isoformat()}, {window.end.isoformat()}]"

    for i, line in enumerate(s.logs):
        if line.service not in names:
            yield f"logs.{i}.service", unknown(line.service)
        if not window.contains(line.ts):
            yield f"logs.{i}.ts", outside(line.ts)
    seen: set[tuple[str, str]] = set()
    for i, series in enumerate(s.metrics):
        if series.service not in names:
            yield f"metrics.{i}.service", unknown(series.service)
        key = (series.metric, series.service)
        if key in seen:
            yield f"metrics.{i}.metric", f"duplicate series {series.metric!r} for service {series.service!r}"
        seen.add(key)
        previous: datetime | None = None
        for j, (ts, _) in enumerate(series.points):
            if not window.contains(ts):
                yield f"metrics.{i}.points.{j}.0", outside(ts)
            if previous is not None and ts <= previous:
                yield f"metrics.{i}.points.{j}.0", "points must be in strictly increasing time order"
            previous = ts
    for i, deploy in enumerate(s.deploys):
        if deploy.service not in names:
            yield f"deploys.{i}.service", unknown(deploy.service)
        if not window.contains(deploy.ts):
            yield f"deploys.{i}.ts", outside(deploy.ts)
    for i, event in enumerate(s.k8s_events):
        if event.service is not None and event.service not in names:
            yield f"k8s_events.{i}.service", unknown(event.service)
        if not window.contains(event.ts):
            yield f"k8s_events.{i}.ts", outside(event.ts)
    yield from _raw_problems(s)
    if s.truth is None:
        if not user:
            yield "truth", "Field required"
        return
    cause = s.truth.root_cause
    if not user and cause.kind not in ROOT_CAUSE_KINDS:
        yield "truth.root_cause.kind", f"must be one of {', '.join(ROOT_CAUSE_KINDS)}"
    if cause.service is not None and cause.service not in names:
        yield "truth.root_cause.service", unknown(cause.service)
    if s.truth.healthy != (cause.kind == "none"):
        yield "truth.root_cause.kind", "must be 'none' exactly when truth.healthy is true"
    if not s.truth.healthy and cause.service is None:
        yield "truth.root_cause.service", "an unhealthy scenario names the service at fault"


RAW_KINDS = tuple(name for name in KubernetesData.model_fields if name != "pod_logs")


def _raw_problems(s: Scenario) -> Iterator[tuple[str, str]]:
    """Raw Kubernetes objects need a name and a namespace (the tools select by them)."""
    for field in RAW_KINDS:
        for i, obj in enumerate(getattr(s.kubernetes, field)):
            metadata = obj.get("metadata")
            if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str):
                yield f"kubernetes.{field}.{i}.metadata.name", "a Kubernetes object needs metadata.name"
            elif field not in CLUSTER_SCOPED and not isinstance(metadata.get("namespace"), str):
                yield f"kubernetes.{field}.{i}.metadata.namespace", "a Kubernetes object needs metadata.namespace"


def load_user_scenarios(directory: Path | str) -> dict[str, Scenario]:
    """The packs of a user's directory (``--scenarios-dir``): no truth needed, no default rule."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ScenarioError(f"{directory}: not a directory of scenario packs")
    paths = sorted(directory.glob("*.json"))
    if not paths:
        raise ScenarioError(f"{directory}: no scenario packs (*.json)")
    return {path.stem: load_scenario(path, user=True) for path in paths}


def all_scenarios(user_directory: Path | str | None = None) -> dict[str, Scenario]:
    """The bundled packs plus a user's directory of packs; a name in both is a ScenarioError."""
    packs = load_scenarios()
    if user_directory is None:
        return packs
    user = load_user_scenarios(user_directory)
    clash = sorted(set(packs) & set(user))
    if clash:
        raise ScenarioError(
            f"{user_directory}: pack(s) {', '.join(clash)} have the name of a bundled pack; rename them"
        )
    return {**packs, **user}


def load_scenarios(directory: Path | str | None = None) -> dict[str, Scenario]:
    """All packs of ``directory`` (the bundled packs when None, loaded once), by name in name order."""
    if directory is None:
        return dict(_bundled())
    return _load_directory(Path(directory))


@functools.cache
def _bundled() -> dict[str, Scenario]:
    return _load_directory(BUNDLED_DIR)


def _load_directory(directory: Path) -> dict[str, Scenario]:
    if not directory.is_dir():
        raise ScenarioError(f"{directory}: not a directory of scenario packs")
    paths = sorted(directory.glob("*.json"))
    if not paths:
        raise ScenarioError(f"{directory}: no scenario packs (*.json)")
    scenarios = {path.stem: load_scenario(path) for path in paths}
    defaults = [name for name, s in scenarios.items() if s.default]
    if len(defaults) != 1:
        found = ", ".join(f"{name}.json" for name in defaults) or "none"
        raise ScenarioError(
            f"{directory}: field default: exactly one pack must set default to true (found {len(defaults)}: {found})"
        )
    return scenarios


def default_scenario_name(directory: Path | str | None = None) -> str:
    """The name of the pack marked ``default`` (of the bundled packs when ``directory`` is None)."""
    return next(name for name, s in load_scenarios(directory).items() if s.default)


def get_scenario(name: str, directory: Path | str | None = None) -> Scenario:
    """One pack by name; ``ScenarioError`` listing the known names when there is none."""
    scenarios = load_scenarios(directory)
    try:
        return scenarios[name]
    except KeyError:
        raise ScenarioError(f"unknown scenario {name!r} (known: {', '.join(scenarios)})") from None
