"""Element colouring for conflict-free, deterministic accumulation: CCM, FCM, OFCM (paper 002) and a
parallel speculative colouring, a balancing pass, and colour groups ready for kernels."""

from .groups import ColorGroups, color_elements, groups_from_colors, is_valid_coloring
from .adjacency import max_node_degree

from ..variants import COLORING

METHODS = COLORING.names

__all__ = ["METHODS", "ColorGroups", "color_elements", "groups_from_colors", "is_valid_coloring",
           "max_node_degree"]
