"""`python -m hopper` runs the `hopper` command."""

import sys

from hopper.cli import main

sys.exit(main())
