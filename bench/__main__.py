"""`python -m bench` runs the side-by-side benchmark (bench/run.py)."""

import sys

from bench.run import main

sys.exit(main())
