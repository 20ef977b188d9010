"""Secrets of every common shape, in tool outputs and arguments of every source (recorded packs through
the embedded default agents, MCP outputs, replayed invocations), appear neither in the stored run and invocations,
nor in the answer, nor in the service's log."""

from __future__ import annotations

import asyncio
import copy
import json
import sys
from pathlib import Path

import pytest
import structlog

from diagnosis_server.agents.heuristic import HeuristicProvider
from diagnosis_server.api.components import pack_tools_for
from diagnosis_server.api.logging import configure_logging
from diagnosis_server.conversions import JsonObject
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import open_repository
from diagnosis_server.tools.scenario import load_user_scenarios
from tests.sources.helpers import call, opened
from tests.support import settings as support_settings
from tests.support.api import api_servers

from . import world
from .harness import Outcome, run_all
from .secrets_corpus import SECRETS, Secret
from .vectors import param

HERE = Path(__file__).resolve().parent
PACK = HERE.parent / "incidents" / "packs" / "cart-pods-restarting.json"
MCP_SERVER = HERE / "mcp_secrets_server.py"

# What leaks today, by vector ("replay-", "pack-" or "mcp-" and a secret kind): none.
LEAKS: dict[str, str] = {}


def _found(secret: Secret, **places: str) -> list[str]:
    return [name for name, text in places.items() if secret.needle in text]


# ------------------------------------------------------------------ replayed invocations (every tool shape)


def _replay_case() -> world.Json:
    """Every secret in a log line, an event message, a Prometheus label, an MCP-named tool's output and the
    arguments of each call; a claim quotes the first log line's secret."""
    events, logs, metrics, deploys = (copy.deepcopy(i) for i in world.INVOCATIONS)
    for s in SECRETS:
        logs["output"]["lines"].append({"ts": "2026-11-30T09:47:20Z", "level": "error", "message": s.text})
        events["output"]["items"].append(
            dict(events["output"]["items"][0], reason="Failed", message=f"Error: {s.text}", count=1)
        )
        metrics["output"]["labels"][f"x_{s.kind.replace('-', '_')}"] = s.text
    logs["arguments"]["query"] = " ".join(s.text for s in SECRETS[:6])
    metrics["arguments"]["headers"] = {"Authorization": "Bearer 3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e"}
    mcp = {
        "invocation_id": "inv-mcp-vault",
        "tool_name": "mcp.vault.lookup",
        "arguments": {"service": "ledger-svc", "dsn": SECRETS[0].text},
        "output": {"content": [{"type": "text", "text": "\n".join(s.text for s in SECRETS)}]},
    }
    quoting = world.claim(
        "c5",
        f"ledger-svc logs {SECRETS[4].text}",
        world.bind(logs, "/lines/2/message", SECRETS[4].text),
        critical=False,
    )
    return world.case("secrets-replay", [quoting], invocations=[events, logs, metrics, deploys, mcp])


@pytest.fixture(scope="module")
def replayed() -> Outcome:
    return run_all([_replay_case()])["secrets-replay"]


@pytest.mark.parametrize("secret", [param(s.kind, s, leak=LEAKS.get(f"replay-{s.kind}", "")) for s in SECRETS])
def test_a_replayed_secret_is_never_shown(secret: Secret, replayed: Outcome) -> None:
    assert not _found(secret, answer=replayed.shown_texts(), run=replayed.run.SerializeToString().decode("latin-1"))


def test_a_replayed_invocation_is_stored_redacted(replayed: Outcome) -> None:
    stored = "\n".join(str(i) for i in replayed.invocations) + replayed.stored_texts()
    leaked = [s.kind for s in SECRETS if s.needle in stored]
    assert not leaked, f"stored unredacted: {leaked}"


# ------------------------------------------------------------------ a recorded pack through the embedded default


