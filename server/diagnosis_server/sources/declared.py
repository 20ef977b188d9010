"""What every tool of the sources shares: it is declared by its name, description and parameters, which give
its input schema and check its arguments (Prometheus, Loki, Kubernetes, and the recorded packs' stand-ins)."""

from __future__ import annotations

from diagnosis_server.conversions import JsonObject
from diagnosis_server.sources.arguments import Args, Param, check_arguments, input_schema


class DeclaredTool:
    name: str
    description: str
    params: tuple[Param, ...]

    @property
    def input_schema(self) -> JsonObject:
        return input_schema(self.params)

    def _args(self, arguments: JsonObject) -> Args:
        return check_arguments(self.name, self.params, arguments)
