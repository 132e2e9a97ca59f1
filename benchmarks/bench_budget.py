"""asv benchmarks for persistent budgets (bndp.Budget.create, then charged): one charge on
SQLite and on PostgreSQL, a 10^6-row privatize with and without a persistent budget, and optimal
composition of a 1,000-release history.

PostgreSQL runs against ``BNDP_BENCH_POSTGRES_URL`` (or ``BNDP_TEST_POSTGRES_URL``) and is
skipped without one."""

import os
import shutil
import tempfile
import uuid

import numpy as np

import bndp


def _pg_url():
    return os.environ.get("BNDP_BENCH_POSTGRES_URL") or os.environ.get("BNDP_TEST_POSTGRES_URL")


def _open(store_kind, tmp):
    if store_kind == "sqlite":
        store = os.path.join(tmp, "ledger.db")
    else:
        store = _pg_url()
        if not store:
            raise NotImplementedError("no PostgreSQL server (set BNDP_BENCH_POSTGRES_URL)")
    return bndp.Budget.create(store, "bench-" + uuid.uuid4().hex[:10], epsilon=1e12)


class TimeLedgerCharge:
    """One charge: a transaction that checks the cap and records the release."""

    params = ["sqlite", "postgres"]
    param_names = ["store"]

    def setup(self, store_kind):
        self.tmp = tempfile.mkdtemp()
        self.budget = _open(store_kind, self.tmp)
        self.costs = {"age": (1e-3, 0.0), "income": (1e-3, 0.0)}

    def teardown(self, store_kind):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_charge(self, store_kind):
        self.budget.charge(self.costs, label="bench")


class TimePrivatizeLedger:
    """A 10^6-row release of one column: no budget, an in-memory one, a persistent one."""

    params = ["none", "memory", "sqlite"]
    param_names = ["budget"]
    timeout = 120

    def setup(self, kind):
        import pandas as pd

        n = 10**6
        self.df = pd.DataFrame({"age": np.random.default_rng(0).integers(0, 121, n)})
        self.spec = {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.25}}
        self.tmp = tempfile.mkdtemp()
        self.kind = kind
        self._persistent = _open("sqlite", self.tmp) if kind == "sqlite" else None
        bndp.privatize(self.df.head(10), self.spec)  # the mechanism's plan, cached

    def teardown(self, kind):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _budget(self):
        if self.kind == "none":
            return None
        if self.kind == "memory":
            return bndp.Budget(epsilon=1e12)
        return self._persistent

    def time_privatize(self, kind):
        bndp.privatize(self.df, self.spec, budget=self._budget())



def time_optimal_composition_1000_releases():
    from bndp._ledger import _compose

    # 1,000 releases of 10 different costs, composed anew (not the kept result)
    counts = {(0.01 * (1 + k), 0.0): 100 for k in range(10)}
    # the kept results' cache (named _optimal_epsilon up to 0.7.0)
    (getattr(_compose, "_optimal", None) or _compose._optimal_epsilon).cache_clear()
    _compose.optimal_epsilon(counts, 1e-6)
