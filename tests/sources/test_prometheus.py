"""prometheus.query and prometheus.query_range against a real Prometheus over backfilled series."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import from_value

from .conftest import PrometheusServer, free_port
from .helpers import call, opened

OK = contracts_pb2.TOOL_INVOCATION_STATUS_OK
ERROR = contracts_pb2.TOOL_INVOCATION_STATUS_ERROR


def _env(url: str, extra: str = "") -> str:
    return f'[environments.prod]\ndefault = true\nprometheus = {{ url = "{url}"{extra} }}\n'


async def test_query_range_records_prometheus_json_as_returned(
    prometheus_server: PrometheusServer, tmp_path: Path
) -> None:
    async with opened(tmp_path, _env(prometheus_server.url)) as registry:
        toolset = registry.tools_for("prod").toolset
        assert toolset.names == (
            "prometheus.query",
            "prometheus.query_range",
            "prometheus.series",
            "prometheus.label_values",
        )
        invocation = await call(
            toolset,
            "prometheus.query_range",
            {
                "query": 'sum by (pod) (rate(http_requests_total{code="500"}[5m]))',
                "start": str(prometheus_server.end - 3600),
                "end": str(prometheus_server.end),
                "step": "5m",
            },
        )
    assert invocation.status == OK, invocation.error
    body: Any = from_value(invocation.output)
    assert body["status"] == "success" and body["data"]["resultType"] == "matrix"
    by_pod = {series["metric"]["pod"]: series["values"] for series in body["data"]["result"]}
    assert set(by_pod) == {"checkout-api-7f9c6d8b5-tr6zn", "checkout-api-7f9c6d8b5-x2k9p"}
    values = by_pod["checkout-api-7f9c6d8b5-tr6zn"]
    assert len(values) == 13
    # Errors begin 30 minutes before the end: the first points are 0, the last ones 6/min = 0.1/s.
    assert values[0][1] == "0" and float(values[-1][1]) == 0.1
    assert isinstance(values[-1][0], int | float) and values[-1][0] == prometheus_server.end


async def test_instant_query_and_relative_time(prometheus_server: PrometheusServer, tmp_path: Path) -> None:
    async with opened(tmp_path, _env(prometheus_server.url)) as registry:
        invocation = await call(
            registry.tools_for("prod").toolset,
            "prometheus.query",
            {"query": "container_memory_working_set_bytes", "time": str(prometheus_server.end)},
        )
        assert invocation.status == OK, invocation.error
        body: Any = from_value(invocation.output)
        assert body["data"]["resultType"] == "vector"
        [sample] = body["data"]["result"]
        assert sample["metric"]["pod"] == "checkout-api-7f9c6d8b5-tr6zn"
        assert sample["value"] == [prometheus_server.end, str(300_000_000 + 7200 * 20_000)]
        recent = await call(registry.tools_for("prod").toolset, "prometheus.query", {"query": "up", "time": "now-1m"})
        recent_body: Any = from_value(recent.output)
        assert recent.status == OK and recent_body["data"]["result"] == []


async def test_bad_promql_is_an_error_with_prometheus_message(
    prometheus_server: PrometheusServer, tmp_path: Path
) -> None:
    async with opened(tmp_path, _env(prometheus_server.url)) as registry:
        invocation = await call(registry.tools_for("prod").toolset, "prometheus.query", {"query": "sum(rate(x[5m]"})
    assert invocation.status == ERROR
    assert invocation.error.startswith("prometheus.query: bad_data: ")
    assert "parse error" in invocation.error


async def test_a_prometheus_that_is_down_makes_its_tools_fail_recorded(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    async with opened(tmp_path, _env(url)) as registry:
        invocation = await call(registry.tools_for("prod").toolset, "prometheus.query", {"query": "up"})
    assert invocation.status == ERROR
    assert invocation.error == f"prometheus.query: cannot reach {url} (ConnectError)"


async def test_the_bearer_token_is_sent_and_never_shown(prometheus_server: PrometheusServer, tmp_path: Path) -> None:
    token = tmp_path / "prom-token"
    token.write_text("prom-s3cret-token-value\n")
    async with opened(tmp_path, _env(prometheus_server.url, f', bearer_token_file = "{token}"')) as registry:
        env = registry.get("prod")
        assert all("s3cret" not in source.endpoint for source in env.sources)
        invocation = await call(
            env.toolset,
            "prometheus.query",
            {"query": 'label_replace(vector(1), "x", "prom-s3cret-token-value", "", "")'},
        )
    assert invocation.status == OK, invocation.error
    # The upstream echoed the secret back in a label: the recorded output has it redacted.
    body: Any = from_value(invocation.output)
    [sample] = body["data"]["result"]
    assert sample["metric"]["x"] == "[REDACTED]"
    assert b"prom-s3cret-token-value" not in invocation.output.SerializeToString()
