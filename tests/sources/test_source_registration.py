"""A new source is one module defining its ``SourceKind`` and one line in ``kinds.SOURCES``: a status page source
written here (Atlassian Statuspage's public ``GET /api/v2/components.json``), registered through that list only,
is read from the environments file (its section checked, problems named by key), opened (its token read, sent and
redacted), listed (ListEnvironments, ``diagnosis tools list``), called as a tool through the tool runner, and a
suggested call of its tool is an answer's next step in the tool's own words."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import grpc.aio
import pytest
import structlog
from pydantic import field_validator

from diagnosis.v1 import contracts_pb2, diagnosis_service_pb2_grpc
from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis_server.agents.base import AgentRequest
from diagnosis_server.api import start_server
from diagnosis_server.cli import main
from diagnosis_server.conversions import JsonObject, JsonValue, from_value
from diagnosis_server.graph.context import ToolEnvironment
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.graph.source_report import source_failures
from diagnosis_server.settings import load_settings
from diagnosis_server.sources import kinds
from diagnosis_server.sources.arguments import Param
from diagnosis_server.sources.config import EnvironmentsError, load_environments
from diagnosis_server.sources.declared import Declaration, DeclaredTool
from diagnosis_server.sources.http import create_client, get, safe_url
from diagnosis_server.sources.registry import EnvironmentRegistry
from diagnosis_server.sources.sections import DEFAULT_TIMEOUT_S, Seconds, TokenAuth, check_url
from diagnosis_server.sources.source import Opened, Opening, Prepared, SourceInfo, SourceKind
from diagnosis_server.store import Repository
from diagnosis_server.text.redaction import Redactor
from diagnosis_server.tools.base import ToolError, Toolset
from diagnosis_server.tools.error_classes import error_class
from tests.graph import fakes
from tests.graph.test_fabrication import executor_claiming
from tests.support.settings import sqlite_url

from .conftest import free_port
from .fake_http import FakeUpstream, Request, Response, json_response
from .helpers import call

# ---------------------------------------------------------------- the whole source: one module's worth

COMPONENTS = "statuspage.components"
STATUSES = ("operational", "degraded_performance", "partial_outage", "major_outage", "under_maintenance")


class StatusPageConfig(TokenAuth):
    url: str
    timeout_s: Seconds = DEFAULT_TIMEOUT_S

    _url = field_validator("url")(check_url)


class Components(DeclaredTool):
    declaration = Declaration(
        COMPONENTS,
        "The status page's components and their status (GET /api/v2/components.json).",
        (Param("status", "string", "Only the components in this status.", enum=STATUSES),),
    )

    def __init__(self, section: StatusPageConfig, token: str | None, redactor: Redactor) -> None:
        headers = {"Authorization": f"OAuth {token}"} if token else {}
        self._client = create_client(section.url, timeout_s=section.timeout_s, headers=headers)
        self._redactor = redactor

    async def call(self, arguments: JsonObject) -> JsonValue:
        args = self._args(arguments)
        response = await get(self._client, self.name, "/api/v2/components.json", {})
        if not response.is_success:
            raise ToolError(f"{self.name}: HTTP {response.status_code}")
        body = response.json()
        if "status" in args:
            body["components"] = [c for c in body["components"] if c.get("status") == args["status"]]
        return self._redactor.value(body)

    def next_step(self, arguments: Mapping[str, JsonValue]) -> str:
        status = arguments.get("status")
        return "Read the status page's components" + (f" in status {status}" if isinstance(status, str) else "")

    async def aclose(self) -> None:
        await self._client.aclose()


def _prepare(section: StatusPageConfig, opening: Opening, key: str) -> Prepared:
    token = opening.secret(section.token_ref(), section.token_key(key))

    async def open_(redactor: Redactor) -> Opened:
        tool = Components(section, token, redactor)
        return Opened(
            tools=[tool],
            sources=[SourceInfo("statuspage", "statuspage", safe_url(section.url))],
            closers=[tool.aclose],
            context={"statuspage": {"url": safe_url(section.url)}},
        )

    return Prepared(open_, (token,) if token else ())


STATUS_PAGE = SourceKind("statuspage", StatusPageConfig, _prepare)

# ---------------------------------------------------------------- the one line, and a loopback status page

TOKEN = "sp-token-4f1c2a9e7d"


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kinds, "SOURCES", (*kinds.SOURCES, STATUS_PAGE))


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import os

    for name in list(os.environ):
        if name.startswith("DIAGNOSIS_"):
            monkeypatch.delenv(name)
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


def _components(request: Request) -> Response:
    if request.path != "/api/v2/components.json":
        return json_response(404, {"error": "not found"})
    if request.headers.get("authorization") != f"OAuth {TOKEN}":
        return json_response(401, {"error": "unauthorized"})
    page = {"id": "y2j98763l56x", "name": "Shop", "url": "https://status.shop.example", "time_zone": "Etc/UTC"}
    return json_response(
        200,
        {
            "page": {**page, "updated_at": "2026-12-02T18:10:02.000Z"},
            "components": [
                {"id": "b13yz5g2cw10", "name": "Checkout API", "status": "major_outage", "group_id": None},
                {"id": "v4fr0qw9kz2n", "name": "Catalog", "status": "operational", "group_id": None},
                # An upstream that echoes a secret back: redacted like every source's answer.
                {"id": "k9d7m2x1p0qa", "name": f"Payments ({TOKEN})", "status": "degraded_performance"},
            ],
        },
    )


@pytest.fixture
def status_page() -> Iterator[FakeUpstream]:
    upstream = FakeUpstream(_components)
    try:
        yield upstream
    finally:
        upstream.close()


def _environments(tmp_path: Path, section: str) -> Path:
    (tmp_path / "sp-token").write_text(TOKEN + "\n")
    path = tmp_path / "environments.toml"
    path.write_text(f'[environments.prod]\ndefault = true\nloki = {{ url = "http://127.0.0.1:9" }}\n{section}\n')
    return path


# ---------------------------------------------------------------- the tests


def test_an_unregistered_source_is_an_unknown_key(tmp_path: Path) -> None:
    path = _environments(tmp_path, 'statuspage = { url = "http://127.0.0.1:9" }')
    with pytest.raises(EnvironmentsError, match=r"environment 'prod': key statuspage: Extra inputs are not permitted"):
        load_environments(path)


@pytest.mark.parametrize("key", ["loki", "default", "alert_labels"])
def test_a_source_cannot_take_a_key_already_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    monkeypatch.setattr(kinds, "SOURCES", (*kinds.SOURCES, SourceKind(key, StatusPageConfig, _prepare)))
    with pytest.raises(ValueError, match=f"take the key {key!r}"):
        load_environments(_environments(tmp_path, ""))


@pytest.mark.usefixtures("registered")
@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ('statuspage = { url = "ftp://status" }', "key statuspage.url: must be an http:// or https:// URL"),
        ('statuspage = { url = "http://s", colour = "red" }', "key statuspage.colour: Extra inputs are not permitted"),
        (
            'statuspage = { url = "http://s", bearer_token_file = "a", bearer_token_env = "B" }',
            "key statuspage: give bearer_token_file or bearer_token_env, not both",
        ),
    ],
)
def test_a_registered_source_section_is_checked_and_named_by_its_key(
    tmp_path: Path, section: str, expected: str
) -> None:
    with pytest.raises(EnvironmentsError, match=f"environment 'prod': {expected}"):
        load_environments(_environments(tmp_path, section))


@pytest.mark.usefixtures("registered")
async def test_a_registered_source_with_a_missing_token_names_the_key(tmp_path: Path) -> None:
    path = _environments(tmp_path, 'statuspage = { url = "http://s", bearer_token_file = "missing" }')
    with pytest.raises(EnvironmentsError, match=r"key statuspage\.bearer_token_file: cannot read"):
        await EnvironmentRegistry.open(load_environments(path))


@pytest.mark.usefixtures("registered")
async def test_a_registered_source_opens_lists_and_answers_through_the_runner(
    tmp_path: Path, status_page: FakeUpstream
) -> None:
    path = _environments(tmp_path, f'statuspage = {{ url = "{status_page.url}", bearer_token_file = "sp-token" }}')
    registry = await EnvironmentRegistry.open(load_environments(path))
    try:
        env = registry.get("prod")
        assert env.toolset.names == ("loki.query_range", COMPONENTS)  # the registration list's order
        assert [(s.kind, s.endpoint) for s in env.sources] == [
            ("loki", "http://127.0.0.1:9"),
            ("statuspage", status_page.url),
        ]
        context = registry.tools_for("prod").context
        assert context["statuspage"] == {"url": status_page.url}
        assert context["sources"] == [
            {"kind": "loki", "name": "loki", "endpoint": "http://127.0.0.1:9"},
            {"kind": "statuspage", "name": "statuspage", "endpoint": status_page.url},
        ]
        invocation = await call(env.toolset, COMPONENTS, {"status": "major_outage"})
        assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK, invocation.error
        output: Any = from_value(invocation.output)
        assert [c["name"] for c in output["components"]] == ["Checkout API"]
        everything = await call(env.toolset, COMPONENTS, {})
        every: Any = from_value(everything.output)
        names = [c["name"] for c in every["components"]]
        assert names[:2] == ["Checkout API", "Catalog"] and TOKEN not in names[2] and "[REDACTED" in names[2]
        refused = await call(env.toolset, COMPONENTS, {"status": "on_fire"})
        assert refused.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR and "status" in refused.error
    finally:
        await registry.aclose()
    assert status_page.requests and status_page.requests[0].headers["authorization"] == f"OAuth {TOKEN}"


@pytest.mark.usefixtures("registered")
async def test_a_registered_source_is_listed_by_list_environments(tmp_path: Path, status_page: FakeUpstream) -> None:
    path = _environments(tmp_path, f'statuspage = {{ url = "{status_page.url}", bearer_token_file = "sp-token" }}')
    settings = load_settings(
        address="127.0.0.1:0",
        database_url=sqlite_url(tmp_path / "api.db"),
        metrics_address="",
        http_address="",
        environments_file=str(path),
    )
    running = await start_server(settings)
    channel = grpc.aio.insecure_channel(running.target)
    try:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        response = await stub.ListEnvironments(pb.ListEnvironmentsRequest())
    finally:
        await channel.close()
        await running.stop(grace=1.0)
    (prod,) = response.environments
    assert list(prod.tool_names) == ["loki.query_range", COMPONENTS]
    assert [(s.kind, s.name, s.endpoint) for s in prod.sources][1] == ("statuspage", "statuspage", status_page.url)


@pytest.mark.usefixtures("registered")
def test_a_registered_source_is_listed_and_called_by_the_cli(
    tmp_path: Path, status_page: FakeUpstream, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _environments(tmp_path, f'statuspage = {{ url = "{status_page.url}", bearer_token_file = "sp-token" }}')
    monkeypatch.setenv("DIAGNOSIS_ENVIRONMENTS_FILE", str(path))
    assert main(["tools", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["tools"]
    assert [t["name"] for t in listed] == ["loki.query_range", COMPONENTS]
    assert listed[1]["input_schema"]["properties"]["status"]["enum"] == list(STATUSES)
    assert main(["tools", "call", COMPONENTS, "--json", "--args", '{"status": "operational"}']) == 0
    invocation = json.loads(capsys.readouterr().out)
    assert invocation["status"] == "TOOL_INVOCATION_STATUS_OK"
    assert [c["name"] for c in invocation["output"]["components"]] == ["Catalog"]


async def test_a_suggested_call_of_its_tool_is_a_next_step_in_the_tools_own_words(repository: Repository) -> None:
    async def verifier(request: AgentRequest) -> str:
        gap = {
            "claim_id": "c2",
            "description": "whether the payment provider is degraded was not checked",
            "critical": False,
            "next_calls": [{"tool_name": COMPONENTS, "arguments": {"status": "major_outage"}}],
        }
        checks = [
            {"claim_id": "c1", "classification": "direct_observation", "critical": True, "evidence_refs": []},
            {"claim_id": "c2", "classification": "unsupported", "critical": True, "evidence_refs": []},
        ]
        answer = {"claim_checks": checks, "verdict": "LOW_CONFID", "groundedness_score": 0.5, "rationale": "r"}
        return json.dumps({**answer, "evidence_gaps": [gap]})

    status = Components(StatusPageConfig(url="http://127.0.0.1:9"), None, Redactor())
    toolset = Toolset([fakes.EchoTool(), status])
    provider = fakes.pipeline(executor=executor_claiming("the payment provider is degraded"), verifier=verifier)
    try:
        await Orchestrator(
            store=repository,
            provider=provider,
            tools_for=lambda _: ToolEnvironment(toolset=toolset, context={"services": ["checkout-api"]}),
        ).run(question="why is checkout-api failing?", scenario="")
    finally:
        await status.aclose()
    (request,) = provider.seen["composer"]
    steps = json.loads(request.input_bytes)["next_steps"]
    assert [step["text"] for step in steps] == [
        "Read the status page's components in status major_outage (statuspage.components status=major_outage)."
    ]


@pytest.mark.usefixtures("registered")
async def test_a_registered_source_that_is_down_is_reported_by_its_kind(tmp_path: Path) -> None:
    """The breaker, the error classes and the run's source failures read a tool's source from its name's first
    part, the kind's key: a new source needs nothing of them."""
    down = f"http://127.0.0.1:{free_port()}"
    path = _environments(tmp_path, f'statuspage = {{ url = "{down}", bearer_token_file = "sp-token" }}')
    registry = await EnvironmentRegistry.open(load_environments(path))
    try:
        env = registry.get("prod")
        invocation = await call(env.toolset, COMPONENTS, {})
        context = registry.tools_for("prod").context
    finally:
        await registry.aclose()
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    assert error_class(invocation) == "unreachable"
    (failure,) = source_failures([invocation], context)
    assert (failure.source, failure.endpoint, list(failure.tool_names)) == ("statuspage", down, [COMPONENTS])
