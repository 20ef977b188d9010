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

An environment's keys besides ``default`` and ``alert_labels`` are the registered sources' (``kinds.SOURCES``),
each section's model in its source's module; the file's model is built from that list. Every section is
optional. Secrets never appear in the file's values that are shown: a token is read from ``bearer_token_file``
or the variable named by ``bearer_token_env``; an MCP server's ``env`` values may be ``{ file = "..." }`` or
``{ env = "NAME" }``. Every problem is one ``EnvironmentsError`` naming the file, the environment and the key,
and never a value.
"""

from __future__ import annotations

import functools
import os
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import BaseModel, Field, ValidationError, create_model, model_validator

from diagnosis_server.sources import kinds as registered
from diagnosis_server.sources.sections import EnvironmentsError as EnvironmentsError
from diagnosis_server.sources.sections import SecretFrom as SecretFrom
from diagnosis_server.sources.sections import Strict
from diagnosis_server.sources.source import SourceKind

NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,62}$"


class EnvironmentConfig(Strict):
    """One environment's table: ``default``, a key a registered source, ``alert_labels`` (the alert labels that
    say an alert is of this environment, all must match: ``{ cluster = "prod" }``). The model with those fields
    is built from the sources' list (``environment_model``); ``sections(kind)`` are a source's sections."""

    kinds: ClassVar[tuple[SourceKind[Any], ...]] = ()

    if TYPE_CHECKING:
        default: bool
        alert_labels: dict[str, str]

        def __getattr__(self, key: str) -> Any: ...

    def sections(self, kind: SourceKind[Any]) -> list[tuple[str, BaseModel]]:
        """The kind's sections in this environment, each with the key a problem is reported under."""
        value = getattr(self, kind.key)
        if kind.many:
            return [(f"{kind.key}[{index}]", section) for index, section in enumerate(value)]
        return [] if value is None else [(kind.key, value)]

    @model_validator(mode="after")
    def _sections_agree(self) -> EnvironmentConfig:
        for kind in self.kinds:
            if kind.check is not None:
                value = getattr(self, kind.key)
                problem = kind.check(value if kind.many else [value] if value is not None else [])
                if problem is not None:
                    raise ValueError(problem)
        return self


@functools.cache
def environment_model(kinds: tuple[SourceKind[Any], ...]) -> type[EnvironmentConfig]:
    """The model of an environment's table with these sources' keys, in their order (a key taken twice, or one
    of the table's own, is a ValueError: a registration mistake, never a file's)."""
    fields: dict[str, Any] = {"default": (bool, False)}
    for kind in kinds:
        if kind.key in fields or kind.key == "alert_labels":
            raise ValueError(f"two sources, or a source and the environment, take the key {kind.key!r}")
        section: Any = kind.section
        fields[kind.key] = (list[section], Field(default_factory=list)) if kind.many else (section | None, None)
    fields["alert_labels"] = (dict[str, str], Field(default_factory=dict))
    model = create_model("EnvironmentConfig", __base__=EnvironmentConfig, **fields)
    model.kinds = kinds
    return model


class EnvironmentsFile(Strict):
    """The whole file: environments by name (``environments_file`` builds it with the sources' keys)."""

    if TYPE_CHECKING:
        environments: dict[str, EnvironmentConfig]


@functools.cache
def environments_file(kinds: tuple[SourceKind[Any], ...]) -> type[EnvironmentsFile]:
    """The model of the whole file with these sources' keys."""
    environment: Any = environment_model(kinds)
    name: Any = Annotated[str, Field(pattern=NAME_PATTERN)]
    return create_model("EnvironmentsFile", __base__=EnvironmentsFile, environments=(dict[name, environment], ...))


class Environments:
    """The parsed file: environments by name (file order) and the default, if any."""

    def __init__(
        self, path: Path, environments: dict[str, EnvironmentConfig], sources: tuple[SourceKind[Any], ...]
    ) -> None:
        self.path = path
        self.environments = environments
        # The source kinds the file was read with (``kinds.SOURCES`` then), in their order.
        self.sources = sources

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
    sources = tuple(registered.SOURCES)
    try:
        parsed = environments_file(sources).model_validate(data)
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
    environments: dict[str, EnvironmentConfig] = dict(parsed.environments)
    defaults = [name for name, env in environments.items() if env.default]
    if len(defaults) > 1:
        raise EnvironmentsError(
            f"{shown}: environment {defaults[1]!r}: key default: at most one environment may be the default "
            f"(found {len(defaults)}: {', '.join(defaults)})"
        )
    return Environments(path, environments, sources)
