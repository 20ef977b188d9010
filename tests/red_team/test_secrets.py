"""Class 3: real-shaped secrets (``secret_corpus``) in log lines, event messages, pod env and annotations, ConfigMap
and Secret objects, the question, tool arguments, MCP outputs and MCP errors are found neither in the answer, nor in
the stored run and its tool invocations (the SQLite store), nor in the service's log.

Channels: ``pack`` (a recorded pack through the embedded default, the store and the answer), ``replay`` (scripted
invocations: a secret as a tool argument and in an MCP-named tool's output), ``mcp`` (a real MCP server's answers and
errors, as the tool runner records them), ``log`` (the service's own log lines, at debug, during all of the above).
"""

from __future__ import annotations

import asyncio
import copy
import json
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
import structlog

from diagnosis_server.api.logging import configure_logging
from diagnosis_server.conversions import JsonObject
from tests.attacks import world
from tests.attacks.harness import Outcome, run_all
from tests.sources.helpers import call, opened

from .common import Pack, load_pack, run_packs_async, vector
from .secret_corpus import BY_KIND, K8S_SECRET_DATA, SECRETS, Secret

HERE = Path(__file__).resolve().parent
MCP_SERVER = HERE / "mcp_secret_server.py"
# Secrets a user in a hurry pastes into the question.
ASKED = [
    "curl-user-flag",
    "password-flag-with-space",
    "stripe-secret-key",
    "azure-storage-account-key",
    "jwt-url-encoded-dots",
]
QUESTION = "cart-svc pods keep restarting since noon, what is going on? Our runbook ran: " + " ; ".join(
    BY_KIND[k].text for k in ASKED
)


def _planted_pack() -> Pack:
    """The recorded cart incident with every secret in a log line of the crashing pod and in a Warning event, some
    in the pod's env and annotations, a ConfigMap's data and a Secret's data."""
    pack = load_pack("cart-pods-restarting")
    k8s = pack["kubernetes"]
    log = k8s["pod_logs"][0]
    for s in SECRETS:
        log["lines"].append(json.dumps({"level": "error", "ts": "2025-03-11T12:25:10.000Z", "msg": s.text}))
    first = k8s["events"][0]
    for n, s in enumerate(SECRETS):
        event = copy.deepcopy(first)
        event["metadata"]["name"] = f"{first['metadata']['name']}-red{n}"
        event.update(type="Warning", reason="Failed", message=f"Error: {s.text}", count=1)
        k8s["events"].append(event)
    pod = k8s["pods"][0]
    pod["metadata"].setdefault("annotations", {}).update({f"ledger.example/{s.kind}": s.text for s in SECRETS[:12]})
    pod["spec"]["containers"][0]["env"] = [
        {"name": "STRIPE_KEY", "value": BY_KIND["stripe-secret-key"].text},
        {"name": "DOCKER_CONFIG_JSON", "value": BY_KIND["docker-config-auth"].text},
    ]
    meta = {
        "namespace": "shop",
        "uid": "0c3b7e0e-1111-4222-8333-944455556666",
        "creationTimestamp": "2025-03-01T00:00:00Z",
    }
    k8s["configmaps"] = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cart-svc-config", **meta},
            "data": {f"{s.kind}.conf": s.text for s in SECRETS},
        }
    ]
    k8s["secrets"] = [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "cart-svc-db", **meta},
            "type": "Opaque",
            "data": {"DATABASE_URL": K8S_SECRET_DATA.text},
        }
    ]
    return pack


def _replay_case() -> world.Json:
    """Every secret as a tool call's argument (under an ordinary key) and in an MCP-named tool's recorded output."""
    events, logs, metrics, deploys = (copy.deepcopy(i) for i in world.INVOCATIONS)
    logs["arguments"]["query"] = " | ".join(s.text for s in SECRETS)
    metrics["arguments"]["filters"] = [s.text for s in SECRETS]
    mcp = {
        "invocation_id": "inv-mcp-config",
        "tool_name": "mcp.config.dump",
        "arguments": {"service": "ledger-svc", "note": BY_KIND["netrc-line"].text},
        "output": {
            "content": [{"type": "text", "text": "\n".join(s.text for s in SECRETS)}],
            "structured": {s.kind: s.text for s in SECRETS},
        },
    }
    return world.case("red-secrets-replay", invocations=[events, logs, metrics, deploys, mcp])


def _mcp_config() -> str:
    command = json.dumps([sys.executable, str(MCP_SERVER), "stdio"])
    return f'[environments.prod]\n[[environments.prod.mcp]]\nname = "cfg"\ncommand = {command}\n'


async def _mcp_calls(folder: Path) -> dict[str, str]:
    async with opened(folder, _mcp_config()) as registry:
        toolset = registry.tools_for("prod").toolset
        calls: dict[str, JsonObject] = {
            "recent_errors": {"service": "ledger-svc"},
            "config_dump": {"service": "ledger-svc"},
            "failing_call": {"service": "ledger-svc"},
        }
        out: dict[str, str] = {}
        for tool, arguments in calls.items():
            invocation = await call(toolset, f"mcp.cfg.{tool}", arguments)
            out[tool] = str(invocation) + invocation.SerializeToString().decode("latin-1")
        return out


