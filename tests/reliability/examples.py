"""How many examples a property test runs."""

from __future__ import annotations

import os

# `make soak` sets DIAGNOSIS_PROPERTY_EXAMPLES=10000; `make test` runs the default.
PROPERTY_EXAMPLES = int(os.environ.get("DIAGNOSIS_PROPERTY_EXAMPLES", "2000"))
# The property test's own limit (pytest-timeout): about 40 ms an example on a busy 2-core machine, with room.
PROPERTY_TIMEOUT_S = 120 + PROPERTY_EXAMPLES // 10
