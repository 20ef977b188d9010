"""The incident corpus builder: one module per family of incidents, ``kit`` for the shapes they share.

``python -m tests.incidents.corpus`` rewrites ``tests/incidents/packs/*.json`` (deterministic: same input, same bytes).
Edit a pack here, not in its JSON; add its entry to ``tests/incidents/expected.toml``.
"""
