"""Whether a tool value has the shape its source allows: only such a value is written into prose (R-A-1).

Each check is the grammar of the value's real source: Kubernetes' apimachinery validation (names, label keys and
values, ConfigMap and Secret keys, quantities, ports, the API's enums), the OCI distribution reference grammar for an
image, one bounded token for a version. A value that fails its shape may still be quoted, as found, with its
pointer; an analyzer writes its sentence without it.
"""

from __future__ import annotations

import re
from typing import TypeGuard

# --------------------------------------------------------------------------- names (apimachinery validation)
_DNS_LABEL = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*")
# A label value, and a qualified name's name part: at most 63, alphanumeric at the ends, ``-_.`` inside.
_QUALIFIED_PART = re.compile(r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_DATA_KEY = re.compile(r"[-._a-zA-Z0-9]+")
_REASON = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,127}")
_KIND = re.compile(r"[A-Z][A-Za-z0-9]{0,62}")
# A name in another system's labels (a Prometheus job or instance, a Loki stream label): one token.
_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_.:/@-]{0,251}[A-Za-z0-9])?")
SUBDOMAIN_MAX = 253


def is_object_name(value: object) -> TypeGuard[str]:
    """A Kubernetes object's name: a DNS-1123 subdomain (at most 253 characters)."""
    return isinstance(value, str) and len(value) <= SUBDOMAIN_MAX and _DNS_SUBDOMAIN.fullmatch(value) is not None


def is_host_name(value: object) -> TypeGuard[str]:
    """An Ingress rule's host: a DNS-1123 subdomain, or one under a leading wildcard label (``*.example.com``)."""
    if not isinstance(value, str) or len(value) > SUBDOMAIN_MAX:
        return False
    return is_object_name(value[2:] if value.startswith("*.") else value)


def is_container_name(value: object) -> TypeGuard[str]:
    """A container's (or namespace's) name: a DNS-1123 label (at most 63 characters)."""
    return isinstance(value, str) and _DNS_LABEL.fullmatch(value) is not None


def is_label_key(value: object) -> TypeGuard[str]:
    """A label key (or a resource's or a taint's key): a qualified name, ``[prefix/]name``, the prefix a DNS-1123
    subdomain."""
    if not isinstance(value, str):
        return False
    prefix, slash, name = value.rpartition("/")
    if slash and not is_object_name(prefix):
        return False
    return _QUALIFIED_PART.fullmatch(name) is not None


def is_label_value(value: object, *, empty: bool = False) -> TypeGuard[str]:
    """A Kubernetes label value: at most 63 characters of ``A-Za-z0-9-_.``, alphanumeric at the ends; the empty
    value only when ``empty`` (a selector may ask for it; a name is never empty)."""
    if not isinstance(value, str):
        return False
    return (empty and value == "") or _QUALIFIED_PART.fullmatch(value) is not None


def is_data_key(value: object) -> TypeGuard[str]:
    """A ConfigMap's or Secret's data key: ``[-._a-zA-Z0-9]+``, at most 253, neither ``.`` nor starting ``..``."""
    return (
        isinstance(value, str)
        and len(value) <= SUBDOMAIN_MAX
        and _DATA_KEY.fullmatch(value) is not None
        and value != "."
        and not value.startswith("..")
    )


def is_reason(value: object) -> TypeGuard[str]:
    """A reason as Kubernetes writes one: one word (``OOMKilled``, ``FailedScheduling``)."""
    return isinstance(value, str) and _REASON.fullmatch(value) is not None


def is_kind(value: object) -> TypeGuard[str]:
    """An object's kind: one CamelCase word (``Pod``, ``PersistentVolumeClaim``), at most 63."""
    return isinstance(value, str) and _KIND.fullmatch(value) is not None


def is_token_name(value: object) -> TypeGuard[str]:
    """A name of another system's labels (a Prometheus job or instance, a Loki label): one token, no spaces."""
    return isinstance(value, str) and _TOKEN.fullmatch(value) is not None


# --------------------------------------------------------------------------- quantities and ports
# apimachinery's resource.Quantity: <signedNumber><suffix>, a suffix binary (Ki..Ei), decimal (m, k, M..E) or
# an exponent (e3, E-2). Bounded: no quantity a cluster writes is longer.
_QUANTITY = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[KMGTPE]i|[eE][+-]?\d+|[mkMGTPE])?")
QUANTITY_MAX = 64
# IANA_SVC_NAME (a named port): at most 15 of lowercase alphanumerics and '-', one letter at least, no '-' at an
# end nor two together.
_PORT_NAME = re.compile(r"(?=[-a-z0-9]{1,15}\Z)(?=.*[a-z])[a-z0-9]+(?:-[a-z0-9]+)*")
PORT_MAX = 65535


