"""The rules as data: the bundled ``rules.toml`` extended by an operator's file (``DIAGNOSIS_HEURISTIC_RULES_FILE``,
or ``load_rules(path)``): its container, event and log rules come after the bundled ones, its thresholds override
theirs, and a bad file is one ``RulesError`` naming the file and the field. Findings of an operator's rules are
bound and derivable like any other (R-C-1, R-V-1, R-V-4).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from diagnosis_server.agents.heuristic.analyzers.events import event_findings
from diagnosis_server.agents.heuristic.analyzers.pods import pod_findings, settled_pods
from diagnosis_server.agents.heuristic.analyzers.rules import (
    RULES_FILE_ENV,
    RulesError,
    bundled_rules,
    current_rules,
    load_rules,
)
from diagnosis_server.agents.heuristic.analyzers.signatures import log_findings
from diagnosis_server.agents.heuristic.findings import Finding, Role
from diagnosis_server.agents.heuristic.observations import Observation, log_lines

from ._checks import assert_sound, kinds, one, sound
from ._shapes import container, event_list, k8s_event, pod, pod_list, pod_logs, terminated, waiting

OPERATOR_RULES = """\
version = 1

[thresholds]
restarts_min = 10
slow_call_ms = 500

[[container]]
kind = "registry_down"
state = "waiting"
reasons = ["RegistryUnavailable"]
role = "cause"
strength = 3
phrase = "cannot pull its image"

[[event]]
kind = "network_attach"
reasons = ["NoNetworkFound"]
message = 'cannot find a network-attachment-definition'
role = "cause"
strength = 4
phrase = "pods cannot get a network"
cleared_by = ["Started"]

# Not used: the bundled failed_mount rule decides FailedMount first.
[[event]]
kind = "mount_noise"
reasons = ["FailedMount"]
role = "hypothesis"
phrase = "mounts slowly"

