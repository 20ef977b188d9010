"""Protobuf Values built past what ``to_value`` builds: nested deeper than the bound, in place (a message nested past
the parser's depth limit cannot be copied whole)."""

from __future__ import annotations

from google.protobuf import struct_pb2

from diagnosis.v1 import contracts_pb2


def wrapped(value: struct_pb2.Value, levels: int, *, as_list: bool = False) -> struct_pb2.Value:
    """``value`` inside ``levels`` containers (objects, or arrays), built from the outside in."""
    root = struct_pb2.Value()
    inner = root
    for _ in range(levels):
        inner = inner.list_value.values.add() if as_list else inner.struct_value.fields["k"]
    inner.CopyFrom(value)
    return root


def recorded_with(output: struct_pb2.Value, arguments: struct_pb2.Struct | None = None) -> contracts_pb2.ToolInvocation:
    """An invocation holding ``output`` (and ``arguments``), built in place: not copied whole."""
    recorded = contracts_pb2.ToolInvocation(invocation_id="inv-1", tool_name="fixed")
    graft(recorded.output, output)
    if arguments is not None:
        recorded.arguments.SetInParent()
        for key, item in arguments.fields.items():
            graft(recorded.arguments.fields[key], item)
    return recorded


def graft(out: struct_pb2.Value, value: struct_pb2.Value) -> None:
    """``out.CopyFrom(value)`` one level at a time."""
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        out.struct_value.SetInParent()
        for key, item in value.struct_value.fields.items():
            graft(out.struct_value.fields[key], item)
    elif kind == "list_value":
        out.list_value.SetInParent()
        for item in value.list_value.values:
            graft(out.list_value.values.add(), item)
    elif kind is not None:
        setattr(out, kind, getattr(value, kind))
