"""Values a statement says in words that its evidence states otherwise: a share of a whole ("most"), the image that
failed its pull, the time a certificate expired (each a contradiction, R-V-4; each fails closed: no such value in the
evidence, nothing said)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from diagnosis_server.text.normalize import normalize
from diagnosis_server.text.quotes import QUOTED

# Words that say which share of a whole: more than half, or less.
_MOST = re.compile(r"\b(?:most|the (?:vast )?majority|(?:nearly|almost|virtually) (?:all|every)|the bulk)\b")
_FEW = re.compile(r"\b(?:a minority|a few|few|a handful|a small (?:share|fraction|part))\b")
# A bound field that holds a share: its name says ratio, rate, fraction, share or percent.
_SHARE_FIELD = re.compile(
    r"^([\w.-]*(?:ratio|rate|fraction|share|percent|pct)[\w.-]*): (-?\d+(?:\.\d+)?)\s?(%?)$", re.I
)


def _share_conflicts(statement: str, fields: Sequence[str]) -> list[str]:
    """ "most requests failed" where every share the claim bound is under a half ("error_ratio: 0.25"), or "a
    minority" where every one is over it: the evidence states another share of the same whole."""
    text = QUOTED.sub(" ", normalize(statement))
    most, few = _MOST.search(text), _FEW.search(text)
    if most is None and few is None:
        return []
    shares: list[tuple[str, float]] = []
    for field in fields:
        match = _SHARE_FIELD.match(field.strip())
        if match is None:
            continue
        value = float(match.group(2))
        if match.group(3) or "percent" in match.group(1).lower() or "pct" in match.group(1).lower() or value > 1:
            value /= 100
        if 0 <= value <= 1:
            shares.append((field.strip(), value))
    if not shares:
        return []
    if most is not None and all(v < 0.5 for _, v in shares):
        return [f"{most.group(0)} (evidence: {', '.join(f for f, _ in shares)})"]
    if few is not None and all(v > 0.5 for _, v in shares):
        return [f"{few.group(0)} (evidence: {', '.join(f for f, _ in shares)})"]
    return []


# An image reference with a registry path ("ghcr.io/acme/app:v2", "acme/app:1.4"), and the kubelet's and
# registries' words for an image that cannot be pulled, naming it.
_IMAGE_REF = re.compile(
    r"(?<![\w./:-])((?:[a-z0-9][a-z0-9.-]*(?::\d+)?/)+[a-z0-9._-]+(?::[\w][\w.-]*|@sha256:[0-9a-f]{6,64}))"
)
_PULL_SAID = re.compile(r"\bnot found\b|\bpull|manifest unknown|does not exist|no such image", re.IGNORECASE)
_PULL_FAILED = re.compile(
    r"(?:[Ff]ailed to pull image|[Pp]ulling image|[Bb]ack-off pulling image|manifest for|image)\s+\\?\"?"
    r"((?:[a-z0-9][a-z0-9.-]*(?::\d+)?/)+[a-z0-9._-]+(?::[\w][\w.-]*|@sha256:[0-9a-f]{6,64}))"
)


def _other_image(statement: str, raw: Sequence[str]) -> list[str]:
    """An image a statement says cannot be pulled ("ghcr.io/acme/app:v2.8.0 is not found") where every pull failure
    its evidence writes names another image (the init container's ``app-migrate:v2.8.0``): the evidence states
    which image failed, and it is not this one."""
    if _PULL_SAID.search(statement) is None:
        return []
    claimed = {m.group(1) for m in _IMAGE_REF.finditer(statement)}
    if not claimed:
        return []
    failing = {m.group(1) for text in raw if _PULL_SAID.search(text) is not None for m in _PULL_FAILED.finditer(text)}
    if not failing or claimed & failing:
        return []
    return [f"{sorted(claimed)[0]} (evidence: the image that failed is {sorted(failing)[0]})"]


_RFC3339 = r"(\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)"
# When a statement says a certificate expired, and when its evidence says it did: Go's x509 error ("current time
# T1 is after T2": T2 is the certificate's NotAfter), or a NotAfter / "expired at" / "valid until" field.
_EXPIRED_SAID = re.compile(r"\bexpire[sd]? (?:at|on) " + _RFC3339, re.IGNORECASE)
_EXPIRY_WRITTEN = re.compile(
    r"(?:current time \S+ is after|not ?after[\"=: ]+|expire[sd]? (?:at|on)|valid until[=: ]+)\s*" + _RFC3339,
    re.IGNORECASE,
)


def _moment(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.replace(" ", "T").replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _other_expiry(statement: str, raw: Sequence[str]) -> list[str]:
    """A time a statement says a certificate expired at where its evidence writes the certificate's expiry as
    another time (the x509 error's NotAfter): a moment of another event (a renewal that failed) is not it."""
    said = _EXPIRED_SAID.search(statement)
    claimed = _moment(said.group(1)) if said is not None else None
    if claimed is None:
        return []
    written = [(m.group(1), _moment(m.group(1))) for text in raw for m in _EXPIRY_WRITTEN.finditer(text)]
    expiries = [(t, moment) for t, moment in written if moment is not None]
    if not expiries or any(abs((moment - claimed).total_seconds()) < 60 for _, moment in expiries):
        return []
    return [f"expired at {said.group(1) if said else ''} (evidence: it expired at {expiries[0][0]})"]


def restated_values(statement: str, raw: Sequence[str], fields: Sequence[str]) -> list[str]:
    """Every value of these kinds the statement says that its bound texts (``raw``) and fields state otherwise."""
    return [*_share_conflicts(statement, fields), *_other_image(statement, raw), *_other_expiry(statement, raw)]
