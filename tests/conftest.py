import os

import numpy as np
import pytest

# Heavy statistical sweeps are marked `slow`. CI runs them in a reduced form; set
# BNDP_FULL=1 for the full sweep.
FULL = os.environ.get("BNDP_FULL", "") == "1"


# The quick subset (`pytest -m quick`, about a minute on two cores): the core's fast test
# files, their tests marked `quick` unless `slow`. With exactly `-m quick` the other files are
# not even imported, so the run does not pay for importing PyTorch, Spark or Dask.
QUICK_FILES = frozenset({
    "test_mechanisms.py", "test_columns.py", "test_calibrate_once.py", "test_frames.py",
    "test_accounting.py", "test_random.py", "test_onevalue.py", "test_budget_ledger.py",
    "test_release_record.py", "test_cli_errors.py", "test_cli_estimate.py",
})


def pytest_ignore_collect(collection_path, config):
    if (config.getoption("markexpr", "") or "").strip() == "quick" and \
            collection_path.suffix == ".py" and collection_path.name.startswith("test_") and \
            collection_path.name not in QUICK_FILES:
        return True
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in QUICK_FILES and "slow" not in item.keywords:
            item.add_marker(pytest.mark.quick)


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


def worker_env(setenv) -> None:
    """Make Spark's and Dask's worker processes import the bndp these tests import:
    ``setenv(name, value)`` (``monkeypatch.setenv``) for the Python they start and their
    PYTHONPATH."""
    import sys

    setenv("PYSPARK_PYTHON", sys.executable)
    setenv("PYSPARK_DRIVER_PYTHON", sys.executable)
    setenv("PYTHONPATH", bndp_import_root() + os.pathsep + os.environ.get("PYTHONPATH", ""))


@pytest.fixture(scope="session")
def postgres_url():
    """A PostgreSQL server's URL for the ledger tests: ``BNDP_TEST_POSTGRES_URL`` (``.ci/run``
    starts a throw-away cluster and sets it), else a cluster started here in a temporary
    folder; skipped only where no PostgreSQL server binary is installed."""
    pytest.importorskip("psycopg", reason="the PostgreSQL ledger needs psycopg 3 (bndp[postgres])")
    from ._postgres import ENV_URL, Cluster, bindir

    url = os.environ.get(ENV_URL)
    if url:
        yield url
        return
    b = bindir()
    if b is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl) on this machine: the "
                    "PostgreSQL ledger tests need a real server")
    cluster = Cluster(b).start()
    try:
        yield cluster.url
    finally:
        cluster.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    """A budget store: an SQLite file in a fresh folder, or the test PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "ledger.db")
    return request.getfixturevalue("postgres_url")
