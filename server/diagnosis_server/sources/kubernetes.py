"""Kubernetes: ``kubernetes.pods``, ``kubernetes.events``, ``kubernetes.pod_logs``, ``kubernetes.rollouts``, and
``kubernetes.list``/``kubernetes.get`` of any kind a diagnosis reads (``kubernetes_objects``); and its source kind
(``kubernetes = { kubeconfig = ..., context = ... }`` or ``{ in_cluster = true }`` in an environment: ``KUBERNETES``).

The official ``kubernetes`` client (maintained by SIG API Machinery, released with each Kubernetes version)
loads the configuration (a kubeconfig and its context with client certificates, tokens or exec plugins; or the
pod's service account in-cluster) and makes the requests. It is synchronous (urllib3), so each request runs in
a worker thread with its own timeout; ``kubernetes_asyncio`` would be asyncio but is a community port that trails
the releases and brings a second HTTP stack (aiohttp). Requests are read-only (get, list, log) and ask for the
raw body (``_preload_content=False``, read in chunks no further than ``http.MAX_BODY_BYTES``): the recorded output
is the API server's JSON, not the client's models.

Outputs are Kubernetes List objects (``PodList``, ``EventList``, ``ReplicaSetList``) as the API returns them,
redacted (``redaction.Redactor.kubernetes``): ``managedFields``, the last-applied annotation, every env value and
secret reference removed. A list is read in pages (``limit``/``continue``) up to ``max_items``; a continue token
that expired (410) restarts the list once. ``pod_logs`` is ``{namespace, pod, container, previous, lines}``, the
log text split into lines (the log endpoint answers text, not JSON). API errors (a ``Status`` object: 403, 404,
...) are a ``ToolError`` with the API server's own message.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, model_validator

from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.sources.arguments import Args, Param
from diagnosis_server.sources.declared import Declaration, DeclaredTool
from diagnosis_server.sources.http import (
    MAX_BODY_BYTES,
    RETRY_STATUSES,
    BodyTooLarge,
    retry_after_seconds,
    safe_url,
    too_large,
    trace_headers,
    with_retries,
)
from diagnosis_server.sources.sections import DEFAULT_TIMEOUT_S, EnvironmentsError, Seconds, Strict
from diagnosis_server.sources.source import Opened, Opening, Prepared, SourceInfo, SourceKind
from diagnosis_server.text.redaction import Redactor
from diagnosis_server.tools.base import SourceUnreachable, Tool, ToolError

PODS = "kubernetes.pods"
EVENTS = "kubernetes.events"
POD_LOGS = "kubernetes.pod_logs"
ROLLOUTS = "kubernetes.rollouts"
TOOL_NAMES = (PODS, EVENTS, POD_LOGS, ROLLOUTS)
PAGE_SIZE = 500
DEFAULT_MAX_ITEMS = 2000
DEFAULT_TAIL_LINES = 200
MAX_TAIL_LINES = 5000
IN_CLUSTER_NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"

PODS_DESCRIPTION = (
    "List pods (Kubernetes GET /api/v1/namespaces/{namespace}/pods). Returns the API's PodList as is: {kind, "
    "metadata, items: [Pod]}; each Pod has metadata (name, labels, ownerReferences, creationTimestamp), spec "
    "(containers with image and resources; env values and secrets are redacted) and status (phase, conditions, "
    "containerStatuses with restartCount, state.waiting.reason such as CrashLoopBackOff, lastState.terminated."
    "reason such as OOMKilled and exitCode). Filter with label_selector (app=checkout-api) or field_selector "
    "(status.phase=Running, spec.nodeName=node-1)."
)
EVENTS_DESCRIPTION = (
    "List core/v1 events (Kubernetes GET /api/v1/namespaces/{namespace}/events). Returns the API's EventList as "
    "is: items with involvedObject {kind, name}, reason (BackOff, OOMKilling, Unhealthy, FailedScheduling, "
    "FailedMount, Killing, Pulled...), message, type (Normal|Warning), count, firstTimestamp, lastTimestamp. "
    "Filter with field_selector (involvedObject.name=checkout-api-7f9c6d8b5-tr6zn, type=Warning, reason=BackOff)."
)
POD_LOGS_DESCRIPTION = (
    "Read one pod's container log (Kubernetes GET .../pods/{pod}/log). Returns {namespace, pod, container, "
    "previous, lines: [log line, ...]} oldest first. previous=true reads the previous (crashed) container's log; "
    f"tail_lines (default {DEFAULT_TAIL_LINES}, max {MAX_TAIL_LINES}) and since_seconds bound it. A pod with "
    "several containers needs container."
)
ROLLOUTS_DESCRIPTION = (
    "A Deployment's rollouts: its ReplicaSets (Kubernetes GET /apis/apps/v1/namespaces/{namespace}/replicasets "
    "selected by the Deployment's selector and owned by it). Returns the API's ReplicaSetList as is: each item's "
    f'metadata.annotations["{REVISION_ANNOTATION}"] is the revision, metadata.creationTimestamp when it was '
    "created, spec.template.spec.containers[].image the images, status.replicas/readyReplicas its pods."
)


def _namespace_param(namespaces: Sequence[str] | None, default: str) -> Param:
    if namespaces:
        listing = ", ".join(namespaces)
        return Param(
            "namespace", "string", f"The namespace (one of {listing}). Default: {default}.", enum=tuple(namespaces)
        )
    return Param("namespace", "string", f"The namespace. Default: {default}.")


_LABEL = Param("label_selector", "string", "Label selector, e.g. app=checkout-api,tier in (web,api).")
_FIELD = Param("field_selector", "string", "Field selector, e.g. status.phase!=Running.")


@dataclass(frozen=True, slots=True)
class ClusterAccess:
    """A loaded cluster configuration: the client, the namespaces the tools may read, and the default one."""

    api_client: Any
    namespaces: tuple[str, ...] | None
    default_namespace: str
    host: str
    timeout_s: float
    max_items: int = DEFAULT_MAX_ITEMS


def load_cluster(
    *,
    kubeconfig: Path | None,
    context: str | None,
    in_cluster: bool,
    namespaces: Sequence[str] | None,
    timeout_s: float,
) -> ClusterAccess:
    """The client for a kubeconfig context or the in-cluster service account; ValueError saying what failed."""
    from kubernetes import client, config  # heavy: imported only for environments that have a cluster

    configuration = client.Configuration()
    try:
        if in_cluster:
            config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
            try:
                context_namespace = IN_CLUSTER_NAMESPACE_FILE.read_text(encoding="utf-8").strip()
            except OSError:
                context_namespace = ""
        else:
            config_file = str(kubeconfig) if kubeconfig is not None else None
            config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=config_file, context=context, client_configuration=configuration, persist_config=False
            )
            contexts, active = config.list_kube_config_contexts(config_file)  # type: ignore[no-untyped-call]
            chosen = next((c for c in contexts if c.get("name") == context), active) if context else active
            context_namespace = str(((chosen or {}).get("context") or {}).get("namespace") or "")
    except config.ConfigException as exc:
        raise ValueError(f"cannot load the cluster configuration: {str(exc).splitlines()[0][:300]}") from None
    except OSError as exc:
        raise ValueError(f"cannot read the kubeconfig: {exc.strerror or type(exc).__name__}") from None
    configuration.retries = False  # our own retries (sources.http): only connection errors, 5xx and 429
    allowed = tuple(namespaces) if namespaces else None
    default = allowed[0] if allowed and context_namespace not in allowed else (context_namespace or "default")
    return ClusterAccess(
        api_client=client.ApiClient(configuration),
        namespaces=allowed,
        default_namespace=default,
        host=str(configuration.host),
        timeout_s=timeout_s,
    )


class KubernetesApi:
    """Read-only requests on one cluster, in worker threads, with retries; bodies as the API returned them."""

    def __init__(self, access: ClusterAccess, redactor: Redactor) -> None:
        from kubernetes import client

        self.access = access
        self.redactor = redactor
        self.core = client.CoreV1Api(access.api_client)
        self.apps = client.AppsV1Api(access.api_client)

    def namespace(self, tool: str, args: Args) -> str:
        namespace = str(args.get("namespace", self.access.default_namespace))
        allowed = self.access.namespaces
        if allowed is not None and namespace not in allowed:
            raise ToolError(
                f"{tool}: namespace {namespace!r} is not one this environment may read ({', '.join(allowed)})"
            )
        return namespace

    async def request(self, tool: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> bytes:
        """One GET through the client; the raw body, or ToolError with the API server's message."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        timeout = (min(self.access.timeout_s, 5.0), self.access.timeout_s)

        def call() -> bytes:
            response = method(*args, _preload_content=False, _request_timeout=timeout, _headers=headers, **kwargs)
            try:
                return read_response(tool, response, MAX_BODY_BYTES)
            finally:
                response.release_conn()

        def retryable(outcome: bytes | BaseException) -> tuple[bool, float | None]:
            if isinstance(outcome, ApiException):
                if outcome.status in RETRY_STATUSES:
                    return True, retry_after_seconds((outcome.headers or {}).get("Retry-After"))
                return False, None
            return isinstance(outcome, HTTPError), None

        headers = trace_headers()
        try:
            return await with_retries(lambda: asyncio.to_thread(call), retryable, source=tool)
        except ApiException as exc:
            raise ApiError(self._status_message(tool, exc), int(exc.status or 0)) from None
        except HTTPError as exc:
            raise SourceUnreachable(
                f"{tool}: cannot reach the API server {self.access.host} ({type(exc).__name__})"
            ) from None

    def _status_message(self, tool: str, exc: Any) -> str:
        reason, message = str(exc.reason or ""), ""
        try:
            status = json.loads(exc.body or "")
        except (TypeError, ValueError):
            status = None
        if isinstance(status, dict):
            reason = str(status.get("reason") or reason)
            message = str(status.get("message") or "")
        else:
            message = " ".join(str(exc.body or "").split())[:300]
        return self.redactor.text(f"{tool}: {exc.status} {reason}: {message or 'no message'}")

    async def list(
        self,
        tool: str,
        method: Callable[..., Any],
        namespace: str | None,
        selectors: Mapping[str, str],
        page: Callable[[JsonObject], JsonObject] | None = None,
    ) -> JsonObject:
        """A whole List (pages merged into the first page's object) up to max_items; a 410 (an expired continue
        token) restarts it once. ``namespace`` None lists a cluster-scoped kind; ``page`` changes each page as it
        is parsed (a Secret's values dropped before anything else sees them)."""
        for restart in (False, True):
            try:
                return await self._pages(tool, method, namespace, selectors, page)
            except ApiError as exc:
                if exc.status != 410 or restart:
                    raise
        raise AssertionError("unreachable")

    async def _pages(
        self,
        tool: str,
        method: Callable[..., Any],
        namespace: str | None,
        selectors: Mapping[str, str],
        page: Callable[[JsonObject], JsonObject] | None,
    ) -> JsonObject:
        merged: JsonObject | None = None
        token = ""
        read = 0
        positional = () if namespace is None else (namespace,)
        while True:
            extra = {"_continue": token} if token else {}
            data = await self.request(tool, method, *positional, limit=PAGE_SIZE, **selectors, **extra)
            read += len(data)
            body = _json(tool, data)
            del data
            if page is not None:
                body = page(body)
            page_items = body.get("items")
            items = page_items if isinstance(page_items, list) else []
            if merged is None:
                merged = body
                merged["items"] = items
            else:
                all_items = merged["items"]
                assert isinstance(all_items, list)
                all_items.extend(items)
                merged["metadata"] = body.get("metadata", merged.get("metadata"))
            metadata = body.get("metadata")
            token = str(metadata.get("continue") or "") if isinstance(metadata, dict) else ""
            collected = merged["items"]
            assert isinstance(collected, list)
            # Past the read bound the pages read so far stand (their continue token says there is more).
            if not token or len(collected) >= self.access.max_items or read >= MAX_BODY_BYTES:
                return merged

    async def aclose(self) -> None:
        await asyncio.to_thread(self.access.api_client.close)


