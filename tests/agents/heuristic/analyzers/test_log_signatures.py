"""Log signatures: the rules file's ``log`` rules over pod logs and Loki lines, the host a failing line names
(``named_host``), NXDOMAIN of a name no workload has, resolver failures, and lines no rule explains.

The excerpts are real library texts: Go's resolver (``lookup x on 10.96.0.10:53: no such host``), glibc through
Python (``[Errno -2] Name or service not known``, ``[Errno -3] Temporary failure in name resolution``), Node
(``getaddrinfo ENOTFOUND`` / ``EAI_AGAIN``), Java (``java.net.UnknownHostException``). Every finding binds the
exact substring of the line it quotes (R-C-1, R-GK-5) and states only what it holds (R-V-1, R-V-4).
"""

from __future__ import annotations

import pytest

from diagnosis_server.agents.heuristic.analyzers.signatures import ServiceNames, log_findings, named_host, self_excerpt
from diagnosis_server.agents.heuristic.findings import Finding, Role
from diagnosis_server.agents.heuristic.observations import log_lines

from ._checks import assert_sound, one
from ._shapes import loki, pod_logs

CALLER = "grain-api-7d9f8c6b5d-q2w8z"
KNOWN = ["grain-api", "orchard-db", "hay-baler", "silo-gateway"]
NAMES = ServiceNames(KNOWN)
DOES_NOT_EXIST = "calls a host name that does not exist"


def findings_of(*lines: str, pod: str = CALLER, known: list[str] = KNOWN) -> list[Finding]:
    obs = pod_logs(pod, *lines)
    found = log_findings(log_lines(obs), known)
    assert_sound(found, [obs])
    return found


@pytest.mark.parametrize(
    ("message", "host"),
    [
        ("dial tcp: lookup orchard-db.greenfield.svc.cluster.local on 10.96.0.10:53: no such host", "orchard-db"),
        ("dial tcp orchard-db.greenfield.svc:5432: connect: connection refused", "orchard-db"),
        ("dial tcp orchard-db.greenfield:5432: connect: connection refused", "orchard-db"),  # <service>.<namespace>
        ("FATAL: could not connect: postgresql://harvest@orchard-db:5432/harvest refused", "orchard-db"),
        ("lookup orchard-db.internal.example: no such host", "orchard-db"),  # a known workload's first label
        ("dial tcp: lookup api.partner.example on 10.96.0.10:53: no such host", "api.partner.example"),
        (
            'Post "https://hooks.partner-chat.example/services/T0/B1": context deadline exceeded',
            "hooks.partner-chat.example",
        ),
        ("Connection to localhost:5432 refused", ""),
        ("dial tcp 10.96.14.2:8080: connect: connection refused", ""),
        ('{"@timestamp":"2025-02-11T06:52:01.123Z","level":"error","message":"connection refused"}', ""),
        ("lookup grain-api on 10.96.0.10:53: no such host", ""),  # the line's own workload is no target
        # libpq 14+: the host after "server at"; a Unix socket names none.
        (
            'connection to server at "orchard-db.greenfield.svc" (10.96.1.2), port 5432 failed: Connection refused',
            "orchard-db",
        ),
        ('connection to server on socket "/var/run/postgresql/.s.PGSQL.5432" failed: No such file or directory', ""),
    ],
)
def test_named_host(message: str, host: str) -> None:
    """In-cluster names are their workload; external hosts stay whole; addresses, localhost, the caller itself and
    JSON keys such as "@timestamp" are no host."""
    assert named_host(message, "grain-api", NAMES) == host


