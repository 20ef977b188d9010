"""How a client reaches the service: target, TLS, token, deadlines, retries and message limits."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import grpc

DEFAULT_TARGET = "127.0.0.1:50051"
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024

Metadata = Sequence[tuple[str, str | bytes]]
"""Call metadata: ``(key, value)`` pairs; keys lower case, ``-bin`` keys carry bytes."""

ChannelOption = tuple[str, str | int]

# The unary RPCs: safe to retry on UNAVAILABLE (they do not start anything). Diagnose and WatchRun are
# streams; gRPC cannot retry a stream once it has delivered a message (watch_run resumes by itself).
RETRYABLE_METHODS: tuple[tuple[str, str], ...] = (
    ("diagnosis.v1.DiagnosisService", "GetRun"),
    ("diagnosis.v1.DiagnosisService", "ListRuns"),
    ("diagnosis.v1.DiagnosisService", "ListScenarios"),
    ("diagnosis.v1.GatekeeperService", "CheckEvidence"),
)


@dataclass(frozen=True, kw_only=True)
class TLSConfig:
    """Transport security. All ``None``: the system's root certificates and no client certificate."""

    root_certificates: bytes | None = None
    """PEM root certificates that sign the server's certificate."""
    private_key: bytes | None = field(default=None, repr=False)
    """PEM private key of the client certificate (mutual TLS)."""
    certificate_chain: bytes | None = None
    """PEM client certificate chain (mutual TLS)."""
    server_name_override: str | None = None
    """The name the server's certificate is checked against, when it differs from the target's host."""

    def __post_init__(self) -> None:
        if (self.private_key is None) != (self.certificate_chain is None):
            raise ValueError("tls: private_key and certificate_chain go together (mutual TLS needs both)")

    def credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            root_certificates=self.root_certificates,
            private_key=self.private_key,
            certificate_chain=self.certificate_chain,
        )


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """gRPC's own retries (service config) of the unary RPCs on the given status codes."""

    max_attempts: int = 4
    """Attempts in all, the first included: 2 to 5 (gRPC's upper bound)."""
    initial_backoff: float = 0.1
    max_backoff: float = 2.0
    backoff_multiplier: float = 2.0
    retryable_status_codes: tuple[grpc.StatusCode, ...] = (grpc.StatusCode.UNAVAILABLE,)

    def __post_init__(self) -> None:
        if not 2 <= self.max_attempts <= 5:
            raise ValueError(f"retry: max_attempts must be 2 to 5, got {self.max_attempts}")
        _check_backoff("retry", self.initial_backoff, self.max_backoff, self.backoff_multiplier)
        if not self.retryable_status_codes or grpc.StatusCode.OK in self.retryable_status_codes:
            raise ValueError("retry: retryable_status_codes must name at least one error code (not OK)")

    def service_config(self) -> str:
        """The gRPC service config (JSON) that applies this policy to the unary RPCs."""
        policy = {
            "maxAttempts": self.max_attempts,
            "initialBackoff": _duration(self.initial_backoff),
            "maxBackoff": _duration(self.max_backoff),
            "backoffMultiplier": self.backoff_multiplier,
            "retryableStatusCodes": [code.name for code in self.retryable_status_codes],
        }
        names = [{"service": service, "method": method} for service, method in RETRYABLE_METHODS]
        return json.dumps({"methodConfig": [{"name": names, "retryPolicy": policy}]}, separators=(",", ":"))


