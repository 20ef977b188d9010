"""A caller's unnamed dependency: by the env variable that addresses it, by its name's own word, or as the one
workload configured with a host that does not exist; and the logs read next (issue: the whole cluster)."""

from __future__ import annotations

import pytest

from diagnosis_server.agents.heuristic.addresses import address_host, dependencies
from diagnosis_server.agents.heuristic.analyzers.signatures import log_findings
from diagnosis_server.agents.heuristic.follow_ups import dependency_log_calls, quiet_log_calls
from diagnosis_server.agents.heuristic.observations import Observation, log_lines
from diagnosis_server.conversions import JsonObject, JsonValue

NS = "shop"


def _pod(name: str, app: str, env: list[JsonValue] | None = None, *, ready: bool = True) -> JsonValue:
    container: JsonObject = {"name": "server", "image": f"example/{app}:1.0"}
    if env is not None:
        container["env"] = env
    status: JsonObject = {"name": "server", "ready": ready, "restartCount": 0, "state": {"running": {}}}
    return {
        "metadata": {"name": name, "namespace": NS, "labels": {"app": app}},
        "spec": {"containers": [container]},
        "status": {"phase": "Running", "containerStatuses": [status]},
    }


def _pods(*pods: JsonValue) -> Observation:
    return Observation(0, "kubernetes.pods", {"namespace": NS}, "inv-1", {"kind": "PodList", "items": list(pods)})


def _log(index: int, pod: str, *lines: str) -> Observation:
    arguments: JsonObject = {"namespace": NS, "pod": pod, "container": "server"}
    output: JsonObject = {"pod": pod, "container": "server", "lines": list(lines)}
    return Observation(index, "kubernetes.pod_logs", arguments, f"inv-{index + 1}", output)


FRONTEND_ENV: list[JsonValue] = [
    {"name": "CART_SERVICE_ADDR", "value": "cartservice:7070"},
    {"name": "PRODUCT_CATALOG_SERVICE_ADDR", "value": "productcatalogservice.shop.svc.cluster.local:3550"},
]
LISTING = _pods(
    _pod("frontend-6c8d9bf7d4-x2k8q", "frontend", FRONTEND_ENV),
    _pod("cartservice-5c6b7d8f9-hjkmn", "cartservice", [{"name": "REDIS_ADDR", "value": "redis-cart:6379"}]),
    _pod(
        "checkoutservice-6b5c4d7f8-pqrst", "checkoutservice", [{"name": "SHIPPING_ADDR", "value": "shipping-svc:50051"}]
    ),
    _pod("shippingservice-4d3c2b9f7-vwxzb", "shippingservice"),
    _pod("redis-cart-8f7d6c5b4-lmnpq", "redis-cart"),
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("cartservice:7070", ("cartservice", 7070)),
        ("redis-cart.shop.svc.cluster.local:6379", ("redis-cart", 6379)),
        ("http://ledger-api.payments:8080/v1", ("ledger-api", 8080)),
        ("mongodb://app@mongodb-geo:27017/geo-db", ("mongodb-geo", 27017)),
        ("api.partner.example:443", None),  # a public name: not an in-cluster workload
        ("info", None),  # a bare word is a setting's value
        ("8080", None),
        ("true", None),
    ],
)
def test_an_env_value_is_read_as_an_address_only_when_it_is_one(value: str, expected: object) -> None:
    assert address_host(value) == expected


def test_a_line_calling_a_dependency_by_its_variables_word_names_that_dependency() -> None:
    found = dependencies([LISTING]).named("failed to get cart: rpc error: code = Unavailable", "frontend")
    assert found is not None
    said, target, bindings = found
    assert (said, target) == ("cart", "cartservice")
    assert [b.matched_text for b in bindings] == ["CART_SERVICE_ADDR", "cartservice:7070", "frontend"]


def test_a_line_naming_two_configured_dependencies_names_neither_by_variable() -> None:
    found = dependencies([LISTING]).named("cart and product catalog both failed", "frontend")
    assert found is None


