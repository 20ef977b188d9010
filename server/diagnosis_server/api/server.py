"""Server start-up and graceful shutdown.

``start_server(settings)`` builds the whole service (store, provider, tools, orchestrator, run
manager, servicers, health with its store probe, reflection v1 and v1alpha, metrics) and starts
serving on an exclusively bound port; ``RunningServer.stop()`` shuts it down: no new RPCs, health
NOT_SERVING, running runs get ``shutdown_grace_s`` to finish (``hurry()``, a second signal, ends the
grace at once), the rest are marked FAILED with reason INTERRUPTED.

Start-up refuses what an operator would regret: a non-loopback gRPC or metrics address without tokens,
a port another server holds; it warns when tokens would travel in the clear. Each process has its own
identity in the store (``DIAGNOSIS_INSTANCE_ID`` is its prefix).
"""

from __future__ import annotations

import asyncio
import gc
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from diagnosis.v1 import (
    diagnosis_service_pb2,
    diagnosis_service_pb2_grpc,
    gatekeeper_service_pb2,
    gatekeeper_service_pb2_grpc,
)
from diagnosis_server.agents.base import AgentProvider
from diagnosis_server.alerts.notify import Notifier
from diagnosis_server.api.alert_runs import AlertInvestigator, AlertSettings
from diagnosis_server.api.auth import TokenAuthenticator
from diagnosis_server.api.components import ToolsFor, load_provider, pack_tools_for
from diagnosis_server.api.diagnosis_servicer import DiagnosisServicer
from diagnosis_server.api.follow import DEFAULT_POLL_INTERVAL_S
from diagnosis_server.api.gatekeeper_servicer import GatekeeperServicer
from diagnosis_server.api.health import ListingHealthServicer, add_reflection
from diagnosis_server.api.http_server import HttpApi, HttpServer, build_app
from diagnosis_server.api.hub import DEFAULT_QUEUE_SIZE, EventHub
from diagnosis_server.api.interceptor import ApiInterceptor
from diagnosis_server.api.metrics import Metrics
from diagnosis_server.api.runs import DEFAULT_HEARTBEAT_INTERVAL_S, RunManager
from diagnosis_server.api.store_health import StoreHealth
from diagnosis_server.api.viewer_routes import Viewer
from diagnosis_server.api.warm_up import warm_up
from diagnosis_server.graph.context import Limits
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.settings import Settings, SettingsError, env_name, is_loopback_host, split_host_port
from diagnosis_server.sources.config import EnvironmentsError, load_environments
from diagnosis_server.sources.registry import EnvironmentRegistry
from diagnosis_server.store import RunStore, StoreError, open_repository
from diagnosis_server.tools.scenario import Scenario, ScenarioError, all_scenarios

log = structlog.get_logger("diagnosis_server.api")

DIAGNOSIS_SERVICE = diagnosis_service_pb2.DESCRIPTOR.services_by_name["DiagnosisService"].full_name
GATEKEEPER_SERVICE = gatekeeper_service_pb2.DESCRIPTOR.services_by_name["GatekeeperService"].full_name
HEALTH_SERVICE = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
REFLECTION_V1_SERVICE = "grpc.reflection.v1.ServerReflection"
SERVICE_NAMES = (DIAGNOSIS_SERVICE, GATEKEEPER_SERVICE, HEALTH_SERVICE, REFLECTION_V1_SERVICE, reflection.SERVICE_NAME)
# The names health reports on ("" is the whole server).
HEALTH_NAMES = ("", DIAGNOSIS_SERVICE, GATEKEEPER_SERVICE)
# After the runs' grace, how long streams get to send their last message before they are cut.
STREAM_CLOSE_S = 1.0
# On shutdown, how long the notifications of runs that just ended get to be sent.
NOTIFY_DRAIN_S = 5.0


class StartupError(RuntimeError):
    """The server cannot start as configured; the message says why and what to change."""


def check_bind_policy(address: str, *, authenticated: bool) -> None:
    """Without auth tokens, only loopback (127.0.0.0/8, ::1, localhost) may be bound."""
    host, _ = split_host_port(address)
    if not authenticated and not is_loopback_host(host):
        raise StartupError(
            f"refusing to serve on {address} without authentication: set {env_name('auth_tokens')} or "
            f"{env_name('auth_tokens_file')}, or bind a loopback address (127.0.0.1, ::1, localhost)"
        )


