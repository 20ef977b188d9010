"""Composition: the Verifier-allowed material, the service-rendered answer, fallbacks and the Composer guard (pure)."""

from __future__ import annotations

from diagnosis_server.composition.composer_rules import Violation, composer_output_violations
from diagnosis_server.composition.material import (
    AllowedMaterial,
    MaterialClaim,
    MaterialGap,
    allowed_material,
    excluded_statements,
    mentions,
)
from diagnosis_server.composition.notes import RunRecord, post_verification_notes, pre_verification_notes
from diagnosis_server.composition.render import (
    answer_text,
    render_answer,
    render_pre_verification_fallback,
    render_verified,
)
from diagnosis_server.composition.suggestions import RecordedCall, Suggestion

__all__ = [
    "AllowedMaterial",
    "MaterialClaim",
    "MaterialGap",
    "RecordedCall",
    "RunRecord",
    "Suggestion",
    "Violation",
    "allowed_material",
    "answer_text",
    "composer_output_violations",
    "excluded_statements",
    "mentions",
    "post_verification_notes",
    "pre_verification_notes",
    "render_answer",
    "render_pre_verification_fallback",
    "render_verified",
]
