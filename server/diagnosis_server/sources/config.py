"""The environments file: which sources each environment has (a TOML file; pydantic models, strict).

```toml
[environments.prod]
default = true
prometheus = { url = "http://127.0.0.1:9090", bearer_token_file = "/run/secrets/prom" }
loki = { url = "http://127.0.0.1:3100", tenant = "team-a" }
kubernetes = { kubeconfig = "/etc/diagnosis/kubeconfig", context = "prod", namespaces = ["shop"] }
[[environments.prod.mcp]]
name = "grafana"
command = ["mcp-grafana", "--stdio"]
tools = ["query_prometheus", "list_alerts"]
```

``alert_labels = { cluster = "prod" }`` in an environment's table sends the alerts carrying those labels to it.

Every section is optional. Secrets never appear in the file's values that are shown: a token is read from
``bearer_token_file`` or the variable named by ``bearer_token_env``; an MCP server's ``env`` values may be
``{ file = "..." }`` or ``{ env = "NAME" }``. Every problem is one ``EnvironmentsError`` naming the file, the
environment and the key, and never a value.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,62}$"
MCP_NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,62}$"
ENV_VAR_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DEFAULT_TIMEOUT_S = 10.0
DEFAULT_STARTUP_TIMEOUT_S = 30.0

Seconds = Annotated[float, Field(gt=0, le=600)]


class EnvironmentsError(ValueError):
    """The environments file cannot be used; the message names the file, the environment and the key."""


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


def _check_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http:// or https:// URL with a host")
    return value


def _check_env_var(value: str | None) -> str | None:
    if value is not None and not ENV_VAR_PATTERN.fullmatch(value):
        raise ValueError("must be an environment variable name")
    return value


class SecretFrom(_Strict):
    """A secret's place: a file (its content, without the trailing newline) or an environment variable."""

    file: str | None = None
    env: str | None = None

    _env = field_validator("env")(_check_env_var)

    @model_validator(mode="after")
    def _one(self) -> SecretFrom:
        if (self.file is None) == (self.env is None):
            raise ValueError("give exactly one of file or env")
        return self


class _TokenAuth(_Strict):
    bearer_token_file: str | None = None
    bearer_token_env: str | None = None

    _env = field_validator("bearer_token_env")(_check_env_var)

    @model_validator(mode="after")
    def _at_most_one_token(self) -> _TokenAuth:
        if self.bearer_token_file is not None and self.bearer_token_env is not None:
            raise ValueError("give bearer_token_file or bearer_token_env, not both")
        return self

    def token_ref(self) -> SecretFrom | None:
        if self.bearer_token_file is not None:
            return SecretFrom(file=self.bearer_token_file)
        if self.bearer_token_env is not None:
            return SecretFrom(env=self.bearer_token_env)
        return None


DEFAULT_ERROR_RATE_QUERY = (
    'sum(rate(http_requests_total{{service="{service}",code=~"5.."}}[5m]))'
    ' / sum(rate(http_requests_total{{service="{service}"}}[5m]))'
)
DEFAULT_LATENCY_QUERY = (
    'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{{service="{service}"}}[5m])))'
)


class PrometheusConfig(_TokenAuth):
    url: str
    timeout_s: Seconds = DEFAULT_TIMEOUT_S
    # The embedded default's queries for a service's error rate and p99 latency; ``{service}`` and
    # ``{namespace}`` are filled in (literal braces doubled, as in Python's str.format).
    error_rate_query: str = Field(default=DEFAULT_ERROR_RATE_QUERY, min_length=1, max_length=2000)
    latency_query: str = Field(default=DEFAULT_LATENCY_QUERY, min_length=1, max_length=2000)

    _url = field_validator("url")(_check_url)


class LokiConfig(_TokenAuth):
    url: str
    # Sent as X-Scope-OrgID (multi-tenant Loki).
    tenant: str | None = Field(default=None, min_length=1, max_length=256)
    timeout_s: Seconds = DEFAULT_TIMEOUT_S

    _url = field_validator("url")(_check_url)


class KubernetesConfig(_Strict):
    kubeconfig: str | None = None
    context: str | None = Field(default=None, min_length=1)
    in_cluster: bool = False
    # The namespaces the tools may read; None: any namespace (the context's namespace by default).
    namespaces: list[Annotated[str, Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]] | None = Field(
        default=None, min_length=1
    )
    timeout_s: Seconds = DEFAULT_TIMEOUT_S

    @model_validator(mode="after")
    def _one_way_in(self) -> KubernetesConfig:
        if self.in_cluster and (self.kubeconfig is not None or self.context is not None):
            raise ValueError("in_cluster = true takes no kubeconfig or context")
        return self