def test_a_workload_named_by_its_own_word_is_the_last_one_the_line_writes() -> None:
    """No variable of the caller is so called: "shipping" of shippingservice, the deepest call of the chain."""
    message = "failed to complete the order: shipping quote failure: DeadlineExceeded"
    found = dependencies([LISTING]).named(message, "frontend")
    assert found is not None and found[1] == "shippingservice"
    # A URL path's word is no call ("/cart/checkout").
    assert dependencies([LISTING]).named("GET /cart/checkout failed with 500", "loadgenerator") is None


def test_a_host_that_one_workload_is_configured_with_is_that_workloads_setting() -> None:
    holder = dependencies([LISTING]).holder("shipping-svc")
    assert holder is not None and (holder.workload, holder.variable) == ("checkoutservice", "SHIPPING_ADDR")
    assert dependencies([LISTING]).holder("nowhere") is None


def test_an_unknown_host_blames_the_workload_configured_with_it_not_the_relaying_caller() -> None:
    logged = _log(
        1,
        "frontend-6c8d9bf7d4-x2k8q",
        "ERROR placing order: dial tcp: lookup shipping-svc on 10.96.0.10:53: no such host",
    )
    known = ["frontend", "cartservice", "checkoutservice", "shippingservice", "redis-cart"]
    findings = log_findings(log_lines(logged), known, dependencies=dependencies([LISTING, logged]))
    blamed = [f for f in findings if f.service == "checkoutservice"]
    assert blamed and "its SHIPPING_ADDR is shipping-svc:50051" in blamed[0].statement
    assert {b.matched_text for b in blamed[0].bindings} >= {"SHIPPING_ADDR", "shipping-svc:50051", "checkoutservice"}


def test_a_fault_a_caller_relays_is_its_dependencys_whose_own_log_reports_it() -> None:
    """frontend's line quotes the Redis reply it got through cartservice; cartservice's own line names Redis (its
    REDIS_ADDR): the store refuses writes, not cartservice."""
    reply = "READONLY You can't write against a read only replica."
    frontend = _log(1, "frontend-6c8d9bf7d4-x2k8q", f"ERROR failed to add to cart: rpc error: desc = {reply}")
    cart = _log(
        2,
        "cartservice-5c6b7d8f9-hjkmn",
        "fail: cartservice.cartstore.RedisCartStore[0]",
        f"      StackExchange.Redis.RedisServerException: {reply}",
    )
    observations = [LISTING, frontend, cart]
    lines = [*log_lines(frontend), *log_lines(cart)]
    known = ["frontend", "cartservice", "redis-cart"]
    findings = log_findings(lines, known, dependencies=dependencies(observations))
    causes = {f.service for f in findings if f.kind == "refuses_writes" and f.role.value == "cause"}
    assert causes == {"redis-cart"}


def test_the_logs_read_next_are_the_blamed_dependencies_and_then_every_quiet_pod() -> None:
    tools = ["kubernetes.pod_logs"]
    frontend = _log(1, "frontend-6c8d9bf7d4-x2k8q", "ERROR failed to get cart: connection refused")
    calls = dependency_log_calls([LISTING, frontend], ["cartservice", "frontend"], tools)
    assert [c[1]["pod"] for c in calls] == ["cartservice-5c6b7d8f9-hjkmn"]
    # Nothing failing, nothing read reports an error, no workload named: every other running pod's own log.
    quiet = _log(1, "frontend-6c8d9bf7d4-x2k8q", "INFO served /cart in 12ms")
    pods = [c[1]["pod"] for c in quiet_log_calls([LISTING, quiet], [], tools)]
    assert "frontend-6c8d9bf7d4-x2k8q" not in pods and len(pods) == 4
    assert quiet_log_calls([LISTING, quiet], ["cartservice"], tools) == []
    assert quiet_log_calls([LISTING, frontend], [], tools) == []


def test_a_variables_word_is_read_in_its_plural_too() -> None:
    listing = _pods(
        _pod("frontend-6c8d9bf7d4-x2k8q", "frontend", [{"name": "CURRENCY_ADDR", "value": "currency:7000"}])
    )
    found = dependencies([listing]).named("could not retrieve currencies: rpc error", "frontend")
    assert found is not None and found[:2] == ("currencies", "currency")
