"""Bundle entry point of paraflux-gui."""
import sys

from paraflux.app.main import main

sys.exit(main())