[[log]]
kind = "cache_full"
about = "target"
role = "cause"
strength = 3
phrase = "runs out of memory"
patterns = ["OOM command not allowed when used memory > 'maxmemory'"]
"""

# Multus, a CNI meta-plugin the bundled rules do not know.
SANDBOX = (
    "cannot find a network-attachment-definition (macvlan-conf) in namespace (silo): "
    'network-attachment-definitions.k8s.cni.cncf.io "macvlan-conf" not found'
)
CACHE_LINE = (
    "ERROR cache write to silo-cache failed: redis.exceptions.ResponseError: OOM command not allowed when used "
    "memory > 'maxmemory'."
)
POD = "hay-baler-5c7d8f9b6c-q8w2z"


def operator_file(tmp_path: Path, text: str = OPERATOR_RULES) -> Path:
    path = tmp_path / "operator-rules.toml"
    path.write_text(text, encoding="utf-8")
    return path


def observations() -> list[Observation]:
    restarted = container("hay-baler", restarts=4, last_state=terminated("OOMKilled", 137))
    hook = container("hook-runner", ready=False, state=waiting("RegistryUnavailable", "registry unavailable"))
    return [
        pod_list(
            pod(POD, app="hay-baler", containers=[restarted]),
            pod("silo-gateway-6b8d9c7f5d-p4q7r", app="silo-gateway", phase="Pending", containers=[hook]),
        ),
        event_list(
            k8s_event("Pod", POD, "NoNetworkFound", SANDBOX, 3),
            k8s_event(
                "Pod",
                "silo-gateway-6b8d9c7f5d-p4q7r",
                "FailedMount",
                'MountVolume.SetUp failed for volume "tls" : secret "silo-gateway-tls" not found',
                4,
            ),
        ),
        pod_logs("grain-api-7d9f8c6b5d-q2w8z", CACHE_LINE, "INFO quote served path=/v1/quote took 900ms"),
    ]


def run_all(obs: list[Observation]) -> list[Finding]:
    lines = [line for o in obs for line in log_lines(o)]
    return [
        *pod_findings(obs),
        *event_findings(obs, ["hay-baler", "silo-gateway", "silo-cache", "grain-api"]),
        *log_findings(lines, ["hay-baler", "silo-gateway", "silo-cache", "grain-api"]),
    ]


def test_the_bundled_rules_alone() -> None:
    """Without an operator's file the bundled rules are in force: the operator's reasons mean nothing."""
    rules = bundled_rules()
    assert rules.version == 1 and rules.thresholds.restarts_min == 3 and rules.thresholds.slow_call_ms == 2000
    obs = observations()
    found = run_all(obs)
    assert_sound(found, obs)
    assert not {"network_attach", "cache_full", "registry_down"} & kinds(found)
    assert one(found, "oom").service == "hay-baler"  # 4 restarts >= 3: not settled
    assert "slow_calls" not in kinds(found)  # 900 ms < 2000 ms


def test_an_operators_file_named_by_the_environment_extends_the_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The analyzers read ``current_rules()``: the operator's event, log and container rules apply, its thresholds
    override (10 restarts settle a pod with 4; 500 ms makes 900 ms slow), and a reason the bundled rules cover is
    still decided by them."""
    monkeypatch.setenv(RULES_FILE_ENV, str(operator_file(tmp_path)))
    rules = current_rules()
    assert (rules.thresholds.restarts_min, rules.thresholds.slow_call_ms) == (10, 500)
    assert rules.thresholds.memory_near_limit == bundled_rules().thresholds.memory_near_limit
    assert rules.event[: len(bundled_rules().event)] == bundled_rules().event

    obs = observations()
    found = run_all(obs)
    assert_sound(found, obs)
    sandbox = one(found, "network_attach")
    assert (sandbox.role, sandbox.service, sandbox.strength) == (Role.CAUSE, "hay-baler", 4)
    assert sandbox.statement.startswith("hay-baler pods cannot get a network (pod ")
    cache = one(found, "cache_full")
    assert (cache.role, cache.service) == (Role.CAUSE, "silo-cache")
    assert cache.statement.startswith("silo-cache runs out of memory (grain-api calls to it fail with")
    hook = one(found, "registry_down")
    assert (hook.role, hook.service) == (Role.CAUSE, "silo-gateway")
    assert one(found, "failed_mount").role is Role.CAUSE and "mount_noise" not in kinds(found)
    assert POD in settled_pods(obs) and "oom" not in kinds(found)
    assert one(found, "slow_calls").statement == 'grain-api logs slow calls ("took 900ms")'


def test_an_operators_file_loaded_explicitly(tmp_path: Path) -> None:
    """``load_rules(path)`` gives the same rules to pass to an analyzer without touching the environment."""
    rules = load_rules(str(operator_file(tmp_path)))
    obs = observations()
    assert one(sound(event_findings(obs, rules=rules), obs), "network_attach").service == "hay-baler"
    assert "oom" not in kinds(sound(pod_findings(obs, rules=rules), obs))
    assert "oom" in kinds(sound(pod_findings(obs), obs))  # the environment names no file: bundled rules


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (
            '[[event]]\nkind = "x"\nreasons = ["FailedCreate"]\nmessage = "exceeded (quota"\nrole = "cause"\n'
            'phrase = "pods cannot be created"\n',
            "event.0.message: Value error, not a regular expression",
        ),
        (
            '[[log]]\nkind = "x"\nabout = "self"\nrole = "cause"\nphrase = "crashes"\npatterns = ["a"]\n'
            'colour = "red"\n',
            "log.0.colour: Extra inputs are not permitted",
        ),
        (
            '[[container]]\nkind = "x"\nstate = "waiting"\nreasons = ["Foo"]\nrole = "culprit"\nphrase = "crashes"\n',
            "container.0.role",
        ),
        (
            '[[log]]\nkind = "x"\nabout = "self"\nrole = "cause"\nphrase = "crashes"\npatterns = ["ok", "[unclosed"]\n',
            "log.0.patterns",
        ),
        # Each pattern compiles alone; tried as one expression, the second names the first's group again.
        (
            '[[log]]\nkind = "x"\nabout = "self"\nrole = "cause"\nphrase = "crashes"\n'
            "patterns = ['(?P<code>E\\d+) failed', 'failed with (?P<code>\\d+)']\n",
            "log.0.patterns: Value error, the patterns are not one regular expression together: redefinition of group",
        ),
        ('[[event]]\nkind = "Bad-Kind"\nreasons = ["X"]\nrole = "cause"\nphrase = "crashes"\n', "event.0.kind"),
        (
            '[[log]]\nkind = "x"\nabout = "elsewhere"\nrole = "cause"\nphrase = "crashes"\npatterns = ["a"]\n',
            "log.0.about",
        ),
        ("[thresholds]\nrestarts_min = 0\n", "thresholds.restarts_min"),
        ("[thresholds]\ndisk_full = 1.5\n", "thresholds.disk_full"),
        ("version = 2\n", "version: Value error, version 2 is not supported"),
        ("version = 1\n[[log]\n", "not TOML"),
    ],
)
def test_a_malformed_file_is_one_error_naming_the_file_and_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, field: str
) -> None:
    path = operator_file(tmp_path, text)
    with pytest.raises(RulesError) as raised:
        load_rules(str(path))
    assert str(raised.value).startswith(f"{path}: ")
    assert field in str(raised.value)
    monkeypatch.setenv(RULES_FILE_ENV, str(path))
    with pytest.raises(RulesError) as again:
        current_rules()
    assert str(again.value) == str(raised.value)


