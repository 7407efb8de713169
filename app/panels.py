"""The window's study panels: each registered study's own panel type where it has one, else the panel built
from its declarations (GenericPanel)."""

from __future__ import annotations

from paraflux.engine.studies import STUDIES

from .scattering_panel import ScatteringPanel
from .study_panels import BemPanel, ElasticityPanel, GenericPanel, MagnetostaticPanel, StudyPanel, TruncationPanel

PANEL_TYPES = {"magnetostatic": MagnetostaticPanel, "elasticity": ElasticityPanel, "truncation": TruncationPanel,
               "elastostatic-bem": BemPanel, "scattering": ScatteringPanel}


def make_panels() -> dict[str, StudyPanel]:
    """One panel per registered study, in registry order."""
    return {name: PANEL_TYPES.get(name, GenericPanel)(study) for name, study in STUDIES.items()}
