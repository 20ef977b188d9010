"""Alerts in, answers out: Alertmanager's alert groups start runs, and their answers are posted back."""
