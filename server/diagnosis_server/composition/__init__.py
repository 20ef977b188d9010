"""Composition: the Verifier-allowed material, safe renderings, fallbacks and the Composer guard (pure)."""

from __future__ import annotations

from diagnosis_server.composition.guard import guard_composer_output
from diagnosis_server.composition.material import (
    AllowedMaterial,
    MaterialClaim,
    allowed_material,
    excluded_statements,
    mentions,
)
from diagnosis_server.composition.render import answer_text, render_pre_verification_fallback, render_verified

__all__ = [
    "AllowedMaterial",
    "MaterialClaim",
    "allowed_material",
    "answer_text",
    "excluded_statements",
    "guard_composer_output",
    "mentions",
    "render_pre_verification_fallback",
    "render_verified",
]