@dataclass(frozen=True, kw_only=True)
class ReconnectPolicy:
    """How ``watch_run`` resumes a stream that broke: attempts in a row without a new message, and backoff."""

    max_attempts: int = 5
    """Reconnects in a row that bring no new message before the error is raised; 0 never reconnects."""
    initial_backoff: float = 0.2
    max_backoff: float = 5.0
    backoff_multiplier: float = 2.0
    resume_status_codes: tuple[grpc.StatusCode, ...] = (grpc.StatusCode.UNAVAILABLE,)

    def __post_init__(self) -> None:
        if self.max_attempts < 0:
            raise ValueError(f"reconnect: max_attempts must be 0 or more, got {self.max_attempts}")
        _check_backoff("reconnect", self.initial_backoff, self.max_backoff, self.backoff_multiplier)

    def delay(self, attempt: int) -> float:
        """Seconds to wait before reconnect ``attempt`` (1-based): exponential, capped, with jitter."""
        ceiling = min(self.max_backoff, self.initial_backoff * self.backoff_multiplier ** max(attempt - 1, 0))
        return ceiling * random.uniform(0.5, 1.0)


_GRPC_SCHEMES = ("dns:", "unix:", "unix-abstract:", "ipv4:", "ipv6:", "vsock:")


def parse_target(text: str) -> tuple[str, bool | None]:
    """A target as gRPC takes it, and the TLS its URL scheme implies (None: no scheme said).

    ``http://HOST:PORT`` -> (``HOST:PORT``, False); ``https://HOST:PORT`` -> (``HOST:PORT``, True); gRPC's
    own schemes (``dns:``, ``unix:``, ...) and plain ``HOST:PORT`` pass unchanged. A URL with a path,
    query or credentials is a ValueError saying what to give instead.
    """
    target = text.strip()
    lowered = target.lower()
    for scheme, tls in (("http://", False), ("https://", True)):
        if lowered.startswith(scheme):
            rest = target[len(scheme) :].rstrip("/")
            if not rest or "/" in rest or "?" in rest or "#" in rest or "@" in rest:
                raise ValueError(
                    f"target: {text!r} is not a server address: give HOST:PORT (or {scheme}HOST:PORT), "
                    "without a path, query or credentials"
                )
            if _missing_port(rest):
                rest += ":443" if tls else ":80"
            return rest, tls
    if "://" in target and not lowered.startswith(_GRPC_SCHEMES):
        raise ValueError(f"target: {text!r}: unknown scheme; give HOST:PORT, http://HOST:PORT or https://HOST:PORT")
    return target, None


def _missing_port(target: str) -> bool:
    """Whether a plain host target names no port (gRPC then dials 443)."""
    if target.lower().startswith(_GRPC_SCHEMES):
        return False
    if target.startswith("["):
        return "]:" not in target
    host, sep, port = target.rpartition(":")
    if host.count(":"):  # a bare IPv6 literal
        return True
    return not sep or not port.isdigit()


