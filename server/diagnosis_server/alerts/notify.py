"""Posting an alert-started run's answer where the team is: a JSON webhook and a Slack incoming webhook.

Each notification is retried with backoff (connection errors, 429 and 5xx); one that still fails is returned
as a failed ``RunNotification`` (recorded on the run) and logged, never raised: a notification cannot lose
or fail its run. The URLs hold secrets: no message, log line or record names them.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass

import httpx2
import structlog

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.conversions import JsonObject, JsonValue, enum_short_name
from diagnosis_server.store.records import status_name

log = structlog.get_logger(__name__)

RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
MAX_FACTS = 10
MAX_TEXT = 2900  # a Slack section's text is at most 3,000 characters


@dataclass(frozen=True, slots=True)
class NotifyPolicy:
    attempts: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    timeout_s: float = 10.0

    def delay(self, failures: int) -> float:
        """Full jitter over an exponential ceiling."""
        return random.uniform(0, min(self.max_delay_s, self.base_delay_s * 2 ** max(failures - 1, 0)))


def verdict_name(verdict: int) -> str:
    return "NONE" if not verdict else enum_short_name(contracts_pb2.Verdict, verdict)


def webhook_message(run: run_pb2.DiagnosisRun, run_url: str) -> JsonObject:
    """The generic webhook's JSON: the run, its answer, its alert group and a link to it."""
    alert = run.trigger.alert
    return {
        "run_id": run.run_id,
        "status": status_name(run.status),
        "verdict": verdict_name(run.verdict),
        "answer_text": run.answer_text,
        "alert": {
            "group_key": alert.group_key,
            "labels": dict(sorted(alert.labels.items())),
            "annotations": dict(sorted(alert.annotations.items())),
        },
        "links": {"run": run_url},
    }


def slack_escape(text: str) -> str:
    """Slack's mrkdwn control characters as its entities (a recorded text never becomes a link or mention)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _clip(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fact_line(item: contracts_pb2.ComposedItem) -> str:
    sources = sorted({f"{quote.tool_name} {quote.raw_path}".strip() for quote in item.evidence})
    line = f"• {slack_escape(item.text)}"
    if sources:
        line += " _(" + slack_escape("; ".join(sources[:3])) + ")_"
    return line


def slack_message(run: run_pb2.DiagnosisRun, run_url: str) -> JsonObject:
    """A Slack incoming-webhook message: the headline, the confirmed facts with their sources, the verdict,
    a link to the run (Block Kit, with ``text`` as the notification's fallback)."""
    alertname = run.trigger.alert.alertname or "alert"
    headline = run.answer.summary or run.failure_reason or status_name(run.status)
    verdict = verdict_name(run.verdict)
    facts = [_fact_line(item) for item in run.answer.confirmed_facts[:MAX_FACTS]]
    blocks: list[JsonValue] = [
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": _clip(f"*{slack_escape(alertname)}*: {slack_escape(headline)}")},
        }
    ]
    if facts:
        body = "*Confirmed facts*\n" + "\n".join(facts)
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _clip(body)}})
    link = f"<{run_url}|{slack_escape(run.run_id)}>" if run_url else slack_escape(run.run_id)
    blocks.append(
        {
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": f"Verdict *{verdict}* · {status_name(run.status)} · run {link}"}],
        }
    )
    return {"text": _clip(f"{alertname}: {headline} (verdict {verdict})"), "blocks": blocks}


class _DropSecretUrls(logging.Filter):
    """httpx2 logs each request's URL (``HTTP Request: POST <url>``): never one of these."""

    def __init__(self, urls: list[str]) -> None:
        super().__init__()
        self._urls = urls

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        return not any(url in str(arg) for arg in args for url in self._urls)


class Notifier:
    """Sends a finished run's notifications to each configured channel (``webhook``, ``slack``)."""

    def __init__(
        self,
        urls: Mapping[str, str],
        *,
        run_url: str,
        policy: NotifyPolicy | None = None,
        client: httpx2.AsyncClient | None = None,
    ) -> None:
        self._urls = dict(urls)
        self._run_url = run_url.rstrip("/")
        self._policy = policy or NotifyPolicy()
        self._client = client or httpx2.AsyncClient(timeout=self._policy.timeout_s, follow_redirects=False)
        self._log_filter = _DropSecretUrls(list(self._urls.values()))
        logging.getLogger("httpx2").addFilter(self._log_filter)

    def set_run_url(self, run_url: str) -> None:
        """The viewer's base URL the links point to (known once the HTTP server has its port)."""
        self._run_url = run_url.rstrip("/")

    @property
    def enabled(self) -> bool:
        return bool(self._urls)

    def run_link(self, run_id: str) -> str:
        return f"{self._run_url}/runs/{run_id}" if self._run_url else ""

    async def notify(self, run: run_pb2.DiagnosisRun) -> list[run_pb2.RunNotification]:
        """One outcome per channel, delivered or not; never raises (but for cancellation)."""
        link = self.run_link(run.run_id)
        messages = {"webhook": webhook_message, "slack": slack_message}
        sends = [self._send(channel, url, messages[channel](run, link)) for channel, url in self._urls.items()]
        return list(await asyncio.gather(*sends))

    async def _send(self, channel: str, url: str, message: JsonObject) -> run_pb2.RunNotification:
        policy = self._policy
        error = ""
        attempt = 0
        for attempt in range(1, policy.attempts + 1):
            retry = True
            try:
                response = await self._client.post(url, json=message)
                if response.is_success:
                    error = ""
                    break
                error = f"HTTP {response.status_code}"
                retry = response.status_code in RETRY_STATUSES
            except httpx2.TimeoutException:
                error = "timed out"
            except httpx2.HTTPError as exc:
                # The exception's text may quote the URL: only its kind is kept.
                error = f"connection failed ({type(exc).__name__})"
            if not retry or attempt == policy.attempts:
                break
            await asyncio.sleep(policy.delay(attempt))
        outcome = run_pb2.RunNotification(channel=channel, delivered=not error, attempts=attempt, error=error)
        outcome.at.FromNanoseconds(time.time_ns())
        if error:
            log.warning("notification_failed", channel=channel, attempts=attempt, error=error)
        else:
            log.info("notification_sent", channel=channel, attempts=attempt)
        return outcome

    async def aclose(self) -> None:
        logging.getLogger("httpx2").removeFilter(self._log_filter)
        await self._client.aclose()