@pytest.mark.parametrize(
    ("message", "host"),
    [
        # An application's own word "lookup" names no host.
        ("session lookup failed: connect ECONNREFUSED 10.100.12.34:6379", ""),
        ("ERROR token lookup failed for user 8812: upstream returned 503", ""),
        ("WARN cache lookup miss ratio 0.93 over the last minute", ""),
        ("price lookup timed out after 5000ms", ""),
        # Go's resolver: "lookup HOST on IP:53", "lookup HOST: <resolver error>".
        ("dial tcp: lookup weather-feed on 10.96.0.10:53: no such host", "weather-feed"),
        ("dial tcp: lookup weather-feed: no such host", "weather-feed"),
        ("dial tcp: lookup weather-feed: i/o timeout", "weather-feed"),
        ("lookup weather-feed on [fd00:10:96::a]:53: server misbehaving", "weather-feed"),
        # A dotted host, or a known workload's bare name, after "lookup".
        ("bale lookup hay-baler failed after 3 attempts", "hay-baler"),
        ("lookup payments.partner.example failed", "payments.partner.example"),
    ],
)
def test_lookup_names_a_host_only_in_the_resolvers_form(message: str, host: str) -> None:
    """``lookup <h>`` is a host only as a resolver writes it, or when <h> has a dot or is a known workload."""
    assert named_host(message, "grain-api", NAMES) == host


def test_a_session_lookup_line_is_not_a_call_to_a_workload_named_failed() -> None:
    """Node's ioredis through an app's own words: the refused call names an address, not a host "failed"."""
    (finding,) = findings_of("ERROR session lookup failed: connect ECONNREFUSED 10.100.12.34:6379")
    assert (finding.service, finding.blamed) == ("grain-api", "")
    assert "failed fail" not in finding.statement and "calls to failed" not in finding.statement


@pytest.mark.parametrize(
    ("line", "quoted"),
    [
        (
            "1:M 28 Nov 2025 20:19:00.951 # Bad file format reading the append only file appendonly.aof.3.incr.aof: "
            "make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>",
            "Bad file format reading the append only file appendonly.aof.3.incr.aof",
        ),
        (
            "1:M 02 Oct 2025 03:14:00.120 # Unexpected end of file reading the append only file appendonly.aof. You "
            "can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>.",
            "Unexpected end of file reading the append only file",
        ),
        (
            "1:M 02 Oct 2025 03:14:00.120 # Short read or OOM loading DB. Unrecoverable error, aborting now.",
            "Short read or OOM loading DB. Unrecoverable error, aborting now.",
        ),
        ("2025-10-02 03:14:00.133 UTC [28] LOG:  invalid checkpoint record", "invalid checkpoint record"),
        (
            "2025-10-02 03:14:00.133 UTC [28] PANIC:  could not locate a valid checkpoint record",
            "could not locate a valid checkpoint record",
        ),
        (
            "2025-10-02 03:14:00.090 UTC [1] FATAL:  database files are incompatible with server",
            "database files are incompatible with server",
        ),
        (
            "2025-10-02T03:14:00.512Z 0 [ERROR] [MY-011906] [InnoDB] InnoDB: Database page corruption on disk or a "
            "failed file read of tablespace orders/order_items page [page id: space=42, page number=7].",
            "InnoDB: Database page corruption on disk or a failed file read",
        ),
    ],
)
def test_a_data_store_that_cannot_load_its_files_at_start_is_its_own_cause(line: str, quoted: str) -> None:
    """Redis, PostgreSQL and MySQL at start-up, finding their files on disk unreadable: a cause about the store
    itself, quoting what it said (R-C-1); never about a host the line happens to name."""
    (finding,) = [f for f in findings_of(line, pod="orchard-db-0") if f.kind == "data_files"]
    assert (finding.role, finding.service, finding.strength) == (Role.CAUSE, "orchard-db", 4)
    assert finding.statement == f'orchard-db cannot load its files from disk ("{quoted}")'


def test_a_checkpoint_in_an_ordinary_log_line_is_no_damaged_file() -> None:
    found = findings_of("2025-10-02 03:20:00.133 UTC [61] LOG:  checkpoint complete: wrote 812 buffers (5.0%)")
    assert all(f.kind != "data_files" for f in found)


SEEN_IN = {"orchard-db": ["greenfield"], "weather-feed": ["mill-v2"], "grain-api": ["greenfield"]}
PLACED = ServiceNames([*KNOWN, "weather-feed"], SEEN_IN)


