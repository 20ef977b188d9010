"""Settings: defaults, environment, config file (JSON or TOML), precedence, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from diagnosis_server.settings import SettingsError, load_settings
from diagnosis_server.store import DEFAULT_DATABASE_URL

CLI = "import sys; from diagnosis_server.cli import main; sys.exit(main())"


def test_defaults() -> None:
    settings = load_settings()
    assert settings.address == "127.0.0.1:50051"
    assert settings.database_url.get_secret_value() == DEFAULT_DATABASE_URL
    assert settings.agent_provider == "heuristic"
    assert settings.metrics_address == "127.0.0.1:9464"
    assert settings.max_message_bytes == 4 * 1024 * 1024
    assert settings.max_question_chars == 4000
    assert settings.max_concurrent_runs == 32
    assert settings.shutdown_grace_s == 10.0
    assert settings.default_scenario == "checkout-oom"
    assert settings.auth_token_pairs() == []


def test_environment_variables_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSIS_ADDRESS", "[::1]:6000")
    monkeypatch.setenv("DIAGNOSIS_MAX_CONCURRENT_RUNS", "3")
    monkeypatch.setenv("DIAGNOSIS_METRICS_ADDRESS", "")
    monkeypatch.setenv("DIAGNOSIS_AUTH_TOKENS", "acme:s3cret-1, globex:s3cret-2")
    settings = load_settings()
    assert settings.address == "[::1]:6000"
    assert settings.max_concurrent_runs == 3
    assert settings.metrics_address == ""  # disabled
    assert settings.auth_token_pairs() == [("acme", "s3cret-1"), ("globex", "s3cret-2")]
    assert "s3cret" not in repr(settings)


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_config_file_is_read_and_environment_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, suffix: str) -> None:
    config = tmp_path / f"diagnosis{suffix}"
    if suffix == ".json":
        config.write_text(json.dumps({"max_question_chars": 123, "shutdown_grace_s": 2.5, "address": "127.0.0.1:7"}))
    else:
        config.write_text('max_question_chars = 123\nshutdown_grace_s = 2.5\naddress = "127.0.0.1:7"\n')
    monkeypatch.setenv("DIAGNOSIS_CONFIG_FILE", str(config))
    monkeypatch.setenv("DIAGNOSIS_ADDRESS", "127.0.0.1:8")
    settings = load_settings()
    assert settings.max_question_chars == 123
    assert settings.shutdown_grace_s == 2.5
    assert settings.address == "127.0.0.1:8"  # env over file
    assert load_settings(address="127.0.0.1:9").address == "127.0.0.1:9"  # flags over env


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"DIAGNOSIS_MAX_CONCURRENT_RUNS": "0"}, "setting max_concurrent_runs (DIAGNOSIS_MAX_CONCURRENT_RUNS)"),
        ({"DIAGNOSIS_MAX_QUESTION_CHARS": "lots"}, "setting max_question_chars (DIAGNOSIS_MAX_QUESTION_CHARS)"),
        ({"DIAGNOSIS_ADDRESS": "localhost"}, "setting address (DIAGNOSIS_ADDRESS)"),
        ({"DIAGNOSIS_METRICS_ADDRESS": "9464"}, "setting metrics_address (DIAGNOSIS_METRICS_ADDRESS)"),
        ({"DIAGNOSIS_DEFAULT_SCENARIO": "nope"}, "setting default_scenario (DIAGNOSIS_DEFAULT_SCENARIO)"),
        ({"DIAGNOSIS_AGENT_PROVIDER": "../x"}, "setting agent_provider (DIAGNOSIS_AGENT_PROVIDER)"),
        ({"DIAGNOSIS_AUTH_TOKENS": "acme"}, "DIAGNOSIS_AUTH_TOKENS: entry 1 is not TENANT:TOKEN"),
        ({"DIAGNOSIS_AUTH_TOKENS": "a b:tok"}, "DIAGNOSIS_AUTH_TOKENS: entry 1: tenant must match"),
        ({"DIAGNOSIS_AUTH_TOKENS": "a:tok,b:tok"}, "one token is given to two tenants"),
        ({"DIAGNOSIS_AUTH_TOKENS_FILE": "/nonexistent/tokens"}, "DIAGNOSIS_AUTH_TOKENS_FILE: cannot read"),
        ({"DIAGNOSIS_TLS_CERT_FILE": "cert.pem"}, "tls_cert_file and tls_key_file"),
        ({"DIAGNOSIS_CONFIG_FILE": "/nonexistent/config.json"}, "DIAGNOSIS_CONFIG_FILE: cannot read"),
    ],
)
def test_bad_settings_are_one_line_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    message = str(caught.value)
    assert expected in message
    assert "\n" not in message


def test_a_token_never_appears_in_a_settings_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSIS_AUTH_TOKENS", "acme:ok-token,bad tenant:leaky-token")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "leaky-token" not in str(caught.value)
    assert "entry 2" in str(caught.value)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "must hold an object of settings"),
        ('{"no_such_setting": 1}', "setting no_such_setting"),
    ],
)
def test_bad_config_files_are_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, content: str, expected: str
) -> None:
    config = tmp_path / "config.json"
    config.write_text(content)
    monkeypatch.setenv("DIAGNOSIS_CONFIG_FILE", str(config))
    with pytest.raises(SettingsError, match=expected):
        load_settings()


def test_serve_exits_2_with_one_line_for_bad_settings(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "DIAGNOSIS_MAX_CONCURRENT_RUNS": "-1"}
    result = subprocess.run(
        [sys.executable, "-c", CLI, "serve", "--database-url", f"sqlite+aiosqlite:///{tmp_path}/x.db"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "diagnosis serve: error: setting max_concurrent_runs (DIAGNOSIS_MAX_CONCURRENT_RUNS): "
        "Input should be greater than or equal to 1"
    ]
    assert not (tmp_path / "x.db").exists()
