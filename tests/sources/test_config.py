"""The environments file: the pinned interface parses; every problem is one line naming the file, the
environment and the key, and never a secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnosis_server.api.server import StartupError, open_environments
from diagnosis_server.settings import load_settings
from diagnosis_server.sources.config import EnvironmentsError, SecretFrom, load_environments

PINNED = """
[environments.prod]                       # the name a request gives
default = true
prometheus = { url = "http://127.0.0.1:9090", bearer_token_file = "/run/secrets/prom" }
loki = { url = "http://127.0.0.1:3100", tenant = "team-a" }
kubernetes = { kubeconfig = "/etc/diagnosis/kubeconfig", context = "prod", namespaces = ["shop"] }
[[environments.prod.mcp]]
name = "grafana"
command = ["mcp-grafana", "--stdio"]
tools = ["query_prometheus", "list_alerts"]

[environments.cluster]
kubernetes = { in_cluster = true }
[[environments.cluster.mcp]]
name = "remote"
url = "http://127.0.0.1:8000/mcp"
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "environments.toml"
    path.write_text(text)
    return path


def test_the_pinned_example_parses(tmp_path: Path) -> None:
    environments = load_environments(_write(tmp_path, PINNED))
    assert list(environments.environments) == ["prod", "cluster"] and environments.default == "prod"
    prod = environments.environments["prod"]
    assert prod.prometheus is not None and prod.prometheus.token_ref() == SecretFrom(file="/run/secrets/prom")
    assert prod.loki is not None and prod.loki.tenant == "team-a"
    assert prod.kubernetes is not None and prod.kubernetes.namespaces == ["shop"]
    assert prod.mcp[0].tools == ["query_prometheus", "list_alerts"]
    assert environments.environments["cluster"].mcp[0].url == "http://127.0.0.1:8000/mcp"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[environments.prod]\nprometheus = { url = "ftp://x" }\n',
            "environment 'prod': key prometheus.url: must be an http",
        ),
        ('[environments.prod]\nloki = { url = "http://x", tennant = "a" }\n', "key loki.tennant: Extra inputs"),
        ('[environments.prod]\ndefault = "yes"\n', "environment 'prod': key default: Input should be a valid boolean"),
        (
            "[environments.a]\ndefault = true\n[environments.b]\ndefault = true\n",
            "environment 'b': key default: at most one environment may be the default (found 2: a, b)",
        ),
        (
            '[environments.prod]\n[[environments.prod.mcp]]\nname = "g"\n',
            "environment 'prod': key mcp[0]: give exactly one of command (stdio) or url",
        ),
        ('[environments."Prod Env"]\n', "environment 'Prod Env': key (the environment's name)"),
        ("[environments.prod\n", "not valid TOML"),
        ("[other]\n", "key environments: Field required"),
    ],
)
def test_a_bad_file_is_one_line_naming_file_environment_and_key(tmp_path: Path, text: str, expected: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(EnvironmentsError) as error:
        load_environments(path)
    message = str(error.value)
    assert message.startswith(f"environments file {str(path)!r}: ") and expected in message
    assert "\n" not in message


async def test_a_missing_secret_fails_start_up_without_showing_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAFANA_KEY_PRESENT", "grafana-s3cret-value")
    path = _write(
        tmp_path,
        "[environments.prod]\n"
        'prometheus = { url = "http://u:url-pass-1@127.0.0.1:1", bearer_token_env = "NOT_SET_VAR" }\n'
        '[[environments.prod.mcp]]\nname = "g"\ncommand = ["true"]\nenv = { KEY = { env = "GRAFANA_KEY_PRESENT" } }\n',
    )
    settings = load_settings(environments_file=str(path), metrics_address="")
    with pytest.raises(StartupError) as error:
        await open_environments(settings)
    message = str(error.value)
    assert "environment 'prod': key prometheus.bearer_token_env: environment variable NOT_SET_VAR is not set" in message
    assert "url-pass-1" not in message and "grafana-s3cret-value" not in message
