"""FE-IIIEE scattering: Nedelec FEM between the scatterer and S, truncated by the iterated integral operator
(paper 003's operator) on S, and the radar cross-section from the equivalent currents on S'."""
