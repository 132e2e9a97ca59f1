import os

import numpy as np
import pytest

# Heavy statistical sweeps are marked `slow`. CI runs them in a reduced form; set
# BNDP_FULL=1 for the full sweep.
FULL = os.environ.get("BNDP_FULL", "") == "1"


def sweep(n_full: int, n_reduced: int) -> int:
    """Number of random configurations for a sweep test."""
    return n_full if FULL else n_reduced


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def bndp_import_root() -> str:
    """The directory the running tests import bndp from (``src`` in a development checkout
    built in place, site-packages when bndp is installed), for subprocesses that must import
    the same bndp: put it first on their PYTHONPATH."""
    import bndp

    return os.path.dirname(os.path.dirname(os.path.abspath(bndp.__file__)))
