"""The output cap's trim, as properties: what it returns fits, and is the upstream's JSON with arrays cut short."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis_server.conversions import JsonValue, canonical_json_bytes
from diagnosis_server.tools.trim import Untrimmable, trim_to_fit

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 10**6) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=8) | st.dictionaries(st.text(max_size=5), children, max_size=5),
    max_leaves=60,
)


def _size(value: Any) -> int:
    return len(canonical_json_bytes(value))


def _is_cut_short(trimmed: Any, original: Any) -> bool:
    """``trimmed`` is ``original`` with some arrays' trailing elements dropped (and nothing else changed)."""
    if isinstance(original, list):
        return (
            isinstance(trimmed, list)
            and len(trimmed) <= len(original)
            and all(_is_cut_short(t, o) for t, o in zip(trimmed, original, strict=False))
        )
    if isinstance(original, dict):
        return (
            isinstance(trimmed, dict)
            and trimmed.keys() == original.keys()
            and all(_is_cut_short(trimmed[k], original[k]) for k in original)
        )
    return bool(trimmed == original and type(trimmed) is type(original))


@pytest.mark.property
@settings(max_examples=300, deadline=None)
@given(json_values, st.integers(2, 400))
def test_a_trimmed_value_fits_and_only_its_arrays_are_shorter(value: JsonValue, budget: int) -> None:
    try:
        trimmed, trims = trim_to_fit(value, budget)
    except Untrimmable:
        return
    assert _size(trimmed) <= budget
    assert _is_cut_short(trimmed, value)
    if _size(value) <= budget:
        assert trimmed == value and not trims
    # The size the caller measured already gives the same answer.
    assert trim_to_fit(value, budget, size=_size(value)) == (trimmed, trims)


def test_a_long_listing_keeps_as_many_whole_items_as_fit() -> None:
    items: list[JsonValue] = [
        {"name": f"pod-{i:04d}", "message": "Back-off restarting failed container"} for i in range(500)
    ]
    value: JsonValue = {"kind": "EventList", "items": items}
    trimmed, trims = trim_to_fit(value, 4096)
    assert isinstance(trimmed, dict) and isinstance(trimmed["items"], list)
    kept = len(trimmed["items"])
    assert _size(trimmed) <= 4096
    # One more whole item would not have fitted.
    assert _size({"kind": "EventList", "items": items[: kept + 1]}) > 4096
    assert [t.describe() for t in trims] == [f"/items kept {kept} of 500 items"]


def test_a_listing_trimmed_by_its_derived_item_size_fits_exactly() -> None:
    """A listing's ``items`` size is derived from the listing's, not measured: byte-exact with multi-byte text,
    so at every budget just under the whole, what is kept fits and one more element would not."""
    items: list[JsonValue] = [{"name": f"pod-{i}", "message": f"Ünhealthy ✓ probe {i}"} for i in range(300)]
    value: JsonValue = {"apiVersion": "v1", "kind": "EventList", "metadata": {"résumé": "1"}, "items": items}
    for budget in (1024, 4096, 20_000):
        assert trim_to_fit(value, budget, size=_size(value)) == trim_to_fit(value, budget)
    # ``items`` has the most elements and the fewest bytes, so it is given room first: its derived size decides
    # whether it is kept whole beside ``tail``.
    two: dict[str, JsonValue] = {"items": [1] * 50, "tail": ["ä" * 30] * 3}
    for budget in range(_size(two) - 300, _size(two) + 1):
        try:
            trimmed, _ = trim_to_fit(two, budget)
        except Untrimmable:
            continue
        assert isinstance(trimmed, dict) and isinstance(trimmed["items"], list)
        assert _size(trimmed) <= budget, budget
        kept = len(trimmed["items"])
        if kept < 50:
            assert _size({**trimmed, "items": [1] * (kept + 1)}) > budget, budget
