"""The run viewer's routes: ``GET /``, ``GET /runs/{run_id}``, ``GET /runs/{run_id}.json``, the live events
of a run (Server-Sent Events fed by the service's event hub), sign-in, and the viewer's own assets.

With auth tokens every page needs the caller's tenant: a bearer token, or the HttpOnly, SameSite=Strict cookie
that ``POST /sign-in`` sets from a token. A run of another tenant is 404, like a run that does not exist.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from aiohttp import web
from google.protobuf import json_format

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.api.auth import DEFAULT_TENANT, TokenAuthenticator
from diagnosis_server.api.errors import ApiError
from diagnosis_server.api.follow import DEFAULT_POLL_INTERVAL_S, TERMINAL_STATUSES, RunFollower
from diagnosis_server.api.hub import EventHub
from diagnosis_server.api.validation import check_run_id
from diagnosis_server.api.viewer_assets import CSS, JS
from diagnosis_server.api.viewer_pages import STATUSES, TRIGGERS, VERDICTS, run_page, runs_page, sign_in_page
from diagnosis_server.conversions import enum_short_name
from diagnosis_server.store import InvalidPageToken, RunStore

COOKIE = "diagnosis_session"
PAGE_SIZE = 25
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


@web.middleware
async def security_headers(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Every answer (pages, errors, redirects) carries the CSP and the other security headers."""
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        for name, value in SECURITY_HEADERS.items():
            exc.headers.setdefault(name, value)
        raise
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


