"""Migration scripts, one a revision (Alembic ignores this file)."""