class World:
    """Everything the channels recorded, showed and logged, gathered once for the module."""

    def __init__(self, pack: Outcome, replay: Outcome, mcp: Mapping[str, str], log: str) -> None:
        self.pack, self.replay, self.mcp, self.log = pack, replay, mcp, log


@pytest.fixture(scope="module")
def gathered(tmp_path_factory: pytest.TempPathFactory) -> World:
    """One pack run (the question carrying secrets too), one replay, the MCP calls, under the service's debug log
    captured to a file: the log holds whatever any of them logged."""
    folder = tmp_path_factory.mktemp("red-secrets")
    log_path = folder / "service.log"
    saved = structlog.get_config()
    with log_path.open("w", encoding="utf-8") as stream:
        configure_logging("debug", stream=stream)
        try:
            pack = asyncio.run(
                run_packs_async(
                    {"red-secrets": _planted_pack()}, folder / "pack", question=QUESTION, with_invocations=True
                )
            )["red-secrets"]
            replay = run_all([_replay_case()])["red-secrets-replay"]
            mcp = asyncio.run(_mcp_calls(folder))
        finally:
            structlog.configure(**saved)
    return World(pack, replay, mcp, log_path.read_text(encoding="utf-8"))


def _places(secret: Secret, **texts: str) -> list[str]:
    return [name for name, text in texts.items() if secret.needle in text]


def _stored(outcome: Outcome) -> str:
    return outcome.stored_texts() + "\n".join(str(i) for i in outcome.invocations)


ALL = [*SECRETS, K8S_SECRET_DATA]
# Where a secret still leaks, per channel (kind: why); none is pinned today.
LEAKS_PACK: dict[str, str] = {}
LEAKS_REPLAY: dict[str, str] = {}
LEAKS_MCP: dict[str, str] = {}
LEAKS_QUESTION: dict[str, str] = {}
LEAKS_LOG: dict[str, str] = {}
LEAKS_ANSWER: dict[str, str] = {}


@pytest.mark.requirement("R-C-2")
@pytest.mark.parametrize("secret", [vector(s.kind, s, leak=LEAKS_PACK.get(s.kind, "")) for s in ALL])
def test_a_pack_secret_is_stored_and_shown_nowhere(secret: Secret, gathered: World) -> None:
    run = gathered.pack
    where = _places(secret, stored=_stored(run), answer=run.shown_texts())
    assert not where, f"{secret.kind} {secret.needle!r} found in {where}"


@pytest.mark.parametrize("secret", [vector(s.kind, s, leak=LEAKS_ANSWER.get(s.kind, "")) for s in ALL])
def test_a_pack_secret_is_never_in_the_answer(secret: Secret, gathered: World) -> None:
    """Apart from the store: what the user reads (answer text, composer output, every rendered quote)."""
    assert secret.needle not in gathered.pack.shown_texts()


@pytest.mark.requirement("R-C-2")
@pytest.mark.parametrize("secret", [vector(s.kind, s, leak=LEAKS_REPLAY.get(s.kind, "")) for s in SECRETS])
def test_a_secret_in_tool_arguments_and_replayed_outputs_is_stored_nowhere(secret: Secret, gathered: World) -> None:
    run = gathered.replay
    where = _places(secret, stored=_stored(run), answer=run.shown_texts())
    assert not where, f"{secret.kind} {secret.needle!r} found in {where}"


@pytest.mark.requirement("R-C-2")
@pytest.mark.parametrize("secret", [vector(s.kind, s, leak=LEAKS_MCP.get(s.kind, "")) for s in SECRETS])
def test_an_mcp_secret_is_recorded_nowhere(secret: Secret, gathered: World) -> None:
    where = _places(secret, **gathered.mcp)
    assert not where, f"{secret.kind} {secret.needle!r} recorded by {where}"


@pytest.mark.parametrize("kind", [vector(k, k, leak=LEAKS_QUESTION.get(k, "")) for k in ASKED])
def test_a_secret_in_the_question_is_stored_nowhere(kind: str, gathered: World) -> None:
    run = gathered.pack.run
    secret = BY_KIND[kind]
    where = _places(secret, question=run.question, trigger=str(run.trigger))
    assert not where, f"{kind} {secret.needle!r} stored in {where}"


@pytest.mark.parametrize("secret", [vector(s.kind, s, leak=LEAKS_LOG.get(s.kind, "")) for s in ALL])
def test_a_secret_never_reaches_the_service_log(secret: Secret, gathered: World) -> None:
    assert gathered.log.strip(), "the runs logged nothing: the check would be empty"
    assert secret.needle not in gathered.log, f"{secret.kind} in the service's log"


def test_the_attack_is_real(gathered: World) -> None:
    """The pack run read the planted outputs (its invocations hold the redaction marker) and the MCP tools ran."""
    assert "[REDACTED]" in _stored(gathered.pack)
    assert "ledger-svc" in gathered.mcp["recent_errors"] and "failed" in gathered.mcp["failing_call"]
    assert gathered.pack.run.answer_text


def test_every_pinned_leak_names_a_vector() -> None:
    kinds = {s.kind for s in ALL}
    for table in (LEAKS_PACK, LEAKS_REPLAY, LEAKS_MCP, LEAKS_LOG, LEAKS_ANSWER):
        assert set(table) <= kinds
    assert set(LEAKS_QUESTION) <= set(ASKED)
