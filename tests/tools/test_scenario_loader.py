"""Scenario packs: the bundled packs load and are well formed; bad packs fail with the file and field named."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnosis_server.tools.scenario import (
    BUNDLED_DIR,
    Scenario,
    ScenarioError,
    default_scenario_name,
    get_scenario,
    load_scenario,
    load_scenarios,
)
from tests.support.scenarios import truth_of

from ._helpers import minimal_pack, write_pack

REQUIRED = {
    "checkout-oom": "oom_crash_loop",
    "payments-bad-deploy": "bad_deploy",
    "orders-db-pool": "db_pool_exhaustion",
    "search-disk-full": "disk_full",
    "gateway-tls-expired": "tls_expired",
    "catalog-upstream-latency": "upstream_latency",
    "healthy-noisy": "none",
    "inventory-ambiguous": "failed_mount",
}


# ------------------------------------------------------------------------------------ bundled packs
def test_every_bundled_pack_loads_and_the_required_incidents_are_there(bundled: dict[str, Scenario]) -> None:
    assert len(bundled) >= 8
    for name, kind in REQUIRED.items():
        assert name in bundled, name
        assert truth_of(bundled[name]).root_cause.kind == kind
    assert list(bundled) == sorted(bundled)
    for path in sorted(BUNDLED_DIR.glob("*.json")):
        assert load_scenario(path).name == path.stem


def test_exactly_one_bundled_default_and_it_is_checkout_oom(bundled: dict[str, Scenario]) -> None:
    assert [name for name, s in bundled.items() if s.default] == ["checkout-oom"]
    assert default_scenario_name() == "checkout-oom"


def test_bundled_packs_are_cached_but_callers_get_their_own_dict() -> None:
    first = load_scenarios()
    first.pop("checkout-oom")
    second = load_scenarios()
    assert "checkout-oom" in second
    assert second["healthy-noisy"] is load_scenarios()["healthy-noisy"]


@pytest.mark.parametrize("path", sorted(BUNDLED_DIR.glob("*.json")), ids=lambda p: p.stem)
def test_bundled_pack_is_realistic_in_shape(path: Path) -> None:
    scenario = load_scenario(path)
    assert 10_000 <= path.stat().st_size <= 70_000
    window = scenario.time_window
    assert timedelta(hours=1) <= window.end - window.start <= timedelta(hours=2)
    assert len(scenario.topology.services) >= 4
    assert len({s.kind for s in scenario.topology.services}) >= 3
    assert len(scenario.logs) >= 60
    assert {line.level for line in scenario.logs} >= {"INFO", "WARN"}
    assert len(scenario.metrics) >= 6
    assert scenario.deploys, "every pack has at least one deploy (a cause or a red herring)"
    assert scenario.k8s_events
    # every http service reports its error rate: a first look is always possible
    for service in scenario.topology.services:
        if service.kind == "http":
            assert any(m.metric == "http_requests_error_rate" and m.service == service.name for m in scenario.metrics)
    # 1-minute or 5-minute resolution, spanning the window
    for series in scenario.metrics:
        steps = {b[0] - a[0] for a, b in zip(series.points, series.points[1:], strict=False)}
        assert steps <= {timedelta(minutes=1), timedelta(minutes=5)}, (series.metric, series.service)
        assert series.points[0][0] == window.start
    # no service is named that the topology lacks (the loader guarantees it; this keeps the guarantee honest)
    names = set(scenario.service_names)
    assert {line.service for line in scenario.logs} <= names


def test_truth_flags_are_consistent(bundled: dict[str, Scenario]) -> None:
    assert [n for n, s in bundled.items() if truth_of(s).healthy] == ["healthy-noisy"]
    assert [n for n, s in bundled.items() if truth_of(s).ambiguous] == ["inventory-ambiguous"]
    for name, scenario in bundled.items():
        if not truth_of(scenario).healthy:
            assert truth_of(scenario).root_cause.service in scenario.service_names, name
            assert truth_of(scenario).key_evidence, name


def test_get_scenario_by_name_and_unknown_name_lists_the_known_ones() -> None:
    assert get_scenario("orders-db-pool").name == "orders-db-pool"
    with pytest.raises(ScenarioError, match=r"unknown scenario 'nope' \(known: .*checkout-oom"):
        get_scenario("nope")


# ------------------------------------------------------------------------------------ bad packs
def test_minimal_pack_loads(tmp_path: Path) -> None:
    scenario = load_scenario(write_pack(tmp_path, minimal_pack()))
    assert scenario.service_names == ("api", "db")
    assert scenario.service("db") is not None
    assert scenario.service("nope") is None


def _error(tmp_path: Path, pack: dict[str, Any], stem: str | None = None) -> str:
    path = write_pack(tmp_path, pack, stem)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    message = str(info.value)
    assert str(path) in message, "the message names the file"
    return message


def _mutated(mutate: Any) -> dict[str, Any]:
    pack = minimal_pack()
    mutate(pack)
    return pack


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda p: p.pop("title"), "field title"),
        (lambda p: p["logs"][2].update(level="CRITICAL"), "field logs.2.level"),
        (lambda p: p["logs"][3].update(service="ghost"), "field logs.3.service: unknown service 'ghost'"),
        (lambda p: p["logs"][1].update(ts="2024-01-01T12:00:00Z"), "field logs.1.ts"),
        (lambda p: p["logs"][0].update(ts="yesterday"), "field logs.0.ts"),
        (lambda p: p["time_window"].update(start="2024-01-01T10:00:00+02:00"), "field time_window.start"),
        (lambda p: p["time_window"].update(start="2024-01-01T10:00:00"), "field time_window.start"),
        (lambda p: p["time_window"].update(end="2024-01-01T09:00:00Z"), "field time_window.end"),
        (lambda p: p["topology"]["services"][0].update(depends_on=["cache"]), "field topology.services.0.depends_on.0"),
        (lambda p: p["topology"]["services"][0].update(kind="lambda"), "field topology.services.0.kind"),
        (lambda p: p["topology"]["services"].append(dict(p["topology"]["services"][0])), "field topology.services.2"),
        (lambda p: p["metrics"][0].update(service="ghost"), "field metrics.0.service"),
        (lambda p: p["metrics"].append(dict(p["metrics"][0])), "field metrics.1.metric: duplicate series"),
        (lambda p: p["metrics"][0]["points"].reverse(), "field metrics.0.points.1.0"),
        (lambda p: p["metrics"][0]["points"][2].__setitem__(1, "high"), "field metrics.0.points.2.1"),
        (lambda p: p["metrics"][0]["points"].append(["2024-01-01T11:30:00Z", 1]), "field metrics.0.points.5.0"),
        (lambda p: p["deploys"][0].update(service="ghost"), "field deploys.0.service"),
        (lambda p: p["k8s_events"][0].update(ts="2023-12-31T23:00:00Z"), "field k8s_events.0.ts"),
        (lambda p: p["k8s_events"][0].update(count=0), "field k8s_events.0.count"),
        (lambda p: p["k8s_events"][0].update(service="ghost"), "field k8s_events.0.service"),
        (lambda p: p["truth"]["root_cause"].update(service="ghost"), "field truth.root_cause.service"),
        (lambda p: p["truth"].update(healthy=True), "field truth.root_cause.kind"),
        (lambda p: p.update(surprise=1), "field surprise"),
    ],
)
def test_invalid_pack_names_file_and_field(tmp_path: Path, mutate: Any, field: str) -> None:
    message = _error(tmp_path, _mutated(mutate))
    assert field in message


def test_name_must_match_file_stem(tmp_path: Path) -> None:
    assert "field name" in _error(tmp_path, minimal_pack(), stem="other")


def test_invalid_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"name": "broken",', encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"broken\.json: not valid JSON"):
        load_scenario(path)


def test_missing_file_is_a_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"missing\.json: cannot read"):
        load_scenario(tmp_path / "missing.json")


def test_directory_needs_exactly_one_default(tmp_path: Path) -> None:
    write_pack(tmp_path, minimal_pack(name="a"))
    write_pack(tmp_path, minimal_pack(name="b"))
    with pytest.raises(ScenarioError, match=r"field default: exactly one .* \(found 2: a\.json, b\.json\)"):
        load_scenarios(tmp_path)
    write_pack(tmp_path, minimal_pack(name="b", default=False))
    assert list(load_scenarios(tmp_path)) == ["a", "b"]
    assert default_scenario_name(tmp_path) == "a"
    write_pack(tmp_path, minimal_pack(name="a", default=False))
    with pytest.raises(ScenarioError, match=r"found 0: none"):
        load_scenarios(tmp_path)


def test_empty_or_missing_directory_is_a_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no scenario packs"):
        load_scenarios(tmp_path)
    with pytest.raises(ScenarioError, match="not a directory"):
        load_scenarios(tmp_path / "nowhere")


def test_a_bad_pack_in_a_directory_fails_the_directory(tmp_path: Path) -> None:
    write_pack(tmp_path, minimal_pack(name="good"))
    bad = minimal_pack(name="bad", default=False)
    bad["logs"][0]["service"] = "ghost"
    write_pack(tmp_path, bad)
    with pytest.raises(ScenarioError, match=r"bad\.json: field logs\.0\.service"):
        load_scenarios(tmp_path)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    section=st.sampled_from(["logs", "metrics", "deploys", "k8s_events"]),
    index=st.integers(min_value=0, max_value=50),
    ghost=st.from_regex(r"[a-z][a-z0-9-]{2,12}", fullmatch=True),
)
def test_any_unknown_service_reference_is_named_by_its_field(
    tmp_path: Path, section: str, index: int, ghost: str
) -> None:
    """Property: rename the service of any record of a bundled pack and the error names that exact field."""
    original = json.loads((BUNDLED_DIR / "payments-bad-deploy.json").read_text(encoding="utf-8"))
    names = {s["name"] for s in original["topology"]["services"]}
    if ghost in names:
        return
    records = original[section]
    index %= len(records)
    records[index]["service"] = ghost
    path = tmp_path / "payments-bad-deploy.json"
    path.write_text(json.dumps(original), encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert f"field {section}.{index}.service: unknown service '{ghost}'" in str(info.value)
