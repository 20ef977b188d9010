"""A metric name's base-unit part, read one way by the analyzers and the derivability check."""

from __future__ import annotations

import pytest

from diagnosis_server.text.metric_units import names_unit, time_unit


@pytest.mark.parametrize(
    ("name", "unit"),
    [
        ("grpc_server_handling_seconds:p99", "s"),
        ("http_request_duration_seconds_bucket", "s"),
        ("checkout_latency_p99_ms", "ms"),
        ("db_query_duration_milliseconds", "ms"),
        ("HTTP_Server_Requests_Seconds", "s"),
        ("http_requests_error_rate", ""),
        ("container_memory_working_set_bytes", ""),
        ("seconds_total", ""),
        ("http_request_secondsx", ""),
    ],
)
def test_a_time_unit_is_the_names_own_unit_part(name: str, unit: str) -> None:
    assert time_unit(name) == unit


def test_a_unit_is_found_in_a_text_holding_the_name_and_never_another_unit() -> None:
    text = 'rose: {"__name__": "grpc_server_handling_seconds:p99"}'
    assert names_unit("s", text) and names_unit("S", text)
    assert not names_unit("ms", text) and not names_unit("b", text) and not names_unit("kg", text)
    assert names_unit("b", "container_memory_working_set_bytes")