def check_metrics_bind_policy(address: str, *, authenticated: bool) -> None:
    """The metrics endpoint has no authentication of its own: without tokens it is loopback only too."""
    if not address:
        return
    host, _ = split_host_port(address)
    if not authenticated and not is_loopback_host(host):
        raise StartupError(
            f"refusing to serve metrics on {address} without authentication: set {env_name('auth_tokens')} or "
            f"{env_name('auth_tokens_file')}, or bind {env_name('metrics_address')} to a loopback address "
            "(127.0.0.1, ::1, localhost), or leave it empty to disable metrics"
        )


def check_http_bind_policy(address: str, *, authenticated: bool) -> None:
    """The HTTP server (webhook, viewer) follows the gRPC rule: a non-loopback address only with tokens."""
    if not address:
        return
    host, _ = split_host_port(address)
    if not authenticated and not is_loopback_host(host):
        raise StartupError(
            f"refusing to serve HTTP on {address} without authentication: set {env_name('auth_tokens')} or "
            f"{env_name('auth_tokens_file')}, or bind {env_name('http_address')} to a loopback address "
            "(127.0.0.1, ::1, localhost), or leave it empty to disable the HTTP server"
        )


def public_url(settings: Settings, http_port: int | None) -> str:
    """Where people open the viewer: ``public_url`` when set, else http://<http_address> (its real port)."""
    if settings.public_url:
        return settings.public_url.rstrip("/")
    if not settings.http_address or http_port is None:
        return ""
    host, _ = split_host_port(settings.http_address)
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{http_port}"


def warn_plaintext_tokens(address: str, *, authenticated: bool, tls: bool) -> bool:
    """Logs a warning (and returns True) when bearer tokens would cross a network in the clear."""
    host, _ = split_host_port(address)
    if authenticated and not tls and not is_loopback_host(host):
        log.warning(
            "plaintext_tokens",
            address=address,
            hint=f"bearer tokens travel unencrypted on a non-loopback address: set {env_name('tls_cert_file')} "
            f"and {env_name('tls_key_file')}, or terminate TLS in front of this server",
        )
        return True
    return False


def serialize_or_pass(message: Any) -> bytes:
    """A response serializer that sends bytes as they are (a message serialized once for many streams)."""
    if type(message) is bytes:
        return message
    data: bytes = message.SerializeToString()
    return data