def read_response(tool: str, response: Any, max_bytes: int) -> bytes:
    """A urllib3 response's (decoded) body read in chunks, no further than ``max_bytes`` (BodyTooLarge)."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.stream(64 * 1024, decode_content=True):
        size += len(chunk)
        if size > max_bytes:
            response.close()
            raise BodyTooLarge(too_large(tool, max_bytes))
        chunks.append(chunk)
    return b"".join(chunks)


class ApiError(ToolError):
    """An API server error answer (a Status object), with its HTTP status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _json(tool: str, data: bytes) -> JsonObject:
    try:
        body = json.loads(data)
    except (UnicodeDecodeError, ValueError):
        raise ToolError(f"{tool}: the API server's answer is not JSON") from None
    if not isinstance(body, dict):
        raise ToolError(f"{tool}: the API server's answer is not an object")
    return body


def _selectors(args: Args) -> dict[str, str]:
    return {key: str(args[key]) for key in ("label_selector", "field_selector") if key in args}


class _KubernetesTool(DeclaredTool):
    def __init__(self, api: KubernetesApi, declaration: Declaration) -> None:
        self._api = api
        self.declaration = declaration

    async def call(self, arguments: JsonObject) -> JsonValue:
        args = self._args(arguments)
        return await self._answer(args, self._api.namespace(self.name, args))

    async def _answer(self, args: Args, namespace: str) -> JsonValue:
        """The answer to checked arguments, in the environment's namespace they name."""
        raise NotImplementedError


