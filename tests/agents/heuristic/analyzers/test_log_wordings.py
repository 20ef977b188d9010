"""The log rules on failure lines as real libraries, runtimes and servers word them (``_wordings``).

Each line goes through the analyzers' own path (``log_lines`` then ``log_findings``), as ``kubernetes.pod_logs``
returns it (its level read from its text: ``ERROR``, ``level=error``, klog's ``E0211``, .NET's ``fail:``, pino's
``"level":50``) or as a Loki stream with a ``level`` label. A failure line gives a finding of its kind, about the
target it names where it names one, and every finding's evidence holds (``assert_sound``); a line of ordinary
operation gives nothing, and an error line of another failure is not read as the given kind.
"""

from __future__ import annotations

import pytest

from diagnosis_server.agents.heuristic.analyzers.rules import current_rules
from diagnosis_server.agents.heuristic.analyzers.signatures import log_findings
from diagnosis_server.agents.heuristic.findings import Finding
from diagnosis_server.agents.heuristic.observations import Observation, line_level, log_lines

from ._checks import assert_sound
from ._shapes import loki, pod_logs
from ._wordings import CALLER, CALLER_POD, FAILURES, FALSE_POSITIVE, KNOWN, NOISE, RETRIED

DOES_NOT_EXIST = "calls a host name that does not exist"


def _findings(shape: str, line: str) -> tuple[list[Finding], Observation]:
    if shape.startswith("loki:"):
        obs = loki(({"app": CALLER, "namespace": "greenfield", "level": shape.removeprefix("loki:")}, [(3, line)]))
    else:
        obs = pod_logs(CALLER_POD, line)
    found = log_findings(log_lines(obs), KNOWN, current_rules())
    assert_sound(found, [obs])
    return found, obs


def _target(finding: Finding) -> str:
    """Whom a finding is about besides the caller: the blamed workload, the workload it is about, a name that does
    not exist (``!caller``), or '' (the caller's calls fail, target unnamed)."""
    if finding.blamed:
        return finding.blamed
    if finding.service != CALLER:
        return finding.service
    return "!caller" if DOES_NOT_EXIST in finding.statement else ""


@pytest.mark.parametrize(
    ("kind", "target", "shape", "line"),
    [
        pytest.param(kind, target, shape, line, id=f"{category}-{i}")
        for i, (category, kind, target, shape, line) in enumerate(FAILURES)
    ],
)
def test_a_failure_line_is_read_as_its_kind_about_its_target(
    kind: str, target: str | None, shape: str, line: str
) -> None:
    found, _ = _findings(shape, line)
    mine = [f for f in found if f.kind == kind]
    assert mine, f"no {kind} finding; got {[(f.kind, _target(f)) for f in found]}"
    if target is not None:
        assert _target(mine[0]) == target, [(f.kind, _target(f), f.statement) for f in found]


@pytest.mark.parametrize("line", NOISE)
def test_a_line_of_ordinary_operation_gives_nothing(line: str) -> None:
    found, _ = _findings("pod", line)
    assert not found, [(f.kind, f.statement) for f in found]


@pytest.mark.parametrize(("kind", "read_as", "line"), FALSE_POSITIVE)
def test_an_error_line_of_another_failure_is_not_read_as_this_kind(kind: str, read_as: str, line: str) -> None:
    """Read as the failure it is (a generic error line at least), not as the kind its words resemble."""
    found, _ = _findings("pod", line)
    kinds = {f.kind for f in found}
    assert kind not in kinds and read_as in kinds, [(f.kind, _target(f)) for f in found]


@pytest.mark.parametrize("line", RETRIED)
def test_a_retried_refusal_logged_below_error_is_still_a_refused_call(line: str) -> None:
    found, _ = _findings("pod", line)
    assert "refused" in {f.kind for f in found}, [(f.kind, _target(f)) for f in found]


@pytest.mark.parametrize(
    ("line", "level"),
    [
        ("E0211 06:52:01.123456       1 reflector.go:147] failed to list *v1.Pod: context deadline exceeded", "ERROR"),
        ("W0211 06:52:01.123456       1 warnings.go:70] v1 Endpoints is deprecated in v1.33+", "WARN"),
        ("I0211 06:52:01.123456       1 leaderelection.go:258] successfully acquired lease", "INFO"),
        ('fail: Microsoft.AspNetCore.Server.Kestrel[13] Connection id "0HN1": An unhandled exception', "ERROR"),
        ("crit: Microsoft.AspNetCore.Hosting.Diagnostics[6] Application startup exception", "FATAL"),
        ("dbug: Microsoft.Extensions.Hosting.Internal.Host[1] Hosting starting", "DEBUG"),
        ('{"level":50,"time":1739256721123,"pid":1,"msg":"charge failed"}', "ERROR"),
        ('{"level":30,"time":1739256721123,"pid":1,"msg":"retried after error, ok"}', "INFO"),
        ('{"level":60,"time":1739256721123,"pid":1,"msg":"cannot start"}', "FATAL"),
        ("2025-02-11T06:52:01Z ERROR payment declined", "ERROR"),
        # zerolog's console writer: three capitals, never lower case ("+Inf" is a bucket bound, not a level).
        ("2025-06-10T09:00:00Z INF cmd/geo/main.go:38 > failed attempts reset", "INFO"),
        ("2025-06-10T09:00:00Z WRN cmd/geo/main.go:61 > retry failed, trying again", "WARN"),
        ("2025-06-10T09:00:00Z PNC cmd/geo/db.go:44 > server selection error", "FATAL"),
        ('le="+Inf" bucket of the request durations', ""),
        ("listening on :8080", ""),
    ],
)
def test_a_lines_level_is_read_in_each_common_format(line: str, level: str) -> None:
    assert line_level(line) == level
