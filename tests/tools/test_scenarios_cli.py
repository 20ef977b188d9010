"""`diagnosis scenarios [--json] [--dir DIR]`, run in-process."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from diagnosis_server.cli import scenarios as command

from ._helpers import minimal_pack, write_pack


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="diagnosis")
    command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["scenarios", *argv])
    result: int = args.func(args)
    return result


def test_lists_every_bundled_scenario_with_the_default_marked(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run([]) == 0
    out = capsys.readouterr().out
    for name in ("checkout-oom", "payments-bad-deploy", "inventory-ambiguous", "healthy-noisy"):
        assert name in out
    marked = [line for line in out.splitlines() if line.startswith("* ")]
    assert len(marked) == 1 and "checkout-oom" in marked[0]
    assert "services: web-frontend, checkout-api" in out


def test_json_output_is_an_array_of_name_title_services_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert isinstance(rows, list) and len(rows) >= 8
    for row in rows:
        assert set(row) == {"name", "title", "services", "default"}
        assert isinstance(row["services"], list) and row["services"]
    assert [row["name"] for row in rows if row["default"]] == ["checkout-oom"]
    payments = next(row for row in rows if row["name"] == "payments-bad-deploy")
    assert "payments-api" in payments["services"]


def test_dir_lists_and_validates_other_packs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_pack(tmp_path, minimal_pack())
    assert _run(["--dir", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"name": "mini", "title": "A tiny pack", "services": ["api", "db"], "default": True}
    ]


def test_a_bad_pack_is_reported_with_exit_code_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack = minimal_pack()
    pack["logs"][0]["service"] = "ghost"
    write_pack(tmp_path, pack)
    assert _run(["--dir", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "mini.json: field logs.0.service: unknown service 'ghost'" in captured.err
