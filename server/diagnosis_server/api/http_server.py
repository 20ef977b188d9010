"""The HTTP side of the service, on the gRPC server's own asyncio loop (aiohttp): Alertmanager's webhook and
the run viewer (``viewer_routes``).

``POST /v1/alertmanager`` takes Alertmanager's webhook payload (version 4): one run per alert group with
firing alerts, answered 202 with ``{"runs": [{"run_id", "group_key", "deduplicated"}]}``; a resolved-only
notification starts nothing (202, no runs); a bad payload is 400 naming the field. With auth tokens the
caller sends ``Authorization: Bearer <token>`` (Alertmanager's ``http_config.authorization``) and the run is
its tenant's.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from aiohttp import web
from google.rpc import error_details_pb2

from diagnosis_server.alerts.payload import PayloadError, parse_webhook
from diagnosis_server.api.alert_runs import AlertInvestigator
from diagnosis_server.api.auth import TokenAuthenticator
from diagnosis_server.api.errors import ApiError
from diagnosis_server.api.viewer_routes import Viewer, security_headers
from diagnosis_server.settings import split_host_port
from diagnosis_server.store import StoreError

log = structlog.get_logger(__name__)

MAX_BODY_BYTES = 4 * 1024 * 1024
TENANT_KEY: web.AppKey[str] = web.AppKey("tenant", str)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def json_error(status: int, message: str, **extra: str) -> web.Response:
    return web.json_response({"error": message, **extra}, status=status)


class HttpApi:
    """The routes and what they share: the authenticator and the alert investigator."""

    def __init__(self, authenticator: TokenAuthenticator, alerts: AlertInvestigator) -> None:
        self.authenticator = authenticator
        self.alerts = alerts

    def tenant_of(self, request: web.Request) -> str:
        """The caller's tenant from its bearer token; ApiError(UNAUTHENTICATED) otherwise."""
        headers = [("authorization", value) for value in request.headers.getall("Authorization", [])]
        return self.authenticator.tenant_for(headers)

    async def alertmanager(self, request: web.Request) -> web.Response:
        try:
            tenant = self.tenant_of(request)
        except ApiError as exc:
            return web.json_response(
                {"error": exc.message}, status=401, headers={"WWW-Authenticate": 'Bearer realm="diagnosis"'}
            )
        if request.content_type != "application/json":
            return json_error(415, "the body must be JSON (Content-Type: application/json)")
        try:
            document: Any = json.loads(await request.read())
        except web.HTTPRequestEntityTooLarge:
            raise
        except (ValueError, UnicodeDecodeError):
            return json_error(400, "the body is not valid JSON", field="(body)")
        try:
            group = parse_webhook(document)
        except PayloadError as exc:
            return json_error(400, f"{exc.field}: {exc.reason}", field=exc.field)
        try:
            outcome = await self.alerts.investigate(group.group_key, group.alerts, tenant=tenant)
        except StoreError as exc:
            log.error("alert_store_failed", group_key=group.group_key[:200], error=str(exc)[:300])
            response = json_error(503, "the store is unavailable; Alertmanager retries the notification")
            response.headers["Retry-After"] = "5"
            return response
        except ApiError as exc:
            field = _violated_field(exc)
            status = 400 if field else 503
            log.warning("alert_refused", group_key=group.group_key[:200], error=exc.message)
            return json_error(status, exc.message, **({"field": field} if field else {}))
        runs = []
        if outcome is not None:
            runs.append(
                {"run_id": outcome.run_id, "group_key": outcome.group_key, "deduplicated": outcome.deduplicated}
            )
        return web.json_response({"runs": runs}, status=202)


def _violated_field(exc: ApiError) -> str:
    """The field an INVALID_ARGUMENT names (its BadRequest detail); empty for another error."""
    for detail in exc.details:
        if isinstance(detail, error_details_pb2.BadRequest) and detail.field_violations:
            field: str = detail.field_violations[0].field
            return field
    return ""


def build_app(api: HttpApi, viewer: Viewer | None = None) -> web.Application:
    """The webhook, and the run viewer's pages when ``viewer`` is given; every answer with the security headers."""
    app = web.Application(client_max_size=MAX_BODY_BYTES, middlewares=[security_headers])
    app.router.add_post("/v1/alertmanager", api.alertmanager)
    if viewer is not None:
        viewer.add_routes(app)
    return app


class HttpServer:
    """The aiohttp application served on one address; ``port`` once started."""

    def __init__(self, app: web.Application, address: str) -> None:
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        self._address = address
        self.port: int | None = None

    async def start(self) -> int:
        host, port = split_host_port(self._address)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, reuse_address=False, reuse_port=False)
        try:
            await site.start()
        except BaseException:
            await self._runner.cleanup()
            raise
        addresses = self._runner.addresses
        self.port = int(addresses[0][1]) if addresses else port
        return self.port

    async def stop(self) -> None:
        await self._runner.cleanup()
