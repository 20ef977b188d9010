"""Write every pack of the corpus to ``tests/incidents/packs/`` (``python -m tests.incidents.corpus``)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.incidents.corpus.kit import write_all
from tests.incidents.corpus.reader import read

HERE = Path(__file__).resolve().parent
PACKS_DIR = HERE.parent / "packs"


def main() -> int:
    files = sorted(HERE.glob("*/*.toml"))
    names = [path.stem for path in files]
    if len(set(names)) != len(names):
        print("duplicate pack names", file=sys.stderr)
        return 1
    packs = [read(path) for path in files]
    for path in sorted(PACKS_DIR.glob("*.json")):
        if path.stem not in names:
            path.unlink()
    for path in write_all(packs, PACKS_DIR):
        print(path.relative_to(PACKS_DIR.parent.parent.parent))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