class Viewer:
    def __init__(
        self,
        authenticator: TokenAuthenticator,
        repository: RunStore,
        hub: EventHub,
        *,
        poll_interval_s: float = DEFAULT_POLL_INTERVAL_S,
    ) -> None:
        self._auth = authenticator
        self._repository = repository
        self._hub = hub
        self._poll_interval_s = poll_interval_s

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/", self.runs)
        app.router.add_get("/sign-in", self.sign_in_form)
        app.router.add_post("/sign-in", self.sign_in)
        app.router.add_get("/runs/{run_id}/events", self.events)
        app.router.add_get("/runs/{name}", self.run)
        app.router.add_get("/static/viewer.css", self.asset)
        app.router.add_get("/static/viewer.js", self.asset)

    # ------------------------------------------------------------------ who is asking

    def tenant(self, request: web.Request) -> str | None:
        """The caller's tenant (bearer token, else the sign-in cookie); None when it has none that is valid."""
        if not self._auth.enabled:
            return DEFAULT_TENANT
        headers = [("authorization", value) for value in request.headers.getall("Authorization", [])]
        cookie = request.cookies.get(COOKIE, "")
        if not headers and cookie:
            headers = [("authorization", f"Bearer {cookie}")]
        try:
            return self._auth.tenant_for(headers)
        except ApiError:
            return None

    def _require(self, request: web.Request, *, page: bool) -> str:
        tenant = self.tenant(request)
        if tenant is None:
            if page:
                raise web.HTTPSeeOther("/sign-in")
            raise web.HTTPUnauthorized(text="sign in first", headers={"WWW-Authenticate": "Bearer"})
        return tenant

    async def sign_in_form(self, request: web.Request) -> web.Response:
        return _html(sign_in_page())

    async def sign_in(self, request: web.Request) -> web.Response:
        form = await request.post()
        token = str(form.get("token", "")).strip()
        try:
            self._auth.tenant_for([("authorization", f"Bearer {token}")])
        except ApiError:
            return _html(sign_in_page("That token is not valid."), status=401)
        response = web.HTTPSeeOther("/")
        response.set_cookie(
            COOKIE, token, httponly=True, samesite="Strict", secure=request.secure, path="/", max_age=12 * 3600
        )
        raise response

    # ------------------------------------------------------------------ pages

    async def runs(self, request: web.Request) -> web.Response:
        tenant = self._require(request, page=True)
        query = request.query
        filters = {name: query.get(name, "").lower() for name in ("status", "verdict", "trigger")}
        numbers: dict[str, int] = {}
        for name, names, prefix in (
            ("status", STATUSES, "RUN_STATUS_"),
            ("verdict", VERDICTS, "VERDICT_"),
            ("trigger", TRIGGERS, "TRIGGER_KIND_"),
        ):
            value = filters[name]
            if value and value not in names:
                return _html(f"unknown {name} {value!r}", status=400, plain=True)
            numbers[name] = _number(name, prefix, value)
        try:
            page = await self._repository.list_runs(
                tenant=tenant, page_size=PAGE_SIZE, page_token=query.get("page_token", ""), **numbers
            )
        except InvalidPageToken as exc:
            return _html(f"page_token: {exc}", status=400, plain=True)
        return _html(runs_page(page.runs, filters=filters, next_page_token=page.next_page_token))

    async def _owned(self, run_id: str, tenant: str) -> run_pb2.DiagnosisRun:
        try:
            check_run_id(run_id)
        except ApiError:
            raise web.HTTPNotFound(text="no such run") from None
        run = await self._repository.get_run(run_id, tenant=tenant)
        if run is None:
            raise web.HTTPNotFound(text="no such run")
        return run

    async def run(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        as_json = name.endswith(".json")
        tenant = self._require(request, page=not as_json)
        run = await self._owned(name.removesuffix(".json") if as_json else name, tenant)
        if as_json:
            document = json_format.MessageToJson(run, preserving_proto_field_name=True)
            return web.Response(text=document, content_type="application/json")
        invocations = await self._repository.list_tool_invocations(run.run_id)
        events = await self._repository.list_events(run.run_id)
        live = run.status not in TERMINAL_STATUSES and self._hub.is_live(run.run_id)
        return _html(run_page(run, invocations, events, live=live))

    async def events(self, request: web.Request) -> web.StreamResponse:
        """The run's events after ``after`` as Server-Sent Events (``node``, then one ``ended``), from the hub."""
        tenant = self._require(request, page=False)
        run_id = request.match_info["run_id"]
        try:
            after = max(int(request.query.get("after", "0")), 0)
        except ValueError:
            raise web.HTTPBadRequest(text="after: must be a whole number") from None
        subscription = self._hub.subscribe(run_id)  # before the store's read: nothing falls between
        try:
            await self._owned(run_id, tenant)
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream", **SECURITY_HEADERS})
            await response.prepare(request)
            follower = RunFollower(
                self._repository, subscription, after_sequence=after, poll_interval_s=self._poll_interval_s
            )
            async for event in follower.events():
                if isinstance(event, run_pb2.ToolCallEvent):
                    call = {
                        "sequence": event.sequence,
                        "tool_name": event.tool_name,
                        "invocation_id": event.invocation_id,
                        "phase": enum_short_name(run_pb2.ToolCallPhase, event.phase, lower=True),
                        "duration_ms": event.duration_ms,
                    }
                    await response.write(f"event: tool\ndata: {json.dumps(call)}\n\n".encode())
                    continue
                data = {
                    "sequence": event.sequence,
                    "node": enum_short_name(run_pb2.NodeName, event.node, lower=True),
                    "outcome": enum_short_name(run_pb2.NodeOutcome, event.outcome, lower=True),
                    "reason_code": event.reason_code,
                    "attempt": event.attempt,
                    "duration_ms": event.duration_ms,
                }
                await response.write(f"event: node\ndata: {json.dumps(data)}\n\n".encode())
            final = follower.final
            ended = {
                "status": enum_short_name(run_pb2.RunStatus, final.status, lower=True) if final else "unknown",
                "verdict": _verdict(final),
            }
            await response.write(f"event: ended\ndata: {json.dumps(ended)}\n\n".encode())
            await response.write_eof()
            return response
        finally:
            subscription.close()

    async def asset(self, request: web.Request) -> web.Response:
        if request.path.endswith(".css"):
            return web.Response(text=CSS, content_type="text/css")
        return web.Response(text=JS, content_type="text/javascript")


def _verdict(run: run_pb2.DiagnosisRun | None) -> str:
    if run is None or not run.verdict:
        return "none"
    return enum_short_name(contracts_pb2.Verdict, run.verdict, lower=True)


def _number(name: str, prefix: str, value: str) -> int:
    if not value:
        return 0
    enums = {"status": run_pb2.RunStatus, "trigger": run_pb2.TriggerKind, "verdict": contracts_pb2.Verdict}
    return int(enums[name].Value(prefix + value.upper()))


def _html(text: str, *, status: int = 200, plain: bool = False) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/plain" if plain else "text/html", charset="utf-8")
