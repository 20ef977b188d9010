"""Settings: defaults, environment, config file (JSON or TOML), precedence, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic_settings import JsonConfigSettingsSource, TomlConfigSettingsSource

from diagnosis_server.settings import Settings, SettingsError, config_file_source, default_database_url, load_settings
from diagnosis_server.store import open_repository
from tests.support.settings import set_environment

CLI = "import sys; from diagnosis_server.cli import main; sys.exit(main())"


def test_defaults() -> None:
    settings = load_settings()
    assert settings.address == "127.0.0.1:50051"
    assert settings.database_url.get_secret_value() == default_database_url()
    assert settings.agent_provider == "heuristic"
    assert settings.metrics_address == "127.0.0.1:9464"
    assert settings.max_message_bytes == 4 * 1024 * 1024
    assert settings.max_question_chars == 4000
    assert settings.max_concurrent_runs == 32
    assert settings.shutdown_grace_s == 10.0
    assert settings.default_scenario == "checkout-oom"
    assert settings.auth_token_pairs() == []


def test_environment_variables_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    environment = {
        "DIAGNOSIS_ADDRESS": "[::1]:6000",
        "DIAGNOSIS_MAX_CONCURRENT_RUNS": "3",
        "DIAGNOSIS_METRICS_ADDRESS": "",
        "DIAGNOSIS_AUTH_TOKENS": "acme:s3cret-1, globex:s3cret-2",
    }
    set_environment(monkeypatch, environment)
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


async def test_the_default_database_is_one_file_whatever_the_working_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The default SQLite file is in the user's data folder, not under the working directory (which
    ``make clean`` empties); the store creates its folder on first use."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    expected = f"sqlite+aiosqlite:///{tmp_path / 'data' / 'diagnosis-graph' / 'runs.db'}"
    urls = set()
    for cwd in (tmp_path / "one", tmp_path / "two"):
        cwd.mkdir()
        monkeypatch.chdir(cwd)
        urls.add(load_settings().database_url.get_secret_value())
    assert urls == {expected}
    repository = await open_repository(expected)
    await repository.close()
    assert (tmp_path / "data" / "diagnosis-graph" / "runs.db").is_file()
    assert [list((tmp_path / name).iterdir()) for name in ("one", "two")] == [[], []]


@pytest.mark.parametrize("xdg_data_home", [None, "", "relative/data"])
def test_without_an_absolute_xdg_data_home_the_default_database_is_under_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, xdg_data_home: str | None
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    if xdg_data_home is None:
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_DATA_HOME", xdg_data_home)
    expected = f"sqlite+aiosqlite:///{tmp_path / '.local' / 'share' / 'diagnosis-graph' / 'runs.db'}"
    assert default_database_url() == expected
    assert load_settings().database_url.get_secret_value() == expected
    monkeypatch.setenv("DIAGNOSIS_DATABASE_URL", "sqlite+aiosqlite:///elsewhere.db")
    assert load_settings().database_url.get_secret_value() == "sqlite+aiosqlite:///elsewhere.db"


@pytest.mark.parametrize(
    ("name", "source"),
    [("diagnosis.json", JsonConfigSettingsSource), ("diagnosis.toml", TomlConfigSettingsSource),
     ("diagnosis.TOML", TomlConfigSettingsSource), ("diagnosis.conf", JsonConfigSettingsSource)],
)  # fmt: skip
def test_the_config_file_is_read_by_the_pydantic_settings_source_of_its_format(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, source: type
) -> None:
    config = tmp_path / name
    toml = source is TomlConfigSettingsSource
    config.write_text('log_level = "debug"\n' if toml else json.dumps({"log_level": "debug"}))
    monkeypatch.setenv("DIAGNOSIS_CONFIG_FILE", str(config))
    assert isinstance(config_file_source(Settings), source)
    assert load_settings().log_level == "debug"  # the file over the defaults
    monkeypatch.setenv("DIAGNOSIS_LOG_LEVEL", "warning")
    assert load_settings().log_level == "warning"  # env over the file
    assert load_settings(log_level="error").log_level == "error"  # code (flags) over env


def _refused(monkeypatch: pytest.MonkeyPatch, variable: str, value: str) -> str:
    """The one-line message of the error that ``variable=value`` makes the settings raise."""
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("DIAGNOSIS_MAX_CONCURRENT_RUNS", "0"),
        ("DIAGNOSIS_MAX_QUESTION_CHARS", "lots"),
        ("DIAGNOSIS_ADDRESS", "localhost"),
        ("DIAGNOSIS_METRICS_ADDRESS", "9464"),
        ("DIAGNOSIS_DEFAULT_SCENARIO", "nope"),
        ("DIAGNOSIS_AGENT_PROVIDER", "../x"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_setting_and_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    setting = variable.removeprefix("DIAGNOSIS_").lower()
    assert f"setting {setting} ({variable})" in _refused(monkeypatch, variable, value)


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("DIAGNOSIS_AUTH_TOKENS", "acme", "DIAGNOSIS_AUTH_TOKENS: entry 1 is not TENANT:TOKEN"),
        ("DIAGNOSIS_AUTH_TOKENS", "a b:tok", "DIAGNOSIS_AUTH_TOKENS: entry 1: tenant must match"),
        ("DIAGNOSIS_AUTH_TOKENS", "a:tok,b:tok", "one token is given to two tenants"),
        ("DIAGNOSIS_AUTH_TOKENS_FILE", "/nonexistent/tokens", "DIAGNOSIS_AUTH_TOKENS_FILE: cannot read"),
        ("DIAGNOSIS_TLS_CERT_FILE", "cert.pem", "tls_cert_file and tls_key_file"),
        ("DIAGNOSIS_CONFIG_FILE", "/nonexistent/config.json", "DIAGNOSIS_CONFIG_FILE: cannot read"),
    ],
)
def test_bad_tokens_and_files_are_one_line_naming_what_is_wrong(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, expected: str
) -> None:
    assert expected in _refused(monkeypatch, variable, value)


def test_a_token_never_appears_in_a_settings_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSIS_AUTH_TOKENS", "acme:ok-token,bad tenant:leaky-token")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "leaky-token" not in str(caught.value)
    assert "entry 2" in str(caught.value)


CONFIG = "in DIAGNOSIS_CONFIG_FILE '{path}'"


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("config.json", "{not json", "DIAGNOSIS_CONFIG_FILE: '{path}' is not valid JSON: "),
        ("config.json", "[1, 2]", "DIAGNOSIS_CONFIG_FILE: '{path}' must hold an object of settings"),
        ("config.json", '"text"', "DIAGNOSIS_CONFIG_FILE: '{path}' must hold an object of settings"),
        ("config.json", b"\xff\xfe{}", "DIAGNOSIS_CONFIG_FILE: cannot read '{path}': "),
        ("config.json", '{"no_such_setting": 1}', f"setting no_such_setting ({CONFIG}): Extra inputs are not"),
        ("config.json", '{"max_question_chars": "lots"}', f"setting max_question_chars ({CONFIG}): Input should be"),
        ("config.toml", "address = ", "DIAGNOSIS_CONFIG_FILE: '{path}' is not valid TOML: "),
        ("config.toml", "address = \"localhost\"\n", f"setting address ({CONFIG}): 'localhost' is not HOST:PORT"),
        ("config.toml", "max_concurrent_runs = 0\n", f"setting max_concurrent_runs ({CONFIG}): Input should be"),
        ("config.toml", "[server]\naddress = \"127.0.0.1:1\"\n", f"setting server ({CONFIG}): Extra inputs"),
    ],
)  # fmt: skip
def test_a_bad_config_file_is_one_line_naming_the_file_and_the_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, content: str | bytes, expected: str
) -> None:
    config = tmp_path / name
    if isinstance(content, bytes):
        config.write_bytes(content)
    else:
        config.write_text(content)
    monkeypatch.setenv("DIAGNOSIS_CONFIG_FILE", str(config))
    with pytest.raises(SettingsError) as caught:
        load_settings()
    message = str(caught.value)
    assert message.startswith(expected.format(path=config)), message
    assert "\n" not in message


def test_a_config_file_that_is_not_a_file_cannot_be_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DIAGNOSIS_CONFIG_FILE", str(tmp_path))
    with pytest.raises(SettingsError, match=r"^DIAGNOSIS_CONFIG_FILE: cannot read '.*': Is a directory$"):
        load_settings()


def test_a_bad_value_the_environment_gives_names_the_variable_not_the_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("max_concurrent_runs = 4\n")
    monkeypatch.setenv("DIAGNOSIS_CONFIG_FILE", str(config))
    monkeypatch.setenv("DIAGNOSIS_MAX_CONCURRENT_RUNS", "0")
    with pytest.raises(SettingsError, match=r"^setting max_concurrent_runs \(DIAGNOSIS_MAX_CONCURRENT_RUNS\): "):
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


def test_without_a_home_folder_the_default_database_is_a_settings_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setattr(Path, "home", no_home)
    with pytest.raises(SettingsError, match=r"^setting database_url \(DIAGNOSIS_DATABASE_URL\): there is no home"):
        load_settings()
    assert load_settings(database_url="sqlite+aiosqlite://").database_url.get_secret_value() == "sqlite+aiosqlite://"