def _integer(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def is_quantity(value: object) -> bool:
    """A resource quantity (``512Mi``, ``1.5Gi``, ``250m``, ``2``, ``1e3``), as text or a JSON integer."""
    if _integer(value):
        return True
    return isinstance(value, str) and len(value) <= QUANTITY_MAX and _QUANTITY.fullmatch(value) is not None


def is_port(value: object) -> bool:
    """A port: a number 1-65535 (a JSON integer or its digits) or a port's name (IANA_SVC_NAME)."""
    if _integer(value):
        return 1 <= value <= PORT_MAX
    if not isinstance(value, str):
        return False
    if value.isascii() and value.isdigit():
        return len(value) <= len(str(PORT_MAX)) and 1 <= int(value) <= PORT_MAX
    return _PORT_NAME.fullmatch(value) is not None


# --------------------------------------------------------------------------- the API's enums
POD_PHASES = frozenset({"Pending", "Running", "Succeeded", "Failed", "Unknown"})
CLAIM_PHASES = frozenset({"Pending", "Bound", "Lost"})
TAINT_EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})
CONDITION_STATUSES = frozenset({"True", "False", "Unknown"})


def is_pod_phase(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and value in POD_PHASES


def is_claim_phase(value: object) -> TypeGuard[str]:
    """A PersistentVolumeClaim's ``status.phase``."""
    return isinstance(value, str) and value in CLAIM_PHASES


def is_taint_effect(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and value in TAINT_EFFECTS


def is_condition_status(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and value in CONDITION_STATUSES


# --------------------------------------------------------------------------- images, versions, times, paths
# The distribution reference grammar (github.com/distribution/reference): [domain[:port]/]path[:tag][@digest].
_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_NAME = rf"(?:{_DOMAIN}/)?{_PATH_PART}(?:/{_PATH_PART})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_IMAGE = re.compile(rf"(?P<name>{_NAME})(?::{_TAG})?(?:@{_DIGEST})?", re.ASCII)
IMAGE_NAME_MAX = 255
IMAGE_MAX = 512
_VERSION = re.compile(r"[\w.+-]{1,128}", re.ASCII)
# RFC 3339 as the API server writes a time (metav1.Time, MicroTime), or ISO 8601 with a space.
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?")
# An HTTP probe's path: RFC 3986 path (and query) characters, no space.
_HTTP_PATH = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]{0,255}")
# A node's directory (a hostPath): an absolute path of the characters paths are written in, no space.
_FILE_PATH = re.compile(r"/[A-Za-z0-9._~@%+=:,/-]{0,255}")
# Prometheus' metric name (and a recording rule's); a unit as a metric's source writes one (ms, bytes/s, %).
_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]{0,199}")
_UNIT = re.compile(r"[A-Za-z%][A-Za-z0-9%/_.-]{0,31}")


def is_image(value: object) -> TypeGuard[str]:
    """A container image reference (``registry.acme.io:5000/web/app:2.19.0@sha256:...``, ``nginx``)."""
    if not isinstance(value, str) or len(value) > IMAGE_MAX:
        return False
    match = _IMAGE.fullmatch(value)
    return match is not None and len(match.group("name")) <= IMAGE_NAME_MAX


def is_version(value: object) -> TypeGuard[str]:
    """A release's version or tag: one token of ``[A-Za-z0-9_.+-]``, at most 128."""
    return isinstance(value, str) and _VERSION.fullmatch(value) is not None


def is_timestamp(value: object) -> TypeGuard[str]:
    """A time as an API writes one (``2025-02-11T06:40:00Z``)."""
    return isinstance(value, str) and _TIMESTAMP.fullmatch(value) is not None


def is_file_path(value: object) -> TypeGuard[str]:
    """A directory or file of a node (``/var/lib/app``): absolute, no space, at most 256."""
    return isinstance(value, str) and _FILE_PATH.fullmatch(value) is not None


def is_metric_name(value: object) -> TypeGuard[str]:
    """A Prometheus metric name (``http_requests_total``)."""
    return isinstance(value, str) and _METRIC_NAME.fullmatch(value) is not None


def is_unit(value: object) -> TypeGuard[str]:
    """A measurement's unit (``ms``, ``bytes/s``, ``count/min``, ``%``): one short token."""
    return isinstance(value, str) and _UNIT.fullmatch(value) is not None


def is_http_path(value: object) -> TypeGuard[str]:
    """An HTTP path (``/healthz``, ``/ready?full=1``): no space, at most 256."""
    return isinstance(value, str) and _HTTP_PATH.fullmatch(value) is not None