class _CoreListing(_KubernetesTool):
    """A namespace's whole List of one core/v1 kind, narrowed by the label and field selectors given."""

    def _list_method(self) -> Callable[..., Any]:
        raise NotImplementedError

    async def _answer(self, args: Args, namespace: str) -> JsonValue:
        listing = await self._api.list(self.name, self._list_method(), namespace, _selectors(args))
        return self._api.redactor.kubernetes(listing)


class Pods(_CoreListing):
    def _list_method(self) -> Callable[..., Any]:
        return self._api.core.list_namespaced_pod


class Events(_CoreListing):
    def _list_method(self) -> Callable[..., Any]:
        return self._api.core.list_namespaced_event


class PodLogs(_KubernetesTool):
    async def _answer(self, args: Args, namespace: str) -> JsonValue:
        pod = str(args["pod"])
        options: dict[str, Any] = {"tail_lines": int(args.get("tail_lines", DEFAULT_TAIL_LINES))}
        if "container" in args:
            options["container"] = str(args["container"])
        if args.get("previous"):
            options["previous"] = True
        if "since_seconds" in args:
            options["since_seconds"] = int(args["since_seconds"])
        data = await self._api.request(self.name, self._api.core.read_namespaced_pod_log, pod, namespace, **options)
        text = data.decode("utf-8", errors="replace")
        lines: list[JsonValue] = list(text.split("\n"))
        if lines and lines[-1] == "":
            lines.pop()
        return self._api.redactor.value(
            {
                "namespace": namespace,
                "pod": pod,
                "container": options.get("container"),
                "previous": bool(options.get("previous", False)),
                "lines": lines,
            }
        )