class _CallDetails(grpc.HandlerCallDetails):
    """The call details a generic handler is asked with: a method's full name (no metadata)."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.invocation_metadata = ()


def add_diagnosis_service(servicer: DiagnosisServicer, server: grpc.aio.Server) -> None:
    """The generated registration, with WatchRun's responses allowed to be pre-serialized bytes.

    The handlers are taken from what the generated code registers: a generic handler (the code the client's
    lowest supported grpcio accepts) asked for each method of the service, or registered methods (newer code).
    """
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    methods = diagnosis_service_pb2.DESCRIPTOR.services_by_name["DiagnosisService"].methods

    class _Capture:
        def add_generic_rpc_handlers(self, generic: Any) -> None:
            for handler in generic:
                for method in methods:
                    found = handler.service(_CallDetails(f"/{DIAGNOSIS_SERVICE}/{method.name}"))
                    if found is not None:
                        handlers[method.name] = found

        def add_registered_method_handlers(self, service: str, methods: dict[str, Any]) -> None:
            handlers.update(methods)

    diagnosis_service_pb2_grpc.add_DiagnosisServiceServicer_to_server(servicer, _Capture())  # type: ignore[arg-type]
    missing = sorted({method.name for method in methods} - set(handlers))
    if missing:
        raise RuntimeError(f"the generated registration has no handler for {', '.join(missing)}")
    handlers["WatchRun"] = grpc.unary_stream_rpc_method_handler(
        servicer.WatchRun,
        request_deserializer=diagnosis_service_pb2.WatchRunRequest.FromString,
        response_serializer=serialize_or_pass,
    )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(DIAGNOSIS_SERVICE, handlers),))
    server.add_registered_method_handlers(DIAGNOSIS_SERVICE, handlers)


def tune_gc() -> None:
    """After start-up: what is alive now (modules, protos, settings) leaves the collector's view for good
    (``gc.freeze``), and full collections come ten times less often than by default (a full collection of a
    busy server's heap, 30-95 ms in a 1,000-subscriber fan-out, stalls every stream at once). Young ones are
    rarer too: a run allocates many short-lived containers (protos' dicts, JSON values)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_THRESHOLDS[0], GC_THRESHOLDS[1], GC_THRESHOLDS[2])


GC_THRESHOLDS = (10_000, 20, 100)


def instance_owner(instance_id: str) -> str:
    """This process's identity in the store: the operator's id (if any) as a prefix, plus a random suffix."""
    suffix = uuid.uuid4().hex[:12]
    return f"{instance_id}-{suffix}" if instance_id else uuid.uuid4().hex


def _server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    if settings.tls_cert_file is None or settings.tls_key_file is None:
        return None
    pair: list[bytes] = []
    for name, path in (("tls_key_file", settings.tls_key_file), ("tls_cert_file", settings.tls_cert_file)):
        try:
            pair.append(path.expanduser().read_bytes())
        except OSError as exc:
            raise SettingsError(
                f"setting {name} ({env_name(name)}): cannot read {str(path)!r}: {exc.strerror}"
            ) from exc
    return grpc.ssl_server_credentials([(pair[0], pair[1])])


@dataclass
class RunningServer:
    """A started server: its port, its parts (for tests and embedders), and ``stop``."""

    server: grpc.aio.Server
    address: str
    port: int
    settings: Settings
    repository: RunStore
    orchestrator: Orchestrator
    runs: RunManager
    hub: EventHub
    health: HealthServicer
    metrics: Metrics
    metrics_port: int | None
    store_health: StoreHealth
    gatekeeper: GatekeeperServicer
    environments: EnvironmentRegistry = field(default_factory=EnvironmentRegistry.empty)
    alerts: AlertInvestigator | None = None
    http: HttpServer | None = None
    _stopping: asyncio.Task[list[str]] | None = field(default=None, init=False)

    @property
    def http_port(self) -> int | None:
        return None if self.http is None else self.http.port

    @property
    def http_url(self) -> str:
        """The HTTP server's base URL (empty when it is disabled)."""
        return public_url(self.settings, self.http_port) if self.http is not None else ""

    @property
    def target(self) -> str:
        """``host:port`` a client on this machine can dial."""
        host, _ = split_host_port(self.address)
        host = f"[{host}]" if ":" in host else host
        if host in ("0.0.0.0", "[::]"):
            host = "127.0.0.1"
        return f"{host}:{self.port}"

    async def stop(self, grace: float | None = None) -> list[str]:
        """Graceful shutdown (idempotent); returns the ids of the runs marked INTERRUPTED."""
        if self._stopping is None:
            self._stopping = asyncio.create_task(self._stop(self.settings.shutdown_grace_s if grace is None else grace))
        return await asyncio.shield(self._stopping)

    def hurry(self) -> None:
        """Ends the grace now (a second SIGTERM): runs still going are cancelled and marked INTERRUPTED."""
        if self._stopping is not None:
            log.warning("shutdown_hurried", active_runs=len(self.runs.active_run_ids))
        self.runs.hurry()

    async def _stop(self, grace: float) -> list[str]:
        log.info("shutting_down", grace_s=grace, active_runs=len(self.runs.active_run_ids))
        self.runs.close()
        # New RPCs are refused from here (UNAVAILABLE); RPCs in flight (streams of running runs, health
        # watchers) go on. The server's shutdown begins before NOT_SERVING is published, so that a caller
        # who saw NOT_SERVING is refused, never accepted and then cut (CANCELLED).
        server_stopped = asyncio.create_task(self.server.stop(grace + STREAM_CLOSE_S))
        await asyncio.sleep(0)
        await self.health.enter_graceful_shutdown()
        try:
            interrupted = await self.runs.drain(grace)
            if self.runs.hurried:
                await self.server.stop(STREAM_CLOSE_S)
            await server_stopped
        finally:
            if self.http is not None:
                await self.http.stop()
            if self.alerts is not None:
                await self.alerts.drain(0.0 if self.runs.hurried else NOTIFY_DRAIN_S)
            await self.store_health.stop()
            await self.runs.stop_maintenance()
            await asyncio.to_thread(self.metrics.close)
            self.gatekeeper.close()
            await self.environments.aclose()
            await self.repository.close()
            # Providers that hold connections (the openai client) are closed with the server.
            aclose = getattr(self.orchestrator.provider, "aclose", None)
            if aclose is not None:
                await aclose()
        log.info("stopped", interrupted_runs=len(interrupted))
        return interrupted

    async def wait_for_termination(self) -> None:
        await self.server.wait_for_termination()


async def start_server(
    settings: Settings,
    *,
    provider: AgentProvider | None = None,
    tools_for: ToolsFor | None = None,
    scenarios: Mapping[str, Scenario] | None = None,
    subscriber_queue_size: int = DEFAULT_QUEUE_SIZE,
    poll_interval_s: float = DEFAULT_POLL_INTERVAL_S,
    heartbeat_interval_s: float = DEFAULT_HEARTBEAT_INTERVAL_S,
    environments: EnvironmentRegistry | None = None,
) -> RunningServer:
    """Builds and starts the service on ``settings.address`` (port 0: any free port; see ``.port``).

    ``provider`` and ``tools_for`` replace the configured agent provider and the scenarios' tools
    (tests); ``environments`` replaces the registry opened from ``settings.environments_file``.
    Raises SettingsError or StartupError with a one-line reason.
    """
    authenticator = TokenAuthenticator(settings.auth_token_pairs())
    check_bind_policy(settings.address, authenticated=authenticator.enabled)
    check_metrics_bind_policy(settings.metrics_address, authenticated=authenticator.enabled)
    check_http_bind_policy(settings.http_address, authenticated=authenticator.enabled)
    notify_urls = settings.notify_urls()
    credentials = _server_credentials(settings)
    warn_plaintext_tokens(settings.address, authenticated=authenticator.enabled, tls=credentials is not None)
    try:
        packs = dict(scenarios) if scenarios is not None else all_scenarios(settings.scenarios_dir)
    except ScenarioError as exc:
        raise StartupError(f"scenario packs: {exc}") from exc
    if settings.default_scenario not in packs:
        raise SettingsError(f"setting default_scenario ({env_name('default_scenario')}): unknown scenario")
    agents = provider if provider is not None else load_provider(settings.agent_provider)
    registry = environments if environments is not None else await open_environments(settings)
    try:
        repository = await open_repository(
            settings.database_url.get_secret_value(),
            owner=instance_owner(settings.instance_id),
            timeout_s=settings.store_timeout_s,
        )
    except (StoreError, ValueError) as exc:
        await registry.aclose()
        raise StartupError(f"cannot open the store ({env_name('database_url')}): {exc}") from exc
    metrics = Metrics()
    http: HttpServer | None = None
    try:
        hub = EventHub(queue_size=subscriber_queue_size)
        scenario_tools = tools_for or pack_tools_for(packs)
        if tools_for is None:
            warm_up(scenario_tools, packs)
        orchestrator = Orchestrator(
            store=repository,
            provider=agents,
            tools_for=scenario_tools,
            environment_tools=registry.tools_for,
            finish_retry_s=settings.store_retry_s,
            limits=Limits(
                retry_backoff_s=settings.retry_backoff_s,
                max_concurrent_tool_calls=settings.max_concurrent_tool_calls,
                max_concurrent_calls_per_source=settings.max_concurrent_calls_per_source,
            ),
            on_endpoint_failure=metrics.observe_endpoint_failure,
            on_invocation=metrics.observe_invocation,
        )
        health = ListingHealthServicer()
        store_health = StoreHealth(
            repository, health, HEALTH_NAMES, metrics, interval_s=settings.store_probe_interval_s
        )
        runs = RunManager(
            orchestrator,
            repository,
            hub,
            metrics,
            max_concurrent_runs=settings.max_concurrent_runs,
            # A live run's heartbeat is refreshed several times within the staleness threshold.
            heartbeat_interval_s=min(heartbeat_interval_s, settings.orphan_stale_after_s / 3),
            stale_after_s=settings.orphan_stale_after_s,
            store_health=store_health,
        )
        server = grpc.aio.server(
            interceptors=[ApiInterceptor(authenticator, metrics)],
            options=[
                ("grpc.max_receive_message_length", settings.max_message_bytes),
                # Exclusive bind: a second server on a port already served fails instead of sharing it.
                ("grpc.so_reuseport", 0),
            ],
        )
        notifier = Notifier(notify_urls, run_url=settings.public_url) if notify_urls else None
        alerts = AlertInvestigator(
            runs,
            repository,
            registry,
            AlertSettings(
                scenarios=frozenset(packs),
                default_scenario=settings.default_scenario,
                lookback_s=settings.alert_lookback_s,
                dedupe_s=settings.alert_dedupe_s,
                max_question_chars=settings.max_question_chars,
            ),
            notifier,
            on_group=lambda deduplicated: metrics.observe_alert_group(deduplicated=deduplicated),
            on_notification=metrics.observe_notification,
        )
        diagnosis = DiagnosisServicer(
            alerts=alerts,
            repository=repository,
            runs=runs,
            hub=hub,
            scenarios=packs,
            default_scenario=settings.default_scenario,
            max_question_chars=settings.max_question_chars,
            poll_interval_s=poll_interval_s,
            environments=registry,
        )
        add_diagnosis_service(diagnosis, server)
        checks = GatekeeperServicer(max_concurrent_per_tenant=settings.max_concurrent_checks_per_tenant)
        gatekeeper_service_pb2_grpc.add_GatekeeperServiceServicer_to_server(checks, server)
        await store_health.probe_once()
        if store_health.writable:
            for name in HEALTH_NAMES:
                await health.set(name, health_pb2.HealthCheckResponse.SERVING)
        health_pb2_grpc.add_HealthServicer_to_server(health, server)
        add_reflection(server, SERVICE_NAMES)
        try:
            if credentials is None:
                port = server.add_insecure_port(settings.address)
            else:
                port = server.add_secure_port(settings.address, credentials)
        except RuntimeError as exc:
            raise StartupError(f"cannot bind {settings.address} ({env_name('address')}): {exc}") from exc
        if settings.http_address:
            viewer = Viewer(authenticator, repository, hub, poll_interval_s=poll_interval_s)
            http = HttpServer(build_app(HttpApi(authenticator, alerts), viewer), settings.http_address)
            try:
                http_port = await http.start()
            except OSError as exc:
                raise StartupError(
                    f"cannot bind {settings.http_address} ({env_name('http_address')}): {exc.strerror or exc}"
                ) from exc
            if notifier is not None and not settings.public_url:
                notifier.set_run_url(public_url(settings, http_port))
            diagnosis.viewer_base = public_url(settings, http_port)
            warn_plaintext_tokens(settings.http_address, authenticated=authenticator.enabled, tls=False)
        # Last before serving: the watch of other owners' leases starts when this instance is up (the warm-up
        # and the binds above take their time), so a lease is judged only on time this instance serves.
        orphans = await repository.interrupt_orphans(stale_after_s=settings.orphan_stale_after_s)
        if orphans:
            log.warning("orphan_runs_interrupted", run_ids=orphans)
        await server.start()
        metrics_port = _serve_metrics(metrics, settings.metrics_address)
        runs.start_maintenance()
        store_health.start()
    except BaseException:
        if http is not None:
            await http.stop()
        metrics.close()
        await registry.aclose()
        await repository.close()
        raise
    return RunningServer(
        server=server,
        address=settings.address,
        port=port,
        settings=settings,
        repository=repository,
        orchestrator=orchestrator,
        runs=runs,
        hub=hub,
        health=health,
        metrics=metrics,
        metrics_port=metrics_port,
        store_health=store_health,
        gatekeeper=checks,
        environments=registry,
        alerts=alerts,
        http=http,
    )


async def open_environments(settings: Settings) -> EnvironmentRegistry:
    """The environments of ``settings.environments_file``, opened (none without a file); StartupError naming
    the file, the environment and the key when the file cannot be used."""
    if settings.environments_file is None:
        return EnvironmentRegistry.empty()
    try:
        return await EnvironmentRegistry.open(load_environments(settings.environments_file))
    except EnvironmentsError as exc:
        raise StartupError(str(exc)) from None


def _serve_metrics(metrics: Metrics, address: str) -> int | None:
    """The metrics endpoint's port; a busy port is logged and the service runs on without it."""
    if not address:
        return None
    try:
        return metrics.serve(address)
    except OSError as exc:
        log.error("metrics_unavailable", address=address, error=exc.strerror or type(exc).__name__)
        return None
