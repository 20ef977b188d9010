"""A host a caller's failing line names is the workload the outputs show it to be: the Service an Ingress routes
it to, or the workload of a Certificate named after it; the finding binds what shows it (issue: live sources,
subjects resolved against what the sources hold)."""

from __future__ import annotations

from typing import Any

from diagnosis_server.agents.heuristic.analyzers.reads import known_addresses
from diagnosis_server.agents.heuristic.analyzers.signatures import log_findings
from diagnosis_server.agents.heuristic.observations import Observation, log_lines

from ._shapes import observation, pack_event, pack_events, pod_logs

LINE = (
    'level=error msg="jwks fetch failed" error="Get \\"https://id.acme.internal/.well-known/jwks.json\\": '
    'tls: failed to verify certificate: x509: certificate signed by unknown authority"'
)


def _ingress(host: str, backend: str) -> Observation:
    item: Any = {
        "metadata": {"name": "identity", "namespace": "identity"},
        "spec": {
            "rules": [{"host": host, "http": {"paths": [{"path": "/", "backend": {"service": {"name": backend}}}]}}]
        },
    }
    return observation("kubernetes.list", {"kind": "IngressList", "items": [item]}, {"kind": "ingresses"})


def _causes(observations: list[Observation]) -> list[tuple[str, str]]:
    lines = [line for obs in observations for line in log_lines(obs)]
    found = log_findings(lines, ["orders-api"], addresses=known_addresses(observations))
    return [(f.service, f.statement) for f in found if f.kind == "tls_untrusted"]


def test_an_ingress_host_is_the_service_it_routes_to() -> None:
    observations = [_ingress("id.acme.internal", "identity-provider"), pod_logs("orders-api-6c9f7d8b5-x2x9q", LINE)]
    [(service, statement)] = _causes(observations)
    assert service == "identity-provider" and statement.startswith("identity-provider ")


def test_a_certificate_named_after_the_host_is_its_workloads() -> None:
    issued = pack_event(5, "identity-provider", "Certificate", "id-acme-internal", "Issuing", "issued")
    observations = [pack_events(issued), pod_logs("orders-api-6c9f7d8b5-x2x9q", LINE)]
    [(service, _)] = _causes(observations)
    assert service == "identity-provider"


def test_a_host_nothing_places_stays_the_host() -> None:
    observations = [_ingress("shop.acme.internal", "storefront"), pod_logs("orders-api-6c9f7d8b5-x2x9q", LINE)]
    [(service, _)] = _causes(observations)
    assert service == "id.acme.internal"
