"""The lines the answer writes as its own items open with no markdown block or section label (R-A-5)."""

from __future__ import annotations

import pytest

from diagnosis_server.text.normalize import display_line


@pytest.mark.requirement("R-A-5")
@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("## edge-gateway gets status=502", "edge-gateway gets status=502"),
        ("> edge-gateway gets status=502", "edge-gateway gets status=502"),
        ("| edge-gateway gets status=502 |", "edge-gateway gets status=502"),
        ("``` edge-gateway gets status=502", "edge-gateway gets status=502"),
        ("Confirmed facts: edge-gateway gets status=502", "edge-gateway gets status=502"),
        ("- Likely cause (verified): ledger-svc", "ledger-svc"),
        ("status=502 from ledger-svc", "status=502 from ledger-svc"),  # a key, no label
        ("#1 of the pods restarted", "#1 of the pods restarted"),
        ("##", "##"),  # nothing but markup: kept rather than emptied
    ],
)
def test_a_line_the_answer_writes_opens_with_no_block_or_section_label(line: str, shown: str) -> None:
    assert display_line(line) == shown
