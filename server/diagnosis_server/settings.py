"""The server's settings: environment variables (prefix ``DIAGNOSIS_``) over an optional config file.

Precedence, strongest first: values given in code (command-line flags), environment variables, the
config file named by ``DIAGNOSIS_CONFIG_FILE`` (JSON, or TOML for a ``.toml`` file; keys are the field
names below; read by pydantic-settings' own JSON and TOML sources), the defaults. ``load_settings`` turns
every problem into one ``SettingsError`` line that names the setting, and the config file when the bad
value came from it.
"""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    JsonConfigSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)
from pydantic_settings.sources.types import Traversable

from diagnosis_server.tools.scenario import ScenarioError, all_scenarios, default_scenario_name

ENV_PREFIX = "DIAGNOSIS_"
CONFIG_FILE_ENV = "DIAGNOSIS_CONFIG_FILE"
DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_METRICS_ADDRESS = "127.0.0.1:9464"
TENANT_PATTERN = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
LOG_LEVELS = ("debug", "info", "warning", "error")
SQLITE_URL_PREFIX = "sqlite+aiosqlite:///"


class SettingsError(ValueError):
    """A setting is missing, malformed or inconsistent; the message is one line naming it."""


def env_name(field: str) -> str:
    return f"{ENV_PREFIX}{field.upper()}"


def split_host_port(address: str) -> tuple[str, int]:
    """``"127.0.0.1:50051"``, ``"[::1]:0"``, ``"localhost:9464"`` -> (host, port); ValueError otherwise."""
    host, sep, port_text = address.rpartition(":")
    if not sep or not port_text.isdigit():
        raise ValueError(f"{address!r} is not HOST:PORT")
    port = int(port_text)
    if port > 65535:
        raise ValueError(f"{address!r}: port {port} is out of range")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        ipaddress.IPv6Address(host)  # a bracketed host must be an IPv6 literal
    if not host:
        raise ValueError(f"{address!r} has no host (use 0.0.0.0 or [::] to mean every interface)")
    return host, port