@pytest.mark.parametrize(
    ("message", "host"),
    [
        # In the namespace the workload runs in: the workload.
        ("dial tcp orchard-db.greenfield.svc:5432: connect: connection refused", "orchard-db"),
        ("java.net.UnknownHostException: orchard-db.greenfield.svc.cluster.local", "orchard-db"),
        # In a namespace it does not run in: a Service name that does not exist, kept whole.
        ("java.net.UnknownHostException: weather-feed.mill.svc.cluster.local", "weather-feed.mill.svc.cluster.local"),
        ("dial tcp: lookup orchard-db.barn.svc on 10.96.0.10:53: no such host", "orchard-db.barn.svc"),
        # A workload whose namespace nothing showed: mapped by its first label, as before.
        ("dial tcp hay-baler.anywhere.svc:8080: connect: connection refused", "hay-baler"),
    ],
)
def test_a_service_host_maps_to_its_workload_only_in_a_namespace_it_runs_in(message: str, host: str) -> None:
    assert named_host(message, "grain-api", PLACED) == host


def test_unknown_host_of_a_service_in_another_namespace_is_the_callers_cause() -> None:
    """Java's UnknownHostException (the library does not say whether the name exists) for
    ``weather-feed.mill.svc.cluster.local`` while weather-feed runs in mill-v2: the caller is configured with a
    Service name that does not exist there. The cause is the caller's, never "weather-feed cannot be resolved"."""
    line = (
        '{"@timestamp":"2025-02-11T06:52:01.123Z","level":"ERROR","message":"forecast refresh failed","stack_trace":'
        '"org.springframework.web.client.ResourceAccessException: I/O error on GET request for \\"http://weather-feed'
        '.mill.svc.cluster.local:8080/v1/forecast\\": weather-feed.mill.svc.cluster.local\\nCaused by: '
        'java.net.UnknownHostException: weather-feed.mill.svc.cluster.local\\n"}'
    )
    obs = pod_logs(CALLER, line)
    found = log_findings(log_lines(obs), [*KNOWN, "weather-feed"], namespaces=SEEN_IN)
    assert_sound(found, [obs])
    dns = one(found, "dns")
    assert (dns.service, dns.role, dns.blamed) == ("grain-api", Role.CAUSE, "")
    assert dns.statement.startswith(f"grain-api {DOES_NOT_EXIST} (")
    assert "weather-feed.mill.svc.cluster.local" in dns.statement
    # The same line while weather-feed runs in mill: weather-feed cannot be resolved.
    here = log_findings(log_lines(obs), [*KNOWN, "weather-feed"], namespaces={"weather-feed": ["mill"]})
    assert one(here, "dns").statement.startswith("weather-feed cannot be resolved (grain-api calls to it fail")


@pytest.mark.parametrize(
    "line",
    [
        "2025/02/11 06:52:01 ERROR quote failed: dial tcp: lookup weather-feed.greenfield.svc.cluster.local on "
        "10.96.0.10:53: no such host",
        "Error: getaddrinfo ENOTFOUND weather-feed.greenfield.svc.cluster.local",
    ],
)
def test_nxdomain_of_a_name_no_workload_has_is_the_callers_cause(line: str) -> None:
    """The name does not exist and no known workload is called so: the caller is configured with a name that does
    not exist. The cause is about the caller, quoting the resolver's answer."""
    (finding,) = findings_of(line)
    assert (finding.kind, finding.role, finding.service, finding.strength) == ("dns", Role.CAUSE, "grain-api", 3)
    assert finding.statement.startswith(f"grain-api {DOES_NOT_EXIST} (")
    assert finding.blamed == ""
    assert finding.detail in line


