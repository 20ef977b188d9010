"""How many examples a property test runs."""

from __future__ import annotations

import os

# `make soak` sets DIAGNOSIS_PROPERTY_EXAMPLES=10000; `make test` runs the default.
PROPERTY_EXAMPLES = int(os.environ.get("DIAGNOSIS_PROPERTY_EXAMPLES", "2000"))
