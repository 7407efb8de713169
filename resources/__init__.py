"""Sample meshes and problem files shipped with ParaFlux."""
