"""Alembic migrations of the store, applied at start-up (see ``diagnosis_server.store.migrate``)."""
