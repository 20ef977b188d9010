"""Write every pack of the corpus to ``tests/incidents/packs/`` (``python -m tests.incidents.corpus``)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.incidents.corpus import (
    changes,
    crashes,
    dependencies,
    images,
    memory,
    pools,
    probes,
    quiet,
    scheduling,
    storage,
)
from tests.incidents.corpus.kit import write_all

PACKS_DIR = Path(__file__).resolve().parent.parent / "packs"
MODULES = [memory, crashes, images, scheduling, probes, storage, dependencies, pools, changes, quiet]


def main() -> int:
    packs = [factory() for module in MODULES for factory in module.PACKS]
    names = [p.name for p in packs]
    if len(set(names)) != len(names):
        print("duplicate pack names", file=sys.stderr)
        return 1
    for path in sorted(PACKS_DIR.glob("*.json")):
        if path.stem not in names:
            path.unlink()
    for path in write_all(packs, PACKS_DIR):
        print(path.relative_to(PACKS_DIR.parent.parent.parent))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