def is_loopback_host(host: str) -> bool:
    """127.0.0.0/8, ::1 and ``localhost`` only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_token_lines(lines: list[str], *, where: str) -> list[tuple[str, str]]:
    """``tenant:token`` entries (blank entries and ``#`` comments skipped) -> (tenant, token) pairs."""
    pairs: list[tuple[str, str]] = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        tenant, sep, token = line.partition(":")
        tenant, token = tenant.strip(), token.strip()
        # Never echo the entry: it holds a secret.
        if not sep or not token:
            raise SettingsError(f"{where}: entry {number} is not TENANT:TOKEN")
        if not TENANT_PATTERN.fullmatch(tenant):
            raise SettingsError(f"{where}: entry {number}: tenant must match {TENANT_PATTERN.pattern}")
        if any(ch.isspace() for ch in token):
            raise SettingsError(f"{where}: entry {number}: a token cannot contain whitespace")
        pairs.append((tenant, token))
    return pairs


def default_database_path() -> Path:
    """Where the default SQLite store lives, whatever the working directory: ``$XDG_DATA_HOME/diagnosis-graph/
    runs.db``, or ``~/.local/share/diagnosis-graph/runs.db`` when XDG_DATA_HOME is unset or relative (as the
    XDG base directory spec says). The store creates the folder on first use."""
    data_home = Path(os.environ.get("XDG_DATA_HOME", ""))
    if not data_home.is_absolute():
        try:
            data_home = Path.home() / ".local" / "share"
        except RuntimeError:  # no HOME and no home folder in the user database
            raise SettingsError(
                f"setting database_url ({env_name('database_url')}): there is no home folder for the default "
                "database: set XDG_DATA_HOME or the setting"
            ) from None
    return data_home / "diagnosis-graph" / "runs.db"


def default_database_url() -> str:
    return f"{SQLITE_URL_PREFIX}{default_database_path()}"


def config_file() -> Path | None:
    """The config file named by DIAGNOSIS_CONFIG_FILE; None when it is unset."""
    name = os.environ.get(CONFIG_FILE_ENV, "")
    return Path(name).expanduser() if name else None


def _require_object(data: Any, path: Path | Traversable) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise SettingsError(f"{CONFIG_FILE_ENV}: {str(path)!r} must hold an object of settings")
    return data


class _JsonConfigFile(JsonConfigSettingsSource):
    def _read_file(self, file_path: Path | Traversable) -> dict[str, Any]:
        return _require_object(super()._read_file(file_path), file_path)


class _TomlConfigFile(TomlConfigSettingsSource):
    def _read_file(self, file_path: Path | Traversable) -> dict[str, Any]:
        return _require_object(super()._read_file(file_path), file_path)


def config_file_source(settings_cls: type[BaseSettings]) -> InitSettingsSource | None:
    """pydantic-settings' own source for the config file: TOML for ``*.toml``, JSON otherwise (keys are the
    field names). A file that cannot be read or parsed is one SettingsError line naming it."""
    path = config_file()
    if path is None:
        return None
    toml = path.suffix.lower() == ".toml"
    try:
        with path.open("rb"):  # pydantic-settings skips a missing file: one that is named must be there
            pass
        return _TomlConfigFile(settings_cls, toml_file=path) if toml else _JsonConfigFile(settings_cls, json_file=path)
    except SettingsError:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SettingsError(f"{CONFIG_FILE_ENV}: cannot read {str(path)!r}: {reason}") from exc
    except ValueError as exc:  # json.JSONDecodeError and tomllib.TOMLDecodeError
        kind = "TOML" if toml else "JSON"
        raise SettingsError(f"{CONFIG_FILE_ENV}: {str(path)!r} is not valid {kind}: {exc}") from exc


class Settings(BaseSettings):
    """Everything ``diagnosis serve`` reads. Secrets are SecretStr: they never show in a repr or a log."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", frozen=True)

    # HOST:PORT to serve gRPC on; without auth tokens only a loopback host is allowed.
    address: str = DEFAULT_ADDRESS
    # A SQLite file in the user's data folder (default_database_path), or postgresql+asyncpg://...
    database_url: SecretStr = Field(default_factory=lambda: SecretStr(default_database_url()))
    agent_provider: str = "heuristic"
    # Comma-separated TENANT:TOKEN pairs; and/or a file of TENANT:TOKEN lines (# comments).
    auth_tokens: SecretStr | None = None
    auth_tokens_file: Path | None = None
    tls_cert_file: Path | None = None
    tls_key_file: Path | None = None
    # HOST:PORT of the Prometheus endpoint; empty disables it.
    metrics_address: str = DEFAULT_METRICS_ADDRESS
    max_message_bytes: int = Field(default=4 * 1024 * 1024, ge=1024, le=1024 * 1024 * 1024)
    max_question_chars: int = Field(default=4000, ge=1, le=1_000_000)
    max_concurrent_runs: int = Field(default=32, ge=1, le=100_000)
    # CheckEvidence calls one tenant may have in progress at once (each is CPU; beyond: RESOURCE_EXHAUSTED).
    max_concurrent_checks_per_tenant: int = Field(default=2, ge=1, le=1000)
    shutdown_grace_s: float = Field(default=10.0, ge=0.0, le=3600.0)
    # The scenario a request without context.scenario runs on.
    default_scenario: str = Field(default_factory=default_scenario_name)
    # The environments file (TOML: each environment's Prometheus, Loki, Kubernetes, MCP servers).
    environments_file: Path | None = None
    # A directory of the user's scenario packs, added to the bundled ones.
    scenarios_dir: Path | None = None
    # A prefix of this instance's name in the store (runs it owns): each process adds a random suffix
    # of its own, so two replicas given one id never take each other's runs for their own. Empty: a
    # random id each start.
    instance_id: str = Field(default="", max_length=48, pattern=r"^[A-Za-z0-9._:-]*$")
    # A RUNNING run whose heartbeat is older than this is an orphan: marked FAILED (INTERRUPTED).
    orphan_stale_after_s: float = Field(default=30.0, ge=1.0, le=86_400.0)
    # How often the store's probe write runs (gRPC health follows it); 0 disables the probe.
    store_probe_interval_s: float = Field(default=5.0, ge=0.0, le=3600.0)
    # The first technical retry's wait after a transient agent failure (timeout, connection error, 429/5xx):
    # doubled per retry, jittered, at least the endpoint's Retry-After, at most the node's timeout.
    retry_backoff_s: float = Field(default=0.5, ge=0.0, le=60.0)
    # Independent tool calls of one Executor step run concurrently: at most this many at once in a run,
    # and at most max_concurrent_calls_per_source of them on one source (a Prometheus, a cluster, an MCP server).
    max_concurrent_tool_calls: int = Field(default=8, ge=1, le=256)
    max_concurrent_calls_per_source: int = Field(default=4, ge=1, le=256)
    # How long a run's final write is retried while the store fails.
    store_retry_s: float = Field(default=60.0, ge=0.0, le=3600.0)
    log_level: str = "info"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        file_settings = config_file_source(settings_cls)
        return (init_settings, env_settings) + ((file_settings,) if file_settings is not None else ())

    @field_validator("address")
    @classmethod
    def _check_address(cls, value: str) -> str:
        split_host_port(value)
        return value

    @field_validator("metrics_address")
    @classmethod
    def _check_metrics_address(cls, value: str) -> str:
        if value.strip():
            split_host_port(value.strip())
        return value.strip()

    @field_validator("agent_provider")
    @classmethod
    def _check_provider(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,63}", value):
            raise ValueError("must be a provider name such as 'heuristic' or 'openai'")
        return value

    @model_validator(mode="after")
    def _check_scenario(self) -> Settings:
        where = f"setting default_scenario ({env_name('default_scenario')})"
        try:
            known = all_scenarios(self.scenarios_dir)
        except ScenarioError as exc:
            raise ValueError(f"setting scenarios_dir ({env_name('scenarios_dir')}): {exc}") from exc
        if self.default_scenario not in known:
            raise ValueError(f"{where}: unknown scenario {self.default_scenario!r} (known: {', '.join(known)})")
        return self

    @field_validator("log_level")
    @classmethod
    def _check_log_level(cls, value: str) -> str:
        if value.lower() not in LOG_LEVELS:
            raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}")
        return value.lower()

    @model_validator(mode="after")
    def _check_consistency(self) -> Settings:
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            raise ValueError(
                f"settings tls_cert_file and tls_key_file ({env_name('tls_cert_file')}, {env_name('tls_key_file')}) "
                "go together: set both or neither"
            )
        self.auth_token_pairs()
        return self

    def auth_token_pairs(self) -> list[tuple[str, str]]:
        """(tenant, token) from auth_tokens and auth_tokens_file; SettingsError names the bad entry."""
        pairs: list[tuple[str, str]] = []
        if self.auth_tokens is not None:
            entries = self.auth_tokens.get_secret_value().split(",")
            pairs += parse_token_lines(entries, where=env_name("auth_tokens"))
        if self.auth_tokens_file is not None:
            where = env_name("auth_tokens_file")
            try:
                text = self.auth_tokens_file.expanduser().read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                raise SettingsError(f"{where}: cannot read {str(self.auth_tokens_file)!r}: {reason}") from exc
            pairs += parse_token_lines(text.splitlines(), where=where)
        tenants_by_token: dict[str, str] = {}
        for tenant, token in pairs:
            if tenants_by_token.setdefault(token, tenant) != tenant:
                raise SettingsError(f"{env_name('auth_tokens')}: one token is given to two tenants")
        return pairs


def _origin(field: str, given: dict[str, Any]) -> str:
    """Where a setting's value came from, for a message: its environment variable, or the config file."""
    in_environment = env_name(field).lower() in (name.lower() for name in os.environ)
    if field not in given and not in_environment:
        source = config_file_source(Settings)
        if source is not None and field in source():
            return f"in {CONFIG_FILE_ENV} {str(config_file())!r}"
    return env_name(field)


def load_settings(**overrides: Any) -> Settings:
    """Settings from overrides, the environment and the config file; SettingsError (one line) otherwise."""
    given = {key: value for key, value in overrides.items() if value is not None}
    try:
        return Settings(**given)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else ""
        message = str(first["msg"]).removeprefix("Value error, ")
        more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
        if field:
            raise SettingsError(f"setting {field} ({_origin(field, given)}): {message}{more}") from None
        raise SettingsError(f"{message}{more}") from None
