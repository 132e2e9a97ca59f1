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