def match_labels_selector(selector: JsonValue) -> str:
    """A LabelSelector object (matchLabels, matchExpressions) as selector text."""
    if not isinstance(selector, dict):
        return ""
    parts: list[str] = []
    labels = selector.get("matchLabels")
    if isinstance(labels, dict):
        parts += [f"{key}={value}" for key, value in sorted(labels.items())]
    expressions = selector.get("matchExpressions")
    for expression in expressions if isinstance(expressions, list) else []:
        if not isinstance(expression, dict):
            continue
        key, operator = expression.get("key"), expression.get("operator")
        values = expression.get("values")
        listed = ",".join(str(v) for v in values) if isinstance(values, list) else ""
        if operator == "In":
            parts.append(f"{key} in ({listed})")
        elif operator == "NotIn":
            parts.append(f"{key} notin ({listed})")
        elif operator == "Exists":
            parts.append(str(key))
        elif operator == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


def owned_by(item: JsonValue, uid: str) -> bool:
    if not isinstance(item, dict):
        return False
    metadata = item.get("metadata")
    owners = metadata.get("ownerReferences") if isinstance(metadata, dict) else None
    return isinstance(owners, list) and any(isinstance(o, dict) and o.get("uid") == uid for o in owners)


class Rollouts(_KubernetesTool):
    async def _answer(self, args: Args, namespace: str) -> JsonValue:
        name = str(args["deployment"])
        deployment = _json(
            self.name, await self._api.request(self.name, self._api.apps.read_namespaced_deployment, name, namespace)
        )
        spec = deployment.get("spec")
        metadata = deployment.get("metadata")
        selector = match_labels_selector(spec.get("selector") if isinstance(spec, dict) else None)
        uid = str(metadata.get("uid") or "") if isinstance(metadata, dict) else ""
        if not selector:
            raise ToolError(f"{self.name}: deployment {name!r} has no selector")
        listing = await self._api.list(
            self.name, self._api.apps.list_namespaced_replica_set, namespace, {"label_selector": selector}
        )
        items = listing.get("items")
        listing["items"] = [item for item in items if owned_by(item, uid)] if isinstance(items, list) else []
        return self._api.redactor.kubernetes(listing)


