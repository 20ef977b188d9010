"""The question's subjects resolved against what the sources hold: pods by name, workloads by their pods' labels
and owners, namespaces as namespaces, ordinary words never; selectors that keep a pod named in the question; log
lines read by what they say, with or without a level."""

from __future__ import annotations

import re

import pytest

from diagnosis_server.agents.heuristic.analyzers.reads import known_services
from diagnosis_server.agents.heuristic.analyzers.signatures import log_findings
from diagnosis_server.agents.heuristic.diagnosis import assess
from diagnosis_server.agents.heuristic.live_plan import live_steps, question_namespaces, question_subjects
from diagnosis_server.agents.heuristic.observations import log_lines
from diagnosis_server.agents.heuristic.subjects import resolve_subjects
from diagnosis_server.agents.heuristic.workloads import workload_of_pod
from diagnosis_server.conversions import JsonObject

from ._shapes import container, instant, loki, pod, pod_list, query


def test_a_pod_name_ending_in_a_word_is_not_cut_at_it() -> None:
    """A generated suffix has no vowel (Kubernetes' rand alphabet): "agent" of logging-agent is part of the name."""
    assert workload_of_pod("logging-agent") == "logging-agent"
    assert workload_of_pod("logging-agent-x7k2p") == "logging-agent"
    assert workload_of_pod("checkout-api-7f9c6d8b5-tr6zn") == "checkout-api"


@pytest.mark.parametrize(
    ("question", "subjects", "namespaces"),
    [
        ("What is the issue with job X in namespace app-12", [], ["app-12"]),
        ("What is the issue with job nightly-etl in namespace app-12", ["nightly-etl"], ["app-12"]),
        ("Is anything wrong in the shop namespace right now?", [], ["shop"]),
        ("why is pod logging-agent-x7k2p crashing?", ["logging-agent-x7k2p"], []),
    ],
)
def test_namespaces_are_namespaces_and_ordinary_words_never_subjects(
    question: str, subjects: list[str], namespaces: list[str]
) -> None:
    assert question_subjects(question) == subjects
    assert question_namespaces(question) == namespaces


def test_a_configured_namespace_named_in_the_question_is_no_workload() -> None:
    assert question_subjects("why is payments-prod slow for checkout-api?", ["payments-prod"]) == ["checkout-api"]


def test_the_selector_of_a_pod_named_in_the_question_matches_that_pod() -> None:
    tools: dict[str, JsonObject] = {"prometheus.query": {"name": "prometheus.query"}}
    pod_name = "checkout-api-7f9c6d8b5-tr6zn"
    steps = live_steps(tools, {}, [pod_name])
    selectors = [re.search(r'pod=~"([^"]+)"', str(a["query"])) for _, a, _ in steps]
    patterns = [m.group(1) for m in selectors if m]
    assert patterns and all(re.fullmatch(p, pod_name) for p in patterns)
    assert all(re.fullmatch(p, "checkout-api-7f9c6d8b5-x2k9p") is None for p in patterns)


def _labelled(name: str, labels: dict[str, str], owner: tuple[str, str] | None = None) -> dict[str, object]:
    item = pod(name, containers=[container("app")])
    item["metadata"]["labels"] = labels
    if owner:
        item["metadata"]["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": "u-1", "controller": True}
        ]
    return item


def test_subjects_resolve_to_the_workload_their_pods_labels_and_owners_name() -> None:
    listing = pod_list(
        _labelled("logging-agent-x7k2p", {"app.kubernetes.io/name": "fluent-bit"}, ("DaemonSet", "logging-agent")),
        _labelled(
            "orders-db-postgresql-0",
            {"app.kubernetes.io/name": "postgresql", "app.kubernetes.io/instance": "orders-db"},
            ("StatefulSet", "orders-db-postgresql"),
        ),
        _labelled("api-gw-6d8f7b9c4-k2x9z", {"app": "gateway"}, ("ReplicaSet", "api-gw-6d8f7b9c4")),
        _labelled("nightly-etl-29012345-q8w2z", {"app": "etl"}, ("Job", "nightly-etl-29012345")),
    )
    asked = ["logging-agent-x7k2p", "logging-agent", "orders-db", "api-gw", "nightly-etl", "no-such-thing"]
    assert resolve_subjects(asked, [listing]) == ["fluent-bit", "orders-db", "gateway", "etl", "no-such-thing"]
    known = known_services([listing])
    assert {"logging-agent-x7k2p", "api-gw", "nightly-etl"} <= set(known)


def test_a_workload_seen_only_in_prometheus_labels_is_known() -> None:
    answer = query("up", instant({"__name__": "up", "job": "diagnosis-graph", "instance": "127.0.0.1:9464"}, 1))
    assert {"diagnosis-graph", "127.0.0.1:9464"} <= set(known_services([answer]))
    assessment = assess([answer], subjects=["diagnosis-graph"], question="what is wrong with diagnosis-graph?")
    assert not any(g.subject == "diagnosis-graph" for g in assessment.gaps)  # never "no data about" it


