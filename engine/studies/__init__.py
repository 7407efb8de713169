"""Studies and their variants; importing this package registers every study."""

from . import magnetostatic  # noqa: F401  (registered first: the default study)
from . import elasticity  # noqa: F401
from . import truncation  # noqa: F401
from . import bem  # noqa: F401
from .registry import STUDIES, Choice, Study, VariantAxis, study_for_kind

__all__ = ["STUDIES", "Choice", "Study", "VariantAxis", "study_for_kind"]
