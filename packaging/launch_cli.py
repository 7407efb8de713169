"""Bundle entry point of paraflux (the command line)."""
import sys

from paraflux.engine.cli import main

sys.exit(main())