@pytest.mark.parametrize(
    "line",
    [
        "dial tcp 10.0.4.12:5432: connect: connection refused",
        'Exception in thread "main" java.lang.IllegalStateException: cache not warmed',
        "panic: runtime error: invalid memory address or nil pointer dereference",
    ],
)
def test_a_line_without_a_level_is_read_by_what_it_says(line: str) -> None:
    observation = loki(({"app": "checkout-api", "namespace": "greenfield"}, [(1, line)]))
    findings = log_findings(log_lines(observation), ["checkout-api"])
    assert any(f.service == "checkout-api" for f in findings), line


def test_a_routine_level_line_or_a_quiet_one_is_not_an_error() -> None:
    observation = loki(
        (
            {"app": "checkout-api", "namespace": "greenfield"},
            [(1, 'level=info msg="retry budget: 0 failed of 120"'), (2, "served 1200 requests in 60s")],
        )
    )
    assert not [f for f in log_findings(log_lines(observation), ["checkout-api"]) if f.kind == "error_log"]


def test_events_outside_the_window_the_run_read_are_not_findings() -> None:
    """The window the plan's range reads name bounds the events read: a BackOff of yesterday is not today's."""
    from diagnosis_server.agents.heuristic.analyzers.events import event_findings

    from ._shapes import at, event_list, k8s_event, observation

    message = "Back-off restarting failed container grain-api in pod grain-api-7d9f8c6b5-x2k9p_greenfield(7c1e)"
    events = event_list(k8s_event("Pod", "grain-api-7d9f8c6b5-x2k9p", "BackOff", message, -1440))
    assert [f.kind for f in event_findings([events], ["grain-api"])]  # read without a window: a finding
    ranged = observation(
        "prometheus.query_range",
        {"status": "success", "data": {"resultType": "matrix", "result": []}},
        {"query": "up", "start": at(-60), "end": at(0)},
    )
    assert event_findings([events, ranged], ["grain-api"]) == []
    recent = event_list(k8s_event("Pod", "grain-api-7d9f8c6b5-x2k9p", "BackOff", message, -5))
    assert [f.kind for f in event_findings([recent, ranged], ["grain-api"])]


def test_the_live_plan_names_the_runs_window_on_its_reads() -> None:
    tools: dict[str, JsonObject] = {n: {"name": n} for n in ("prometheus.query", "prometheus.query_range")}
    context: JsonObject = {"window": {"start": "2026-12-01T10:00:00Z", "end": "2026-12-01T11:00:00Z"}}
    steps = live_steps(tools, context, ["grain-api"])
    for tool, arguments, _ in steps:
        if tool == "prometheus.query_range":
            assert (arguments["start"], arguments["end"]) == ("2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z")
        else:
            assert arguments["time"] == "2026-12-01T11:00:00Z"
    assert all("start" not in a and "time" not in a for _, a, _ in live_steps(tools, {}, ["grain-api"]))


def test_an_mcp_mapping_in_the_rules_file_is_read_and_checked(tmp_path: object) -> None:
    """The rules file's mcp tables: calls per workload with their arguments filled, read as the source of their
    shape; a mapping to something it cannot answer stops the file naming it."""
    from pathlib import Path

    from diagnosis_server.agents.heuristic.analyzers.rules import RulesError, load_rules
    from diagnosis_server.agents.heuristic.mcp_tools import mcp_steps, read_as, rule_of

    folder = Path(str(tmp_path))
    good = folder / "good.toml"
    good.write_text('[[mcp]]\ntool = "mcp.grafana.query_loki_logs"\nanswers = "logs"\n'
                    "arguments = { logql = '{{app=\"{workload}\"}}', since = \"{start}\" }\n")  # fmt: skip
    rules = load_rules(str(good))
    tools: dict[str, JsonObject] = {"mcp.grafana.query_loki_logs": {"name": "mcp.grafana.query_loki_logs"}}
    steps = mcp_steps(rules, tools, ["cart-api"], "shop", "why?", ("2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z"))
    assert [(t, a) for t, a, _ in steps] == [
        ("mcp.grafana.query_loki_logs", {"logql": '{app="cart-api"}', "since": "2026-12-01T10:00:00Z"})
    ]
    assert mcp_steps(rules, {}, ["cart-api"], "shop", "why?", None) == []  # a tool the run does not have
    rule = rule_of(rules, "mcp.grafana.query_loki_logs")
    loki_body: JsonObject = {"status": "success", "data": {"resultType": "streams", "result": []}}
    assert read_as(rule, loki_body) == "loki.query_range"
    assert read_as(rule, {"content": [{"type": "text", "text": "x"}]}) == ""
    bad = folder / "bad.toml"
    bad.write_text('[[mcp]]\ntool = "mcp.grafana.query"\nanswers = "dashboards"\n')
    with pytest.raises(RulesError, match=r"bad\.toml"):
        load_rules(str(bad))
