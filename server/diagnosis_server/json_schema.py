"""A pydantic model's JSON Schema, made plain for the readers of this service's schemas (agents, tools).

``model_json_schema()`` with references inlined (a reader walks ``properties`` and ``items`` directly),
titles and defaults dropped (they describe the Python model, not the contract), and a single-value
``const`` written as a one-word ``enum``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

_DROPPED = frozenset({"title", "default"})


def _plain(node: Any, defs: Mapping[str, Any]) -> Any:
    if isinstance(node, list):
        return [_plain(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _plain(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    out = {key: _plain(value, defs) for key, value in node.items() if key not in _DROPPED and key != "$defs"}
    if isinstance(node.get("properties"), dict):  # property names are names, never keywords to drop
        out["properties"] = {name: _plain(sub, defs) for name, sub in node["properties"].items()}
    if "const" in out:
        out["enum"] = [out.pop("const")]
    return out


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """``model_json_schema()`` made plain: references inlined, titles and defaults dropped, a const as an enum."""
    schema = model.model_json_schema()
    plain: dict[str, Any] = _plain(schema, schema.get("$defs", {}))
    return plain