def declarations(namespaces: Sequence[str] | None, default: str) -> dict[str, Declaration]:
    """The four tools' declarations where the tools may read ``namespaces`` (any when None), ``default`` first."""
    namespace = _namespace_param(namespaces, default)
    pod_logs = (
        namespace,
        Param("pod", "string", "The pod's name.", required=True),
        Param("container", "string", "The container (needed when the pod has several)."),
        Param("previous", "boolean", "Read the previous (terminated) container's log. Default: false."),
        Param(
            "tail_lines",
            "integer",
            f"Lines from the end (default {DEFAULT_TAIL_LINES}).",
            minimum=1,
            maximum=MAX_TAIL_LINES,
        ),
        Param("since_seconds", "integer", "Only lines newer than this many seconds.", minimum=1),
    )
    rollouts = (namespace, Param("deployment", "string", "The Deployment's name.", required=True))
    return {
        PODS: Declaration(PODS, PODS_DESCRIPTION, (namespace, _LABEL, _FIELD)),
        EVENTS: Declaration(EVENTS, EVENTS_DESCRIPTION, (namespace, _FIELD, _LABEL)),
        POD_LOGS: Declaration(POD_LOGS, POD_LOGS_DESCRIPTION, pod_logs),
        ROLLOUTS: Declaration(ROLLOUTS, ROLLOUTS_DESCRIPTION, rollouts),
    }


def kubernetes_tools(api: KubernetesApi) -> list[Tool]:
    """The six tools over one cluster; every one takes ``namespace`` limited to the environment's."""
    from diagnosis_server.sources.kubernetes_objects import object_tools

    classes: dict[str, type[_KubernetesTool]] = {PODS: Pods, EVENTS: Events, POD_LOGS: PodLogs, ROLLOUTS: Rollouts}
    declared = declarations(api.access.namespaces, api.access.default_namespace)
    return [*(classes[name](api, declaration) for name, declaration in declared.items()), *object_tools(api)]


class KubernetesConfig(Strict):
    kubeconfig: str | None = None
    context: str | None = Field(default=None, min_length=1)
    in_cluster: bool = False
    # The namespaces the tools may read; None: any namespace (the context's namespace by default).
    namespaces: list[Annotated[str, Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]] | None = Field(
        default=None, min_length=1
    )
    timeout_s: Seconds = DEFAULT_TIMEOUT_S

    @model_validator(mode="after")
    def _one_way_in(self) -> KubernetesConfig:
        if self.in_cluster and (self.kubeconfig is not None or self.context is not None):
            raise ValueError("in_cluster = true takes no kubeconfig or context")
        return self


def _prepare(section: KubernetesConfig, opening: Opening, key: str) -> Prepared:
    async def open_(redactor: Redactor) -> Opened:
        kubeconfig = opening.resolve_path(section.kubeconfig) if section.kubeconfig else None
        try:
            access = await asyncio.to_thread(
                load_cluster,
                kubeconfig=kubeconfig,
                context=section.context,
                in_cluster=section.in_cluster,
                namespaces=section.namespaces,
                timeout_s=section.timeout_s,
            )
        except ValueError as exc:
            where = opening.where(f"{key}.in_cluster" if section.in_cluster else f"{key}.kubeconfig")
            raise EnvironmentsError(f"{where}: {exc}") from None
        api = KubernetesApi(access, redactor)
        name = section.context or ("in-cluster" if section.in_cluster else "kubeconfig")
        namespaces: list[JsonValue] = list(access.namespaces or ())
        return Opened(
            tools=kubernetes_tools(api),
            sources=[SourceInfo("kubernetes", name, safe_url(access.host))],
            closers=[api.aclose],
            context={"kubernetes": {"namespaces": namespaces, "default_namespace": access.default_namespace}},
        )

    return Prepared(open_)


KUBERNETES = SourceKind("kubernetes", KubernetesConfig, _prepare)