def test_python_nxdomain_is_one_finding_about_the_caller() -> None:
    """The library says the name does not exist ("Name or service not known"): one dns cause, the caller's."""
    line = (
        "ERROR requests.exceptions.ConnectionError: HTTPConnectionPool(host='weather-feed', port=80): Max retries "
        'exceeded with url: /v1/forecast (Caused by NameResolutionError("<urllib3.connection.HTTPConnection object '
        "at 0x7f3b2c1d5e90>: Failed to resolve 'weather-feed' ([Errno -2] Name or service not known)\"))"
    )
    dns = [f for f in findings_of(line) if f.kind == "dns"]
    assert [(f.service, f.role) for f in dns] == [("grain-api", Role.CAUSE)]
    assert DOES_NOT_EXIST in dns[0].statement


def test_nxdomain_of_a_known_workloads_name_is_about_that_workload() -> None:
    """``no such host`` for ``orchard-db.greenfield.svc.cluster.local``: orchard-db cannot be resolved (its Service
    is gone), stated with the caller's failing call; the workload's name is bound as a substring of the line."""
    line = "ERROR dial tcp: lookup orchard-db.greenfield.svc.cluster.local on 10.96.0.10:53: no such host"
    (finding,) = findings_of(line)
    assert (finding.kind, finding.role, finding.service) == ("dns", Role.CAUSE, "orchard-db")
    assert finding.statement.startswith("orchard-db cannot be resolved (grain-api calls to it fail with")
    assert DOES_NOT_EXIST not in finding.statement
    assert [b.matched_text for b in finding.bindings][:2] == ["grain-api", "orchard-db"]


@pytest.mark.parametrize(
    "line",
    [
        "ERROR socket.gaierror: [Errno -3] Temporary failure in name resolution while calling weather-feed",
        "ERROR requests.exceptions.ConnectionError: HTTPConnectionPool(host='weather-feed', port=80): Max retries "
        'exceeded with url: / (Caused by NameResolutionError("<urllib3.connection.HTTPConnection object at '
        "0x7f3b2c1d5e90>: Failed to resolve 'weather-feed' ([Errno -3] Temporary failure in name resolution)\"))",
        "Error: getaddrinfo EAI_AGAIN weather-feed.greenfield.svc.cluster.local",
        'level=error msg="dial tcp: lookup weather-feed on 10.96.0.10:53: read udp 10.244.3.27:41234->10.96.0.10:53: '
        'i/o timeout"',
        "ERROR java.net.UnknownHostException: weather-feed.mill",
        "curl: (6) Could not resolve host: weather-feed",
        "dial tcp: lookup weather-feed on 10.96.0.10:53: server misbehaving",
    ],
)
def test_resolver_failures_never_say_the_name_does_not_exist(line: str) -> None:
    """When resolution itself fails (a timeout, SERVFAIL, a library that does not say which), nothing says whether
    the name exists: the finding is that the name cannot be resolved, never "does not exist"."""
    findings = findings_of(line)
    dns = one(findings, "dns")
    assert all(DOES_NOT_EXIST not in f.statement for f in findings)
    if dns.service == "weather-feed":  # the line names the host: a cause about it
        assert dns.role is Role.CAUSE and dns.statement.startswith("weather-feed cannot be resolved (grain-api calls")
    else:  # it names none: the caller's calls fail
        assert (dns.service, dns.role) == ("grain-api", Role.SUPPORT)
        assert dns.statement.startswith("grain-api calls fail (")


def test_a_json_line_with_an_at_timestamp_key_blames_no_host() -> None:
    """A Logstash-style JSON line: "@timestamp" is a key, not ``user@host``; with no host named, the caller's calls
    fail (support), and no finding is about "timestamp"."""
    line = (
        '{"@timestamp":"2025-02-11T06:52:01.123Z","@version":"1","level":"error","logger":"grain.quotes",'
        '"message":"upstream call failed: connection refused"}'
    )
    (finding,) = findings_of(line)
    assert (finding.kind, finding.role, finding.service, finding.blamed) == ("refused", Role.SUPPORT, "grain-api", "")
    assert finding.statement == 'grain-api calls fail ("connection refused")'
    nxdomain = '{"@timestamp":"2025-02-11T06:52:01.123Z","level":"error","message":"resolve failed: no such host"}'
    (unnamed,) = findings_of(nxdomain)
    assert unnamed.service == "grain-api" and "timestamp" not in unnamed.statement
    assert DOES_NOT_EXIST not in unnamed.statement


