"""The environment registry: each configured environment's sources opened, its toolset, its planner context.

``EnvironmentRegistry.open(environments)`` reads the secrets, builds one HTTP client a Prometheus and a Loki,
loads each Kubernetes configuration and connects each MCP server (all the servers of all environments at once,
each bounded by its ``startup_timeout_s``); ``aclose()`` closes them all. An MCP server that cannot be had is
logged and left out (its allow-listed tools stay and fail when called); anything else that is wrong is one
``EnvironmentsError`` naming the file, the environment and the key. ``tools_for(name)`` is what a run gets.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

import structlog

from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.graph.context import ToolEnvironment
from diagnosis_server.sources.arguments import rfc3339
from diagnosis_server.sources.config import EnvironmentConfig, Environments, EnvironmentsError, SecretFrom
from diagnosis_server.sources.http import create_client, safe_url
from diagnosis_server.sources.loki import LokiQueryRange
from diagnosis_server.sources.mcp_servers import McpServerSource, McpTarget
from diagnosis_server.sources.prometheus import PrometheusApi, prometheus_tools
from diagnosis_server.text.redaction import Redactor
from diagnosis_server.tools.base import Tool, Toolset

log = structlog.get_logger(__name__)

Closer = Callable[[], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """What may be shown of a source: its kind, its name, where it is (never a credential)."""

    kind: str
    name: str
    endpoint: str


@dataclass(slots=True)
class OpenEnvironment:
    name: str
    is_default: bool
    toolset: Toolset
    sources: list[SourceInfo]
    context: JsonObject
    closers: list[Closer] = field(default_factory=list)
    mcp: list[McpServerSource] = field(default_factory=list)
    # The alert labels that send an alert to this environment (``alert_labels`` in the file).
    alert_labels: dict[str, str] = field(default_factory=dict)

    def tool_environment(self) -> ToolEnvironment:
        """The run's tools and what its planner may know up front (the sources, the namespaces, the time)."""
        return ToolEnvironment(toolset=self.toolset, context={**self.context, "now": rfc3339(time.time())})


class UnknownEnvironment(KeyError):
    pass


class EnvironmentRegistry:
    def __init__(self, environments: dict[str, OpenEnvironment]) -> None:
        self._environments = environments
        self._closed = False

    @classmethod
    def empty(cls) -> EnvironmentRegistry:
        return cls({})

    @classmethod
    async def open(
        cls,
        config: Environments,
        *,
        only: Collection[str] | None = None,
        mcp_servers: Collection[str] | None = None,
    ) -> EnvironmentRegistry:
        """Opens the environments of ``config`` (those named in ``only``, when given), starting their MCP servers
        (only those named in ``mcp_servers``, when given: ``tools call`` starts the server of the tool called)."""
        opened: dict[str, OpenEnvironment] = {}
        try:
            for name, env_config in config.environments.items():
                if only is None or name in only:
                    opened[name] = await _open_environment(config, name, env_config)
            pending = [
                source
                for env in opened.values()
                for source in env.mcp
                if mcp_servers is None or source.target.name in mcp_servers
            ]
            await asyncio.gather(*(source.open() for source in pending))
            for env in opened.values():
                for source in env.mcp:
                    env.toolset = Toolset([*env.toolset.as_mapping().values(), *source.tools()])
        except BaseException:
            await _close_all(opened.values())
            raise
        log.info("environments_opened", environments={n: len(e.toolset.names) for n, e in opened.items()})
        return cls(opened)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._environments)

    @property
    def default(self) -> str | None:
        return next((name for name, env in self._environments.items() if env.is_default), None)

    def for_alert_labels(self, labels: Mapping[str, str]) -> str | None:
        """The first environment (file order) whose ``alert_labels`` the labels all carry; None when none."""
        for name, env in self._environments.items():
            if env.alert_labels and all(labels.get(key) == value for key, value in env.alert_labels.items()):
                return name
        return None

    def get(self, name: str) -> OpenEnvironment:
        try:
            return self._environments[name]
        except KeyError:
            raise UnknownEnvironment(name) from None

    def tools_for(self, name: str) -> ToolEnvironment:
        return self.get(name).tool_environment()

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await _close_all(self._environments.values())


async def _close_all(environments: Collection[OpenEnvironment]) -> None:
    closers = [closer for env in environments for closer in env.closers]
    results = await asyncio.gather(*(closer() for closer in closers), return_exceptions=True)
    for result in results:
        if isinstance(result, Exception):
            log.warning("source_close_failed", error=type(result).__name__)


def _url_secrets(url: str) -> list[str]:
    try:
        password = urlsplit(url).password
    except ValueError:  # not a URL (an env value may be anything)
        return []
    return [unquote(password)] if password else []


