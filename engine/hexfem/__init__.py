"""High-order hierarchical hexahedra for 3D linear elasticity (paper 004): basis, element matrices, p-FEM solver."""
