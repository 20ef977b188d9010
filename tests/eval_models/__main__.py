"""``python -m tests.eval_models``: replay the model-answer cases through the real graph and print the counts."""

from tests.eval_models.runner import main

raise SystemExit(main())