def test_a_missing_file_is_a_rules_error(tmp_path: Path) -> None:
    path = tmp_path / "absent.toml"
    with pytest.raises(RulesError) as raised:
        load_rules(str(path))
    assert str(raised.value) == f"{path}: No such file or directory"


FLAGGED_RULES = """\
version = 1

[[log]]
kind = "ledger_lock"
about = "self"
role = "cause"
strength = 3
phrase = "waits on a ledger lock"
patterns = [
    "(?i)ledger lock wait (?:exceeded|timed out)",
    '''(?x) deadlock \\s+ detected   # the database's own words
    \\s+ on \\s+ ledger''',
    "(?s)(?m)journal stalled.+retrying$",
]
"""


@pytest.mark.parametrize(
    "line",
    [
        "ERROR LEDGER LOCK WAIT EXCEEDED for account 7731",
        "ERROR Ledger lock wait timed out after 30s",
        "ERROR deadlock   detected on ledger batch 12",
        "ERROR journal stalled (segment 4), retrying",
    ],
)
def test_a_pattern_with_leading_inline_flags_matches_as_it_does_alone(tmp_path: Path, line: str) -> None:
    """Python takes global inline flags ("(?i)") only at the start of a whole expression, and a rule's patterns are
    tried as one: each pattern's leading flags apply to it alone, and a verbose pattern's comment ends at its line.
    The file loads, and a line only one of the patterns matches, whatever its case, is the rule's finding."""
    rules = load_rules(str(operator_file(tmp_path, FLAGGED_RULES)))
    (rule,) = [r for r in rules.log if r.kind == "ledger_lock"]
    alone = [re.search(pattern, line) for pattern in rule.patterns]
    assert sum(match is not None for match in alone) == 1
    matched = rule.compiled.search(line)
    assert matched is not None and matched.group(0) == next(m for m in alone if m is not None).group(0)
    found = log_findings(log_lines(pod_logs("ledger-api-5d8f7c6b9d-k2m4p", line)), ["ledger-api"], rules=rules)
    assert one(found, "ledger_lock").service == "ledger-api"


def test_flags_stay_with_their_own_pattern(tmp_path: Path) -> None:
    """A pattern without flags is not made case-insensitive by its neighbour's "(?i)"."""
    rules = load_rules(str(operator_file(tmp_path, FLAGGED_RULES.replace("(?s)(?m)journal", "journal"))))
    (rule,) = [r for r in rules.log if r.kind == "ledger_lock"]
    assert rule.compiled.search("journal stalled (segment 4), retrying") is not None
    assert rule.compiled.search("JOURNAL STALLED (segment 4), retrying") is None
    assert rule.compiled.search("deadlock detected on ledger") is not None
    assert rule.compiled.search("DEADLOCK DETECTED ON LEDGER") is None