def test_a_refused_call_to_a_known_workload_is_a_link_to_it() -> None:
    line = (
        'ERROR bale lookup failed: Get "http://hay-baler.greenfield.svc:8080/v1/bales": dial tcp 10.96.14.2:8080: '
        "connect: connection refused"
    )
    (link,) = findings_of(line)
    assert (link.kind, link.role, link.service, link.blamed) == ("refused", Role.LINK, "grain-api", "hay-baler")
    assert (
        link.statement
        == 'grain-api calls to hay-baler fail with "dial tcp 10.96.14.2:8080: connect: connection refused"'
    )


def test_a_longer_name_holding_a_workloads_name_is_not_that_workload() -> None:
    """``hay-baler-cache`` is not ``hay-baler``: whole names only; the unknown host is blamed whole."""
    (link,) = findings_of("ERROR dial tcp hay-baler-cache:6379: connect: connection refused")
    assert link.blamed == "hay-baler-cache"


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("ERROR Error: connect ECONNREFUSED 10.96.3.4:5432", "refused"),
        ('level=error msg="quote fetch failed" err="context deadline exceeded"', "timeout"),
        ("ERROR java.net.SocketTimeoutException: Read timed out", "timeout"),
    ],
)
def test_target_rules_on_a_line_naming_no_target_are_the_callers_failing_calls(line: str, kind: str) -> None:
    """A refused or timed-out call whose line names no host: "<svc> calls fail (...)", support, about the caller."""
    (finding,) = findings_of(line)
    assert (finding.kind, finding.role, finding.service, finding.blamed) == (kind, Role.SUPPORT, "grain-api", "")
    assert finding.statement.startswith("grain-api calls fail (")


@pytest.mark.parametrize(
    ("line", "blamed"),
    [
        ("ERROR psycopg2.OperationalError: could not connect to server: Connection refused", ""),
        (
            "ERROR aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host weather-feed:8080 "
            "ssl:default [Connection refused]",
            "weather-feed",
        ),
    ],
)
def test_connect_to_names_the_host_after_it_not_a_word(line: str, blamed: str) -> None:
    """libpq (before PostgreSQL 14) writes "could not connect to server: ..."; aiohttp "Cannot connect to host
    <host>:<port> ...": "server" and "host" are words of the message, not hosts."""
    (finding,) = findings_of(line)
    assert (finding.kind, finding.blamed) == ("refused", blamed)


def test_timeouts_count_only_on_error_lines() -> None:
    """The timeout rule is ``errors_only``: an INFO line about a retried deadline is no failure."""
    info = 'level=info msg="retrying quote fetch" upstream=silo-gateway err="context deadline exceeded"'
    assert findings_of(info) == []
    (link,) = findings_of(info.replace("level=info", "level=error"))
    assert (link.kind, link.role, link.blamed) == ("timeout", Role.LINK, "silo-gateway")


def test_a_gateway_timeout_status_is_a_timeout() -> None:
    (link,) = findings_of("ERROR upstream silo-gateway answered 504 Gateway Timeout for GET /v1/silos")
    assert (link.kind, link.role, link.blamed) == ("timeout", Role.LINK, "silo-gateway")


