"""``python -m bndp.cli``: the command line (see :mod:`bndp.cli`)."""

import sys

from . import main

sys.exit(main())
