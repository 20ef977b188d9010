"""Round 3, class 3: secrets in shapes no earlier corpus holds are stored, shown and logged nowhere.

Why: one redaction must know the common secret shapes of every issuer an operator meets (cloud, package registries,
chat webhooks, SaaS tokens, command lines, DSNs without a scheme's user-info, private keys in other armours than
PEM, config formats) before anything is recorded, and must leave ordinary text alone. The corpus
(``round3_secret_corpus``) is planted in log lines, event messages, annotations, env, a ConfigMap, the question,
tool arguments, a replayed MCP-named output and a real MCP server's answers and errors.
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
from .round3_secret_corpus import BY_KIND, READABLE, SECRETS, Secret

HERE = Path(__file__).resolve().parent
MCP_SERVER = HERE / "mcp_round3_secret_server.py"
ASKED = ["go-mysql-dsn-no-scheme", "sshpass-flag", "telegram-bot-token-url", "oracle-ezconnect"]
QUESTION = "cart-svc pods keep restarting since noon, why? I ran: " + " ; ".join(BY_KIND[k].text for k in ASKED)


def _planted_pack() -> Pack:
    """The cart incident with every secret in a log line and a Warning event, some in annotations and env, all in a
    ConfigMap; the readable texts in log lines too."""
    pack = load_pack("cart-pods-restarting")
    k8s = pack["kubernetes"]
    log = k8s["pod_logs"][0]
    for s in SECRETS:
        log["lines"].append(json.dumps({"level": "error", "ts": "2025-03-11T12:25:11.000Z", "msg": s.text}))
    for text in READABLE:
        log["lines"].append(json.dumps({"level": "info", "ts": "2025-03-11T12:25:12.000Z", "msg": text}))
    first = k8s["events"][0]
    for n, s in enumerate(SECRETS):
        event = copy.deepcopy(first)
        event["metadata"]["name"] = f"{first['metadata']['name']}-r3s{n}"
        event.update(type="Warning", reason="Failed", message=f"Error: {s.text}", count=1)
        k8s["events"].append(event)
    pod = k8s["pods"][0]
    pod["metadata"].setdefault("annotations", {}).update({f"ops.example/{s.kind}": s.text for s in SECRETS[::3]})
    pod["spec"]["containers"][0]["env"] = [
        {"name": "LEDGER_DSN", "value": BY_KIND["go-mysql-dsn-no-scheme"].text},
        {"name": "NOTIFY_HOOK", "value": BY_KIND["discord-webhook"].text},
    ]
    k8s["configmaps"] = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "cart-svc-r3-config",
                "namespace": "shop",
                "uid": "0c3b7e0e-1111-4222-8333-944455556677",
                "creationTimestamp": "2025-03-01T00:00:00Z",
            },
            "data": {f"{s.kind}.conf": s.text for s in SECRETS},
        }
    ]
    return pack


def _replay_case() -> world.Json:
    """Every secret as a tool call's argument and in an MCP-named tool's recorded output."""
    events, logs, metrics, deploys = (copy.deepcopy(i) for i in world.INVOCATIONS)
    logs["arguments"]["query"] = " | ".join(s.text for s in SECRETS)
    metrics["arguments"]["filters"] = [s.text for s in SECRETS]
    mcp = {
        "invocation_id": "inv-mcp-r3",
        "tool_name": "mcp.ops.dump",
        "arguments": {"service": "ledger-svc", "note": BY_KIND["redis-cli-a-flag"].text},
        "output": {
            "content": [{"type": "text", "text": "\n".join(s.text for s in SECRETS)}],
            "structured": {s.kind: s.text for s in SECRETS},
        },
    }
    return world.case("r3-secrets-replay", invocations=[events, logs, metrics, deploys, mcp])


def _mcp_config() -> str:
    command = json.dumps([sys.executable, str(MCP_SERVER), "stdio"])
    return f'[environments.prod]\n[[environments.prod.mcp]]\nname = "ops"\ncommand = {command}\n'


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
            invocation = await call(toolset, f"mcp.ops.{tool}", arguments)
            out[tool] = str(invocation) + invocation.SerializeToString().decode("latin-1")
        return out


class World:
    def __init__(self, pack: Outcome, replay: Outcome, mcp: Mapping[str, str], log: str) -> None:
        self.pack, self.replay, self.mcp, self.log = pack, replay, mcp, log


@pytest.fixture(scope="module")
def gathered(tmp_path_factory: pytest.TempPathFactory) -> World:
    folder = tmp_path_factory.mktemp("r3-secrets")
    log_path = folder / "service.log"
    saved = structlog.get_config()
    with log_path.open("w", encoding="utf-8") as stream:
        configure_logging("debug", stream=stream)
        try:
            pack = asyncio.run(
                run_packs_async(
                    {"r3-secrets": _planted_pack()}, folder / "pack", question=QUESTION, with_invocations=True
                )
            )["r3-secrets"]
            replay = run_all([_replay_case()])["r3-secrets-replay"]
            mcp = asyncio.run(_mcp_calls(folder))
        finally:
            structlog.configure(**saved)
    return World(pack, replay, mcp, log_path.read_text(encoding="utf-8"))


def _stored(outcome: Outcome) -> str:
    return outcome.stored_texts() + "\n".join(str(i) for i in outcome.invocations)


def _places(secret: Secret, **texts: str) -> list[str]:
    return [name for name, text in texts.items() if secret.needle in text]


# Formats that leak today, by vector, and where (a strict xfail each; none left).
LEAKS_PACK: dict[str, str] = {}
LEAKS_ANSWER: dict[str, str] = {}
LEAKS_REPLAY: dict[str, str] = {}
LEAKS_MCP: dict[str, str] = {}
LEAKS_QUESTION: dict[str, str] = {}
LEAKS_LOG: dict[str, str] = {}


@pytest.mark.requirement("R-C-2")
@pytest.mark.parametrize("secret", [vector(s.kind, s, leak=LEAKS_PACK.get(s.kind, "")) for s in SECRETS])
def test_a_round3_pack_secret_is_stored_nowhere(secret: Secret, gathered: World) -> None:
    where = _places(secret, stored=_stored(gathered.pack))
    assert not where, f"{secret.kind} {secret.needle!r} found in {where}"


@pytest.mark.requirement("R-A-1")
@pytest.mark.parametrize("secret", [vector(s.kind, s, leak=LEAKS_ANSWER.get(s.kind, "")) for s in SECRETS])
def test_a_round3_pack_secret_is_never_in_the_answer(secret: Secret, gathered: World) -> None:
    assert secret.needle not in gathered.pack.shown_texts()


@pytest.mark.requirement("R-C-2")
@pytest.mark.parametrize("secret", [vector(s.kind, s, leak=LEAKS_REPLAY.get(s.kind, "")) for s in SECRETS])
def test_a_round3_secret_in_arguments_and_mcp_named_outputs_is_stored_nowhere(secret: Secret, gathered: World) -> None:
    where = _places(secret, stored=_stored(gathered.replay), answer=gathered.replay.shown_texts())
    assert not where, f"{secret.kind} {secret.needle!r} found in {where}"


@pytest.mark.requirement("R-C-2")
@pytest.mark.parametrize("secret", [vector(s.kind, s, leak=LEAKS_MCP.get(s.kind, "")) for s in SECRETS])
def test_a_round3_mcp_secret_is_recorded_nowhere(secret: Secret, gathered: World) -> None:
    where = _places(secret, **gathered.mcp)
    assert not where, f"{secret.kind} {secret.needle!r} recorded by {where}"


@pytest.mark.parametrize("kind", [vector(k, k, leak=LEAKS_QUESTION.get(k, "")) for k in ASKED])
def test_a_round3_secret_in_the_question_is_stored_nowhere(kind: str, gathered: World) -> None:
    run = gathered.pack.run
    secret = BY_KIND[kind]
    where = _places(secret, question=run.question, trigger=str(run.trigger))
    assert not where, f"{kind} {secret.needle!r} stored in {where}"


@pytest.mark.parametrize("secret", [vector(s.kind, s, leak=LEAKS_LOG.get(s.kind, "")) for s in SECRETS])
def test_a_round3_secret_never_reaches_the_service_log(secret: Secret, gathered: World) -> None:
    assert gathered.log.strip(), "the runs logged nothing: the check would be empty"
    assert secret.needle not in gathered.log, f"{secret.kind} in the service's log"


@pytest.mark.requirement("R-C-2")
@pytest.mark.parametrize("text", READABLE)
def test_a_text_without_a_secret_is_stored_as_written(text: str, gathered: World) -> None:
    assert json.dumps(text)[1:-1] in _stored(gathered.pack) or text in _stored(gathered.pack), (
        f"{text!r} was changed on its way to the store"
    )


def test_the_round3_attack_is_real(gathered: World) -> None:
    assert "[REDACTED]" in _stored(gathered.pack)
    assert "ledger-svc" in gathered.mcp["recent_errors"] and "failed" in gathered.mcp["failing_call"]
    assert gathered.pack.run.answer_text


def test_every_pinned_leak_names_a_vector() -> None:
    kinds = set(BY_KIND)
    for table in (LEAKS_PACK, LEAKS_ANSWER, LEAKS_REPLAY, LEAKS_MCP, LEAKS_LOG):
        assert set(table) <= kinds
    assert set(LEAKS_QUESTION) <= set(ASKED)
