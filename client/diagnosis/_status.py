"""Decoding of the rich error status (``grpc-status-details-bin``) without requiring googleapis-common-protos.

The trailer holds a serialized ``google.rpc.Status``. Its shape is fixed (code, message, repeated Any), so it is
read with a message class built in a private descriptor pool. Each detail is unpacked into its own type when
that type is known to protobuf's default pool (``google.rpc.error_details_pb2`` is imported when installed:
BadRequest, ErrorInfo, ...); otherwise it stays a ``google.protobuf.Any``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from functools import cache
from typing import Any

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message

with contextlib.suppress(ImportError):  # Optional: registers BadRequest, ErrorInfo, ... in the default pool.
    from google.rpc import error_details_pb2 as _error_details_pb2  # noqa: F401

STATUS_DETAILS_KEY = "grpc-status-details-bin"


@cache
def _status_class() -> type[Message]:
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(any_pb2.DESCRIPTOR.serialized_pb)
    proto = descriptor_pb2.FileDescriptorProto(
        name="diagnosis/_rpc_status.proto",
        package="google.rpc",
        syntax="proto3",
        dependency=["google/protobuf/any.proto"],
    )
    status = proto.message_type.add(name="Status")
    f = descriptor_pb2.FieldDescriptorProto
    status.field.add(name="code", number=1, type=f.TYPE_INT32, label=f.LABEL_OPTIONAL)
    status.field.add(name="message", number=2, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    status.field.add(
        name="details", number=3, type=f.TYPE_MESSAGE, label=f.LABEL_REPEATED, type_name=".google.protobuf.Any"
    )
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("google.rpc.Status"))


def status_details_bytes(trailing_metadata: Iterable[Any] | None) -> bytes | None:
    """The raw ``grpc-status-details-bin`` trailer, if the call carried one."""
    for item in trailing_metadata or ():
        key, value = item[0], item[1]
        if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
            return value
    return None


def decode_details(raw: bytes | None) -> tuple[Message, ...]:
    """The details of a serialized ``google.rpc.Status``; empty when absent or unreadable."""
    if not raw:
        return ()
    status: Any = _status_class()()
    try:
        status.ParseFromString(raw)
    except DecodeError:
        return ()
    return tuple(_unpack(item.type_url, item.value) for item in status.details)


def _unpack(type_url: str, value: bytes) -> Message:
    packed = any_pb2.Any(type_url=type_url, value=value)
    name = type_url.rpartition("/")[2]
    try:
        descriptor = descriptor_pool.Default().FindMessageTypeByName(name)
    except KeyError:
        return packed
    message = message_factory.GetMessageClass(descriptor)()
    try:
        message.ParseFromString(value)
    except DecodeError:
        return packed
    return message