async def _open_environment(config: Environments, name: str, env: EnvironmentConfig) -> OpenEnvironment:
    def secret(ref: SecretFrom | None, key: str) -> str | None:
        return None if ref is None else config.secret(ref, environment=name, key=key)

    secrets: list[str] = []
    prom_token = (
        secret(env.prometheus.token_ref(), _token_key("prometheus", env.prometheus)) if env.prometheus else None
    )
    loki_token = secret(env.loki.token_ref(), _token_key("loki", env.loki)) if env.loki else None
    targets: list[McpTarget] = []
    for index, server in enumerate(env.mcp):
        values = {
            key: value if isinstance(value, str) else str(secret(value, f"mcp[{index}].env.{key}"))
            for key, value in server.env.items()
        }
        # Only the values the environment reads as secrets ({ env = ... }, { file = ... }) are redacted as such;
        # a plain value (a URL, a flag) stays readable, less any password inside it.
        marked = tuple(values[key] for key, value in server.env.items() if not isinstance(value, str))
        plain_urls = [s for value in server.env.values() if isinstance(value, str) for s in _url_secrets(value)]
        token = secret(server.token_ref(), _token_key(f"mcp[{index}]", server))
        targets.append(
            McpTarget(
                name=server.name,
                command=tuple(server.command) if server.command else None,
                url=server.url,
                env=values,
                secret_values=(*marked, *plain_urls),
                bearer_token=token,
                allow=tuple(server.tools) if server.tools is not None else None,
                startup_timeout_s=server.startup_timeout_s,
                timeout_s=server.timeout_s,
            )
        )
        secrets += _url_secrets(server.url or "")
    secrets += [s for s in (prom_token, loki_token) if s]
    secrets += _url_secrets(env.prometheus.url) if env.prometheus else []
    secrets += _url_secrets(env.loki.url) if env.loki else []
    redactor = Redactor(secrets)

    tools: list[Tool] = []
    sources: list[SourceInfo] = []
    closers: list[Closer] = []
    context: JsonObject = {"environment": name}
    opened = OpenEnvironment(name, env.default, Toolset([]), sources, context, closers)
    opened.alert_labels = dict(env.alert_labels)
    try:
        if env.prometheus is not None:
            headers = {"Authorization": f"Bearer {prom_token}"} if prom_token else {}
            api = PrometheusApi(
                create_client(env.prometheus.url, timeout_s=env.prometheus.timeout_s, headers=headers), redactor
            )
            closers.append(api.aclose)
            tools += prometheus_tools(api)
            sources.append(SourceInfo("prometheus", "prometheus", safe_url(env.prometheus.url)))
            context["prometheus"] = {
                "error_rate_query": env.prometheus.error_rate_query,
                "latency_query": env.prometheus.latency_query,
            }
        if env.loki is not None:
            headers = {"X-Scope-OrgID": env.loki.tenant} if env.loki.tenant else {}
            if loki_token:
                headers["Authorization"] = f"Bearer {loki_token}"
            loki = LokiQueryRange(create_client(env.loki.url, timeout_s=env.loki.timeout_s, headers=headers), redactor)
            closers.append(loki.aclose)
            tools.append(loki)
            sources.append(SourceInfo("loki", "loki", safe_url(env.loki.url)))
        if env.kubernetes is not None:
            tools += await _open_kubernetes(config, name, env, redactor, sources, closers, context)
        mcp_sources = [McpServerSource(target, redactor) for target in targets]
        for source in mcp_sources:
            closers.append(source.aclose)
            sources.append(SourceInfo("mcp", source.target.name, source.target.endpoint))
        opened.mcp = mcp_sources
    except BaseException:
        await _close_all([opened])
        raise
    opened.toolset = Toolset(tools)
    sources_json: list[JsonValue] = [{"kind": s.kind, "name": s.name, "endpoint": s.endpoint} for s in sources]
    context["sources"] = sources_json
    return opened


def _token_key(section: str, auth: object) -> str:
    return f"{section}.bearer_token_file" if getattr(auth, "bearer_token_file", None) else f"{section}.bearer_token_env"


async def _open_kubernetes(
    config: Environments,
    name: str,
    env: EnvironmentConfig,
    redactor: Redactor,
    sources: list[SourceInfo],
    closers: list[Closer],
    context: JsonObject,
) -> list[Tool]:
    from diagnosis_server.sources.kubernetes import KubernetesApi, kubernetes_tools, load_cluster

    cluster = env.kubernetes
    assert cluster is not None
    kubeconfig = config.resolve_path(cluster.kubeconfig) if cluster.kubeconfig else None
    try:
        access = await asyncio.to_thread(
            load_cluster,
            kubeconfig=kubeconfig,
            context=cluster.context,
            in_cluster=cluster.in_cluster,
            namespaces=cluster.namespaces,
            timeout_s=cluster.timeout_s,
        )
    except ValueError as exc:
        key = "kubernetes.in_cluster" if cluster.in_cluster else "kubernetes.kubeconfig"
        raise EnvironmentsError(f"{config.where(name, key)}: {exc}") from None
    api = KubernetesApi(access, redactor)
    closers.append(api.aclose)
    sources.append(
        SourceInfo(
            "kubernetes",
            cluster.context or ("in-cluster" if cluster.in_cluster else "kubeconfig"),
            safe_url(access.host),
        )
    )
    namespaces: list[JsonValue] = list(access.namespaces or ())
    context["kubernetes"] = {"namespaces": namespaces, "default_namespace": access.default_namespace}
    return kubernetes_tools(api)
