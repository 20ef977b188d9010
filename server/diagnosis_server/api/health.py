"""grpc.health.v1 with ``List`` implemented, and server reflection under both v1 and v1alpha.

The health servicer of grpcio-health-checking answers Check and Watch; its proto also has ``List``
(a snapshot of every service's status), which reflection lists, so it is served here too.

grpcio-reflection serves ``grpc.reflection.v1alpha.ServerReflection`` only. ``grpc.reflection.v1`` is
the same protocol under another package: its messages are field for field those of v1alpha, so the
v1alpha servicer answers both, with the v1 service's descriptor added to the default pool so that
reflection can describe itself under either name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc
import grpc.aio
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_health.v1 import health_pb2
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_reflection.v1alpha._async import ReflectionServicer

REFLECTION_V1_PACKAGE = "grpc.reflection.v1"
REFLECTION_V1_FILE = "grpc/reflection/v1/reflection.proto"


class ListingHealthServicer(HealthServicer):  # type: ignore[misc]
    async def List(self, request: health_pb2.HealthListRequest, context: Any) -> health_pb2.HealthListResponse:
        """Every service this server reports on, with its status now (grpc.health.v1 List)."""
        response = health_pb2.HealthListResponse()
        for name, status in sorted(self._server_status.items()):
            response.statuses[name].status = status
        return response


def _register_reflection_v1() -> None:
    """Adds grpc/reflection/v1/reflection.proto (v1alpha's, renamed) to the default descriptor pool."""
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(REFLECTION_V1_FILE)
        return
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    old = f".{proto.package}."
    proto.name = REFLECTION_V1_FILE
    proto.package = REFLECTION_V1_PACKAGE
    proto.options.Clear()
    for message in proto.message_type:
        for item in message.field:
            if item.type_name.startswith(old):
                item.type_name = f".{REFLECTION_V1_PACKAGE}." + item.type_name[len(old) :]
    for service in proto.service:
        for method in service.method:
            method.input_type = f".{REFLECTION_V1_PACKAGE}." + method.input_type[len(old) :]
            method.output_type = f".{REFLECTION_V1_PACKAGE}." + method.output_type[len(old) :]
    pool.Add(proto)


def add_reflection(server: grpc.aio.Server, service_names: Sequence[str]) -> None:
    """Serves reflection as grpc.reflection.v1 and grpc.reflection.v1alpha (one servicer, same wire format)."""
    _register_reflection_v1()
    servicer = ReflectionServicer(tuple(service_names))
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)

    handler = grpc.method_handlers_generic_handler(
        f"{REFLECTION_V1_PACKAGE}.ServerReflection",
        {
            "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
                servicer.ServerReflectionInfo,
                request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
                response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
            )
        },
    )
    server.add_generic_rpc_handlers((handler,))
