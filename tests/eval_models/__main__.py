"""``python -m tests.eval_models``: replay the model-answer cases through the real graph and print the counts.

Run as a path (``python /path/to/checkout/tests/eval_models``) it puts its own checkout first on the path, so that a
``tests`` package of the current directory does not hide it; the server code is whichever the interpreter imports.
"""

import sys
from pathlib import Path

if not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.eval_models.runner import main

raise SystemExit(main())