def _pack_with_secrets(folder: Path) -> str:
    pack = json.loads(PACK.read_text(encoding="utf-8"))
    pack["name"] = "ledger-secrets"
    k8s = pack["kubernetes"]
    log = k8s["pod_logs"][0]
    for s in SECRETS:
        log["lines"].append(json.dumps({"level": "error", "ts": "2025-03-11T12:25:00.000Z", "msg": s.text}))
    first = k8s["events"][0]
    for n, s in enumerate(SECRETS):
        event = copy.deepcopy(first)
        event["metadata"]["name"] = f"{first['metadata']['name']}-s{n}"
        event.update(type="Warning", reason="Failed", message=f"Failed to pull image: {s.text}", count=1)
        k8s["events"].append(event)
    pod = k8s["pods"][0]
    pod["metadata"].setdefault("annotations", {})["ledger.example/dsn"] = SECRETS[0].text
    pack["prometheus"] = {
        "series": [
            {
                "metric": {
                    "__name__": "kube_pod_container_status_restarts_total",
                    "pod": pod["metadata"]["name"],
                    "namespace": "shop",
                    **{f"x_{s.kind.replace('-', '_')}": s.text for s in SECRETS},
                },
                "values": [[1741692600, "0"], [1741694400, "3"], [1741696200, "6"]],
            }
        ]
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ledger-secrets.json").write_text(json.dumps(pack), encoding="utf-8")
    return str(pack["question"])


@pytest.fixture(scope="module")
def pack_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Outcome, str]:
    folder = tmp_path_factory.mktemp("packs")
    question = _pack_with_secrets(folder)
    scenarios = load_user_scenarios(folder)

    async def go() -> Outcome:
        repository = await open_repository(f"sqlite+aiosqlite:///{folder / 'store.db'}")
        try:
            orchestrator = Orchestrator(
                store=repository, provider=HeuristicProvider(), tools_for=pack_tools_for(scenarios)
            )
            run = await orchestrator.run(question=question, scenario="ledger-secrets")
            stored = await repository.get_run(run.run_id)
            assert stored is not None
            return Outcome(stored, await repository.list_tool_invocations(run.run_id))
        finally:
            await repository.close()

    return asyncio.run(go()), question


@pytest.fixture(scope="module")
def pack_outcome(pack_run: tuple[Outcome, str]) -> Outcome:
    return pack_run[0]


def test_the_pack_run_read_the_planted_outputs(pack_outcome: Outcome) -> None:
    """The attack is real: the run called tools over the pack and recorded outputs."""
    assert pack_outcome.invocations, pack_outcome.run.answer_text
    assert pack_outcome.run.answer_text


@pytest.mark.parametrize("secret", [param(s.kind, s, leak=LEAKS.get(f"pack-{s.kind}", "")) for s in SECRETS])
def test_a_pack_secret_is_stored_and_shown_nowhere(secret: Secret, pack_outcome: Outcome) -> None:
    where = _found(secret, stored=pack_outcome.stored_texts(), answer=pack_outcome.shown_texts())
    assert not where, f"{secret.kind} {secret.needle!r} found in {where}"


