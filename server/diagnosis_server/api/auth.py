"""Bearer tokens -> tenants.

``authorization: Bearer <token>`` metadata names the caller's tenant. The presented token is compared
with every configured token by ``hmac.compare_digest``, with no early exit, so the time taken says
nothing about which token (or how much of one) matched. With no token configured every caller is the
tenant ``default`` (the server then refuses to bind anything but loopback). ``authenticate`` is the layer
of every call that names its tenant (UNAUTHENTICATED otherwise).
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

from diagnosis_server.api.calls import CallInfo, Context
from diagnosis_server.api.errors import unauthenticated

DEFAULT_TENANT = "default"
AUTHORIZATION = "authorization"


class TokenAuthenticator:
    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        self._entries: tuple[tuple[bytes, str], ...] = tuple((token.encode(), tenant) for tenant, token in pairs)

    @property
    def enabled(self) -> bool:
        return bool(self._entries)

    def tenant_for(self, metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
        """The caller's tenant, or ApiError(UNAUTHENTICATED). Never says which part of a token was wrong."""
        if not self._entries:
            return DEFAULT_TENANT
        presented = _bearer_token(metadata)
        if presented is None:
            raise unauthenticated("missing bearer token: send metadata 'authorization: Bearer <token>'")
        matched: str | None = None
        for token, tenant in self._entries:
            if hmac.compare_digest(presented, token) and matched is None:
                matched = tenant
        if matched is None:
            raise unauthenticated("invalid bearer token")
        return matched

    def authenticate(self, request: Any, context: Context, call: CallInfo) -> AbstractAsyncContextManager[None]:
        """The layer of every call that binds the caller's tenant, before the request is even looked at."""
        call.bind_tenant(self.tenant_for(context.invocation_metadata()))
        return nullcontext()


def _bearer_token(metadata: Iterable[tuple[str, str | bytes]] | None) -> bytes | None:
    """The one bearer token of the call; two ``authorization`` entries are ambiguous: UNAUTHENTICATED."""
    found: list[str | bytes] = [value for key, value in metadata or () if key.lower() == AUTHORIZATION]
    if len(found) > 1:
        raise unauthenticated("more than one authorization header: send exactly one")
    if not found:
        return None
    value = found[0]
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    scheme, _, token = text.strip().partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip().encode()
    return None