class McpServerConfig(_TokenAuth):
    name: Annotated[str, Field(pattern=MCP_NAME_PATTERN)]
    # stdio: the command and its arguments; or url: streamable HTTP.
    command: list[Annotated[str, Field(min_length=1)]] | None = Field(default=None, min_length=1)
    url: str | None = None
    # The allow-list; None: only the tools the server annotates readOnlyHint.
    tools: list[Annotated[str, Field(min_length=1, max_length=128)]] | None = None
    # Environment variables of a stdio server (on top of a minimal inherited set); every value is a secret.
    env: dict[str, str | SecretFrom] = Field(default_factory=dict)
    startup_timeout_s: Seconds = DEFAULT_STARTUP_TIMEOUT_S
    timeout_s: Seconds = DEFAULT_TIMEOUT_S

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return None if value is None else _check_url(value)

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: dict[str, str | SecretFrom]) -> dict[str, str | SecretFrom]:
        for name in value:
            if not ENV_VAR_PATTERN.fullmatch(name):
                raise ValueError("keys must be environment variable names")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of command (stdio) or url (streamable HTTP)")
        if self.command is not None and self.token_ref() is not None:
            raise ValueError("a bearer token is for url servers; give a stdio server its secrets in env")
        if self.url is not None and self.env:
            raise ValueError("env is for stdio servers (command)")
        return self


class EnvironmentConfig(_Strict):
    default: bool = False
    prometheus: PrometheusConfig | None = None
    loki: LokiConfig | None = None
    kubernetes: KubernetesConfig | None = None
    mcp: list[McpServerConfig] = Field(default_factory=list)
    # The alert labels that say an alert is of this environment (all must match): ``{ cluster = "prod" }``.
    alert_labels: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _unique_mcp_names(self) -> EnvironmentConfig:
        names = [server.name for server in self.mcp]
        duplicate = next((name for name in names if names.count(name) > 1), None)
        if duplicate is not None:
            raise ValueError(f"two mcp servers are named {duplicate!r}")
        return self


class EnvironmentsFile(_Strict):
    environments: dict[Annotated[str, Field(pattern=NAME_PATTERN)], EnvironmentConfig]


class Environments:
    """The parsed file: environments by name (file order) and the default, if any."""

    def __init__(self, path: Path, environments: dict[str, EnvironmentConfig]) -> None:
        self.path = path
        self.environments = environments

    @property
    def default(self) -> str | None:
        return next((name for name, env in self.environments.items() if env.default), None)

    def where(self, environment: str, key: str) -> str:
        return f"environments file {str(self.path)!r}: environment {environment!r}: key {key}"

    def secret(self, ref: SecretFrom, *, environment: str, key: str) -> str:
        """The secret's value; EnvironmentsError naming where it was to be read from (never the value)."""
        where = self.where(environment, key)
        if ref.env is not None:
            value = os.environ.get(ref.env)
            if not value:
                raise EnvironmentsError(f"{where}: environment variable {ref.env} is not set")
            return value
        assert ref.file is not None
        path = Path(ref.file).expanduser()
        if not path.is_absolute():
            path = self.path.parent / path
        try:
            value = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
            raise EnvironmentsError(f"{where}: cannot read {str(path)!r}: {reason}") from None
        if not value:
            raise EnvironmentsError(f"{where}: {str(path)!r} is empty")
        return value

    def resolve_path(self, value: str) -> Path:
        """A path of the file, relative to the file's folder when not absolute."""
        path = Path(value).expanduser()
        return path if path.is_absolute() else self.path.parent / path


def _key(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def load_environments(path: Path | str) -> Environments:
    """Read and check the environments file; EnvironmentsError (one line) on any problem."""
    path = Path(path).expanduser()
    shown = f"environments file {str(path)!r}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise EnvironmentsError(f"{shown}: cannot read it: {reason}") from None
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise EnvironmentsError(f"{shown}: not valid TOML: {exc}") from None
    try:
        parsed = EnvironmentsFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
        if len(loc) >= 2 and loc[0] == "environments":
            name = str(loc[1])
            key = _key(loc[2:]) if len(loc) > 2 else "(the environment's name)"
            if first["type"] == "string_pattern_mismatch" and len(loc) == 3 and loc[2] == "[key]":
                key = "(the environment's name)"
            raise EnvironmentsError(f"{shown}: environment {name!r}: key {key}: {message}{more}") from None
        raise EnvironmentsError(f"{shown}: key {_key(loc)}: {message}{more}") from None
    environments = dict(parsed.environments)
    defaults = [name for name, env in environments.items() if env.default]
    if len(defaults) > 1:
        raise EnvironmentsError(
            f"{shown}: environment {defaults[1]!r}: key default: at most one environment may be the default "
            f"(found {len(defaults)}: {', '.join(defaults)})"
        )
    return Environments(path, environments)