@dataclass(frozen=True, kw_only=True)
class ConnectionConfig:
    """Everything a client needs to reach the service. Immutable; share it between clients."""

    target: str = DEFAULT_TARGET
    """``host:port`` (or any gRPC target, e.g. ``unix:/path``)."""
    tls: bool | TLSConfig = False
    """``True`` for TLS with the system's roots; a :class:`TLSConfig` for more; ``False`` for plaintext."""
    token: str | None = field(default=None, repr=False)
    """Sent on every call as ``authorization: Bearer <token>``."""
    default_timeout: float | None = None
    """Deadline in seconds of a call (a whole stream, reconnects included) given no ``timeout``."""
    retry: RetryPolicy | None = field(default_factory=RetryPolicy)
    """Retries of the unary RPCs; ``None`` turns gRPC retries off."""
    reconnect: ReconnectPolicy = field(default_factory=ReconnectPolicy)
    """How ``watch_run`` resumes a broken stream."""
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    """The largest message sent or received."""
    metadata: tuple[tuple[str, str], ...] = ()
    """Extra metadata sent on every call."""
    channel_options: tuple[ChannelOption, ...] = ()
    """Extra gRPC channel arguments; they win over the ones derived from this config."""

    def __post_init__(self) -> None:
        if not isinstance(self.target, str) or not self.target.strip():
            raise ValueError("target: must be a non-empty host:port")
        target, scheme_tls = parse_target(self.target)
        if scheme_tls is False and self.tls:
            raise ValueError(f"target: {self.target!r} says http:// (plaintext) but TLS is on; use https://")
        if scheme_tls is True and not self.tls:
            object.__setattr__(self, "tls", True)
        object.__setattr__(self, "target", target)
        if not self.tls and _missing_port(target):
            raise ValueError(
                f"target: {self.target!r} has no port, so gRPC would dial port 443 (TLS's) in plaintext; "
                f"give HOST:PORT, e.g. {target}:50051"
            )
        if self.token is not None and not _is_token(self.token):
            raise ValueError("token: must be non-empty printable ASCII without spaces")
        if self.default_timeout is not None and not self.default_timeout > 0:
            raise ValueError(f"default_timeout: must be positive seconds or None, got {self.default_timeout}")
        if self.max_message_bytes <= 0:
            raise ValueError(f"max_message_bytes: must be positive, got {self.max_message_bytes}")
        for key, _ in self.metadata:
            if key.lower() != key or key.startswith("grpc-"):
                raise ValueError(f"metadata: key {key!r} must be lower case and not start with 'grpc-'")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, /, **overrides: object) -> ConnectionConfig:
        """A config from ``DIAGNOSIS_TARGET`` and ``DIAGNOSIS_TOKEN`` (unset or empty: defaults).

        ``overrides`` are keyword arguments of the constructor; they win over the environment.
        """
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        target = env.get("DIAGNOSIS_TARGET", "").strip()
        if target:
            values["target"] = target
        token = env.get("DIAGNOSIS_TOKEN", "").strip()
        if token:
            values["token"] = token
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]

    @property
    def tls_config(self) -> TLSConfig | None:
        if isinstance(self.tls, TLSConfig):
            return self.tls
        return TLSConfig() if self.tls else None

    def channel_arguments(self) -> list[ChannelOption]:
        """The gRPC channel arguments this config stands for."""
        options: dict[str, str | int] = {
            "grpc.max_send_message_length": self.max_message_bytes,
            "grpc.max_receive_message_length": self.max_message_bytes,
            "grpc.primary_user_agent": "diagnosis-graph-client",
        }
        if self.retry is None:
            options["grpc.enable_retries"] = 0
        else:
            options["grpc.enable_retries"] = 1
            options["grpc.service_config"] = self.retry.service_config()
        tls = self.tls_config
        if tls is not None and tls.server_name_override:
            options["grpc.ssl_target_name_override"] = tls.server_name_override
        options.update(dict(self.channel_options))
        return list(options.items())

    def call_metadata(self, extra: Metadata = ()) -> tuple[tuple[str, str | bytes], ...]:
        """This config's metadata, the bearer token, then ``extra`` (an ``authorization`` there wins)."""
        pairs: list[tuple[str, str | bytes]] = list(self.metadata)
        if self.token is not None and not any(key.lower() == "authorization" for key, _ in extra):
            pairs.append(("authorization", f"Bearer {self.token}"))
        pairs.extend(extra)
        return tuple(pairs)

    def timeout_for(self, timeout: float | None) -> float | None:
        """The deadline in seconds of one call: ``timeout`` if given, else the default."""
        if timeout is None:
            return self.default_timeout
        if not timeout > 0:
            raise ValueError(f"timeout: must be positive seconds, got {timeout}")
        return timeout


def _check_backoff(what: str, initial: float, maximum: float, multiplier: float) -> None:
    if not initial > 0 or not maximum >= initial:
        raise ValueError(f"{what}: backoffs must be positive with max_backoff >= initial_backoff")
    if not multiplier >= 1:
        raise ValueError(f"{what}: backoff_multiplier must be 1 or more, got {multiplier}")


def _duration(seconds: float) -> str:
    return f"{seconds:.9f}".rstrip("0").rstrip(".") + "s"


def _is_token(token: str) -> bool:
    return bool(token) and all(0x21 <= ord(ch) <= 0x7E for ch in token)
