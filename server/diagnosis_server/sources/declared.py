"""What every tool of the sources shares: it is declared by its name, description and parameters, which give
its input schema and check its arguments (Prometheus, Loki, Kubernetes, and the recorded packs' stand-ins); and
the time range a range query of Prometheus or Loki reads."""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis_server.conversions import JsonObject
from diagnosis_server.sources.arguments import Args, Param, check_arguments, input_schema, parse_time
from diagnosis_server.tools.base import ToolError

DEFAULT_RANGE_S = 3600.0
RANGE_START = Param("start", "string", "Range start (RFC 3339, Unix seconds, now-1h). Default: one hour before end.")


@dataclass(frozen=True, slots=True)
class Declaration:
    """A tool's name, description and parameters: written once, for the live tool and for the recorded pack's
    stand-in of the same name."""

    name: str
    description: str
    params: tuple[Param, ...]


class DeclaredTool:
    """A tool whose ``declaration`` gives its name, description and input schema, and checks its arguments."""

    declaration: Declaration

    @property
    def name(self) -> str:
        return self.declaration.name

    @property
    def description(self) -> str:
        return self.declaration.description

    @property
    def input_schema(self) -> JsonObject:
        return input_schema(self.declaration.params)

    def _args(self, arguments: JsonObject) -> Args:
        return check_arguments(self.declaration.name, self.declaration.params, arguments)


def time_range(tool: str, args: Args, *, now: float) -> tuple[float, float]:
    """(start, end) in seconds: the last ``DEFAULT_RANGE_S`` before end (now) unless given; ToolError when start
    is after end."""
    end = parse_time(tool, "end", str(args["end"]), now=now) if "end" in args else now
    start = parse_time(tool, "start", str(args["start"]), now=now) if "start" in args else end - DEFAULT_RANGE_S
    if start > end:
        raise ToolError(f"{tool}: start is after end")
    return start, end