@pytest.mark.parametrize(
    ("line", "kind", "role"),
    [
        ('Exception in thread "main" java.lang.OutOfMemoryError: Java heap space', "oom", Role.CAUSE),
        (
            "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
            "oom",
            Role.CAUSE,
        ),
        ("OSError: [Errno 28] No space left on device: '/var/spool/grain/b-0192.parquet'", "disk_full", Role.CAUSE),
        ("KeyError: 'GRAIN_QUOTES_DSN'", "missing_config", Role.CAUSE),
        ("ModuleNotFoundError: No module named 'grain_quotes.v2'", "missing_module", Role.CAUSE),
        ("panic: runtime error: invalid memory address or nil pointer dereference", "panic", Role.CAUSE),
        ("FATAL:  sorry, too many clients already", "db_slots", Role.SUPPORT),
        (
            "HikariPool-1 - Connection is not available, request timed out after 30000ms.",
            "app_pool",
            Role.SUPPORT,
        ),
    ],
)
def test_self_rules_are_about_the_lines_own_workload(line: str, kind: str, role: Role) -> None:
    findings = findings_of(line)
    finding = one(findings, kind)
    assert (finding.role, finding.service, finding.blamed) == (role, "grain-api", "")
    assert finding.detail and finding.detail in line
    assert self_excerpt(line) is not None


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("ERROR write /var/spool/grain/batch-0192.parquet: no space left on device", "disk_full"),
        ('level=error msg="resize failed" err="fork/exec /usr/bin/convert: cannot allocate memory"', "oom"),
    ],
)
def test_go_errno_texts_in_lower_case_are_their_rule(line: str, kind: str) -> None:
    """Go's syscall errors (ENOSPC "no space left on device", ENOMEM "cannot allocate memory") are lower case."""
    assert one(findings_of(line), kind).role is Role.CAUSE


def test_an_error_line_no_rule_explains_is_a_symptom_quoted_by_its_start() -> None:
    line = "ERROR failed to settle quote batch 8812: ledger rejected 14 of 40 entries " + "(invariant violated) " * 8
    (finding,) = findings_of(line)
    assert (finding.kind, finding.role, finding.service) == ("error_log", Role.SYMPTOM, "grain-api")
    quoted = finding.bindings[-1].matched_text
    assert line.startswith(quoted) and len(quoted) <= 120


@pytest.mark.parametrize(
    ("line", "slow"),
    [
        ("INFO quote served path=/v1/quote status=200 took 3520ms", True),
        ('INFO {"msg":"batch done","duration":"2.5s"}', True),
        ("INFO quote served path=/v1/quote status=200 took 150ms", False),
    ],
)
def test_slow_calls_are_read_at_any_level(line: str, slow: bool) -> None:
    """A call's duration above ``slow_call_ms`` (2000 ms) is a symptom even on an INFO line."""
    findings = findings_of(line)
    if slow:
        assert one(findings, "slow_calls").role is Role.SYMPTOM
    else:
        assert findings == []


def test_a_line_repeated_is_one_finding() -> None:
    line = "ERROR dial tcp hay-baler:8080: connect: connection refused"
    assert len(findings_of(line, line.replace("ERROR", "ERROR retry 2:"))) == 1


def test_loki_lines_bind_into_the_streams_answer() -> None:
    """Loki lines: the service is the stream's ``app`` label (or the workload of its ``pod`` label, bound as part of
    it); the message is ``/data/result/<s>/values/<v>/1``; the time is the value's nanoseconds."""
    obs = loki(
        (
            {"app": "grain-api", "namespace": "greenfield"},
            [(3, "ERROR dial tcp hay-baler:8080: connect: connection refused")],
        ),
        (
            {"pod": "silo-gateway-6b8d9c7f5d-p4q7r", "level": "error"},
            [(4, "x509: certificate has expired or is not yet valid: hay-baler")],
        ),
    )
    findings = log_findings(log_lines(obs), KNOWN)
    assert_sound(findings, [obs])
    link = one(findings, "refused")
    assert link.bindings[0].raw_path == "/data/result/0/stream/app"
    assert link.bindings[-1].raw_path == "/data/result/0/values/0/1"
    assert link.onset is not None and link.onset.strftime("%H:%M") == "06:43"
    expired = one(findings, "tls_expired")
    assert (expired.role, expired.service) == (Role.CAUSE, "hay-baler")
    assert expired.bindings[0].raw_path == "/data/result/1/stream/pod"
    assert expired.bindings[0].matched_text == "silo-gateway"
