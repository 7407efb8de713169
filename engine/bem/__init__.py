"""Collocation boundary elements for 3D isotropic elastostatics (linear triangles, nodal displacements,
tractions per element node)."""
