"""Fast multipole method for the 3D Laplace kernel 1/|x - y| (paper 001): octree, expansions, M2L schemes."""
