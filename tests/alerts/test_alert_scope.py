"""What an alert group asks and where: the question and subjects, the window, the environment its labels map to,
the dedupe key, the notification formats, and the settings that hold the notification URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import run_pb2
from diagnosis_server.alerts.notify import slack_message, webhook_message
from diagnosis_server.alerts.payload import parse_webhook
from diagnosis_server.alerts.scope import dedupe_key, scope_of
from diagnosis_server.api.server import StartupError, check_http_bind_policy
from diagnosis_server.settings import SettingsError, load_settings
from tests.support.api import ApiFactory

from .payloads import alert, notification
from .test_alert_webhook import finished, post


def firing(**labels: str) -> pb.Alert:
    found = pb.Alert(labels={"alertname": "KubeJobFailed", **labels}, fingerprint="ab12", status="firing")
    found.starts_at.FromJsonString("2026-12-02T10:00:00Z")
    return found


def test_the_question_names_the_subjects_in_a_fixed_order_and_the_annotations() -> None:
    group = parse_webhook(notification())
    question = scope_of(group.group_key, group.firing, lookback_s=600, now=1_800_000_000).question
    assert question.startswith(
        "Why is the alert KubePodCrashLooping firing for namespace shop, pod checkout-api-7f9c6d8b5-tr6zn, "
        "container checkout-api? Summary: Pod shop/checkout-api-7f9c6d8b5-tr6zn is crash looping. Description: "
    )
    assert "severity" not in question and "cluster" not in question


def test_subjects_not_shared_by_the_group_are_each_alerts() -> None:
    alerts = [firing(namespace="batch", job_name="nightly-report"), firing(namespace="batch", job_name="backfill")]
    alerts[1].fingerprint = "cd34"
    question = scope_of("g", alerts, lookback_s=0, now=1_800_000_000).question
    assert "for namespace batch, job_name backfill, nightly-report?" in question
    assert question.endswith("(2 alerts firing.)")


def test_the_window_starts_a_lookback_before_the_earliest_start() -> None:
    early, late = firing(), firing()
    late.starts_at.FromJsonString("2026-12-02T11:00:00Z")
    trigger = scope_of("g", [late, early], lookback_s=1800, now=1_796_210_000).trigger
    assert trigger.window_start.ToJsonString() == "2026-12-02T09:30:00Z"
    assert trigger.window_end.ToSeconds() == 1_796_210_000
    assert trigger.alert.starts_at.ToJsonString() == "2026-12-02T10:00:00Z"


def test_the_dedupe_key_changes_with_the_group_the_alerts_and_their_starts_only() -> None:
    one = firing()
    restarted = firing()
    restarted.starts_at.FromJsonString("2026-12-02T10:05:00Z")
    relabelled = firing(pod="other")  # same fingerprint, same start: the same alert as Alertmanager sees it
    assert dedupe_key("g", [one]) == dedupe_key("g", [relabelled])
    assert dedupe_key("g", [one]) != dedupe_key("g", [restarted])
    assert dedupe_key("g", [one]) != dedupe_key("h", [one])


def test_slack_text_cannot_become_a_link_or_a_mention() -> None:
    run = run_pb2.DiagnosisRun(run_id="run-1", status=run_pb2.RUN_STATUS_SUCCESS)
    run.trigger.alert.alertname = "<!channel>"
    run.answer.summary = "<https://evil.example|click> & more"
    run.answer.confirmed_facts.add(text="<@U123> restarted")
    message = slack_message(run, "http://127.0.0.1:8080/runs/run-1")
    text = str(message["blocks"])
    assert "<!channel>" not in text and "<https://evil" not in text and "<@U123>" not in text
    assert "&lt;!channel&gt;" in text and "&amp; more" in text
    assert "<http://127.0.0.1:8080/runs/run-1|run-1>" in text
    assert webhook_message(run, "u")["links"] == {"run": "u"}


def test_notify_urls_come_from_a_variable_or_a_file_never_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DIAGNOSIS_NOTIFY_WEBHOOK_URL", "DIAGNOSIS_NOTIFY_SLACK_WEBHOOK_URL"):
        monkeypatch.delenv(name, raising=False)
    secret = tmp_path / "slack-url"
    secret.write_text("https://hooks.slack.example/services/T0/B0/s3cretpart\n")
    settings = load_settings(notify_slack_webhook_url_file=secret, notify_webhook_url="http://127.0.0.1:9/hook")
    assert settings.notify_urls() == {
        "webhook": "http://127.0.0.1:9/hook",
        "slack": "https://hooks.slack.example/services/T0/B0/s3cretpart",
    }
    assert "s3cretpart" not in repr(settings)
    with pytest.raises(SettingsError, match="set one, not both"):
        load_settings(notify_slack_webhook_url_file=secret, notify_slack_webhook_url="https://x.example/")
    with pytest.raises(SettingsError) as bad:
        load_settings(notify_webhook_url="ftp://user:s3cret@host/")
    assert "s3cret" not in str(bad.value)


def test_the_http_server_binds_non_loopback_only_with_tokens() -> None:
    check_http_bind_policy("127.0.0.1:8080", authenticated=False)
    check_http_bind_policy("", authenticated=False)
    check_http_bind_policy("0.0.0.0:8080", authenticated=True)
    with pytest.raises(StartupError, match="DIAGNOSIS_HTTP_ADDRESS"):
        check_http_bind_policy("0.0.0.0:8080", authenticated=False)


async def test_an_alert_goes_to_the_environment_its_labels_map_to(api_factory: ApiFactory, tmp_path: Path) -> None:
    environments = tmp_path / "environments.toml"
    environments.write_text(
        '[environments.staging]\ndefault = true\n\n[environments.prod-eu]\nalert_labels = { cluster = "prod-eu" }\n'
    )
    api = await api_factory(http_address="127.0.0.1:0", environments_file=environments)
    mapped = (await post(api, notification())).json()["runs"][0]["run_id"]
    other = alert(labels={"alertname": "KubePodCrashLooping", "cluster": "dev"}, fingerprint="99")
    unmapped = (await post(api, notification(other, group_key="{}:{x}"))).json()["runs"][0]["run_id"]
    assert (await finished(api, mapped)).environment == "prod-eu"
    assert (await finished(api, unmapped)).environment == "staging"


def test_the_alert_settings_default_as_documented(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DIAGNOSIS_HTTP_ADDRESS", "DIAGNOSIS_ALERT_LOOKBACK_S", "DIAGNOSIS_ALERT_DEDUPE_S"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings()
    assert (settings.http_address, settings.alert_lookback_s, settings.alert_dedupe_s) == ("127.0.0.1:8080", 1800, 3600)
    monkeypatch.setenv("DIAGNOSIS_HTTP_ADDRESS", "")
    monkeypatch.setenv("DIAGNOSIS_ALERT_DEDUPE_S", "60")
    assert (load_settings().http_address, load_settings().alert_dedupe_s) == ("", 60)
