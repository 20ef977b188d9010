"""Hostile agent outputs, tool outputs and questions through the real graph: what must never reach the user."""
