"""Studies and their variants; importing this package registers every study."""

from . import elasticity, magnetostatic  # noqa: F401  (register the studies)
from .registry import STUDIES, Choice, Study, VariantAxis, study_for_kind

__all__ = ["STUDIES", "Choice", "Study", "VariantAxis", "study_for_kind"]
