"""ParaFlux numerics: meshes, problems, solvers and studies; runs headless with NumPy, optionally CuPy."""
