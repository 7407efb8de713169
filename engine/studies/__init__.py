"""Studies and their variants; importing this package registers every study (one line each, in the order
the window lists them)."""

from . import magnetostatic  # noqa: F401  (registered first: the default study)
from . import elasticity  # noqa: F401
from . import truncation  # noqa: F401
from . import bem  # noqa: F401
from .registry import STUDIES, Choice, Study, VariantAxis, find_case, register, study_for_kind, unregister

__all__ = ["STUDIES", "Choice", "Study", "VariantAxis", "find_case", "register", "study_for_kind", "unregister"]
