"""What every source's section of the environments file shares: strict models, URLs, timeouts, secrets' places.

A source's own section model (``PrometheusConfig``, ``McpServerConfig``, ...) sits in the source's module and
builds on these; ``config.py`` joins the registered sections into the file's model.
"""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ENV_VAR_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DEFAULT_TIMEOUT_S = 10.0

Seconds = Annotated[float, Field(gt=0, le=600)]


class EnvironmentsError(ValueError):
    """The environments file cannot be used; the message names the file, the environment and the key."""


class Strict(BaseModel):
    """A section's model: strict types, no unknown key, frozen."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


def check_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http:// or https:// URL with a host")
    return value


def check_env_var(value: str | None) -> str | None:
    if value is not None and not ENV_VAR_PATTERN.fullmatch(value):
        raise ValueError("must be an environment variable name")
    return value


class SecretFrom(Strict):
    """A secret's place: a file (its content, without the trailing newline) or an environment variable."""

    file: str | None = None
    env: str | None = None

    _env = field_validator("env")(check_env_var)

    @model_validator(mode="after")
    def _one(self) -> SecretFrom:
        if (self.file is None) == (self.env is None):
            raise ValueError("give exactly one of file or env")
        return self


class TokenAuth(Strict):
    """A section that may name a bearer token: ``bearer_token_file`` or ``bearer_token_env``, not both."""

    bearer_token_file: str | None = None
    bearer_token_env: str | None = None

    _env = field_validator("bearer_token_env")(check_env_var)

    @model_validator(mode="after")
    def _at_most_one_token(self) -> TokenAuth:
        if self.bearer_token_file is not None and self.bearer_token_env is not None:
            raise ValueError("give bearer_token_file or bearer_token_env, not both")
        return self

    def token_ref(self) -> SecretFrom | None:
        if self.bearer_token_file is not None:
            return SecretFrom(file=self.bearer_token_file)
        if self.bearer_token_env is not None:
            return SecretFrom(env=self.bearer_token_env)
        return None

    def token_key(self, section: str) -> str:
        """The key a token problem is reported under: ``prometheus.bearer_token_file``, ``mcp[0].bearer_token_env``."""
        return f"{section}.bearer_token_file" if self.bearer_token_file else f"{section}.bearer_token_env"
