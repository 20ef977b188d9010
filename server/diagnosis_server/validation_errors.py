"""How a file's reader names a pydantic ValidationError in its one-line error: the first problem's place and message."""

from __future__ import annotations

from pydantic import ValidationError


def first_problem(exc: ValidationError, top: str) -> str:
    """``<dotted location>: <message>`` of the first error; ``top`` names the place when the error is on the whole."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or top
    return f"{where}: {first['msg']}"