def test_no_secret_reaches_the_service_log(
    pack_run: tuple[Outcome, str], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The same pack run and replay again, under a debug-level log captured at the file descriptors."""
    folder = tmp_path / "packs"
    question = _pack_with_secrets(folder)
    scenarios = load_user_scenarios(folder)

    async def go() -> None:
        repository = await open_repository(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
        try:
            orchestrator = Orchestrator(
                store=repository, provider=HeuristicProvider(), tools_for=pack_tools_for(scenarios)
            )
            await orchestrator.run(question=question, scenario="ledger-secrets")
        finally:
            await repository.close()

    saved = structlog.get_config()
    configure_logging("debug")  # whatever an earlier test of this worker left, the service's own at debug
    try:
        asyncio.run(go())
        run_all([_replay_case()])
    finally:
        structlog.configure(**saved)
    out, err = capfd.readouterr()
    assert err.strip(), "the runs logged nothing: the check would be empty"
    leaked = [s.kind for s in SECRETS if s.needle in out + err]
    assert not leaked, f"in the log: {leaked}"


# ------------------------------------------------------------------ a real MCP server's outputs and arguments


def _mcp_config() -> str:
    command = json.dumps([sys.executable, str(MCP_SERVER), "stdio"])
    return f'[environments.prod]\n[[environments.prod.mcp]]\nname = "vault"\ncommand = {command}\n'


@pytest.fixture(scope="module")
def mcp_invocations(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each tool called once through the tool runner; what the runner recorded (output, arguments, error)."""
    folder = tmp_path_factory.mktemp("mcp")

    async def go() -> dict[str, str]:
        async with opened(folder, _mcp_config()) as registry:
            toolset = registry.tools_for("prod").toolset
            calls: dict[str, JsonObject] = {
                "vault_text": {"service": "ledger-svc"},
                "vault_json": {"service": "ledger-svc"},
                "echo_args": {"service": "ledger-svc", "query": " | ".join(s.text for s in SECRETS)},
                "failing_login": {"service": "ledger-svc"},
            }
            out: dict[str, str] = {}
            for tool, arguments in calls.items():
                invocation = await call(toolset, f"mcp.vault.{tool}", arguments)
                out[tool] = str(invocation) + invocation.SerializeToString().decode("latin-1")
            return out

    return asyncio.run(go())


def test_the_mcp_tools_answered(mcp_invocations: dict[str, str]) -> None:
    """The attack is real: the server's tools ran and their answers were recorded."""
    assert "ledger-svc" in mcp_invocations["vault_text"]
    assert "login to ledger-svc failed" in mcp_invocations["failing_login"]


@pytest.mark.parametrize("secret", [param(s.kind, s, leak=LEAKS.get(f"mcp-{s.kind}", "")) for s in SECRETS])
def test_an_mcp_secret_is_recorded_nowhere(secret: Secret, mcp_invocations: dict[str, str]) -> None:
    where = _found(secret, **mcp_invocations)
    assert not where, f"{secret.kind} {secret.needle!r} recorded by {where}"


# ------------------------------------------------------------------ a question that carries credentials

ASKED_SECRETS = [s for s in SECRETS if s.kind in {"url-userinfo", "bearer-header", "aws-akia", "github-ghp", "jwt"}]


async def test_a_secret_in_the_question_is_stored_and_echoed_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Through a real server: the question pastes a DSN, a header, keys and a JWT, as a user in a hurry would."""
    support_settings.clean_environment(monkeypatch)
    question = "Why is ledger-svc failing? It logs: " + "; ".join(s.text for s in ASKED_SECRETS)
    async with api_servers(lambda _: tmp_path / "api.db") as factory:
        api = await factory()
        responses = await api.diagnose(question)
    assert responses, "the server answered"
    repository = await open_repository(f"sqlite+aiosqlite:///{tmp_path / 'api.db'}")
    try:
        page = await repository.list_runs(tenant=None, page_size=10)
        assert page.runs, "the run was stored"
        stored = "\n".join(str(run) for run in page.runs)
        for run in page.runs:
            stored += "\n".join(str(i) for i in await repository.list_tool_invocations(run.run_id))
    finally:
        await repository.close()
    streamed = "\n".join(str(r) for r in responses)
    out, err = capfd.readouterr()
    answers = "\n".join(r.run.answer_text for r in responses if r.HasField("run"))
    in_answer = [s.kind for s in ASKED_SECRETS if s.needle in answers]
    assert not in_answer, f"in the answer text: {in_answer}"
    in_log = [s.kind for s in ASKED_SECRETS if s.needle in out + err]
    assert not in_log, f"in the log: {in_log}"
    leaks = {s.kind: _found(s, stored=stored, streamed=streamed, log=out + err) for s in ASKED_SECRETS}
    assert not any(leaks.values()), {k: v for k, v in leaks.items() if v}


def test_a_question_of_every_secret_is_stored_redacted_by_the_orchestrator(tmp_path: Path) -> None:
    """Not only the API: any caller's question (an alert's, the CLI's) is redacted before the run is stored, and
    its honest words (the service, a credential-free URL) stay readable."""
    _pack_with_secrets(tmp_path / "packs")
    scenarios = load_user_scenarios(tmp_path / "packs")
    question = "Why is ledger-svc failing (see https://grafana.example.com/d/ledger?orgId=1)? " + " | ".join(
        s.text for s in SECRETS
    )

    async def go() -> Outcome:
        repository = await open_repository(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
        try:
            orchestrator = Orchestrator(
                store=repository, provider=HeuristicProvider(), tools_for=pack_tools_for(scenarios)
            )
            run = await orchestrator.run(question=question[:4000], scenario="ledger-secrets")
            stored = await repository.get_run(run.run_id)
            assert stored is not None
            return Outcome(stored, [])
        finally:
            await repository.close()

    outcome = asyncio.run(go())
    kept = question[:4000]
    asked = [s for s in SECRETS if s.needle in kept]
    assert asked, "the question carries the secrets"
    leaked = [s.kind for s in asked if s.needle in outcome.run.question or s.needle in outcome.run.trigger.question]
    assert not leaked, f"stored in the question: {leaked}"
    assert outcome.run.question.startswith(
        "Why is ledger-svc failing (see https://grafana.example.com/d/ledger?orgId=1)"
    )


def test_every_pinned_leak_names_a_vector() -> None:
    kinds = {s.kind for s in SECRETS}
    assert {key.split("-", 1)[1] for key in LEAKS} <= kinds
    assert {key.split("-", 1)[0] for key in LEAKS} <= {"replay", "pack", "mcp"}
