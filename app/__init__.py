"""ParaFlux desktop application (PySide6); drives the engine through the study registry."""
