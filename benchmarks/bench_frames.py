"""asv benchmarks for bndp.privatize (pandas, Polars, Arrow) and bndp.Budget."""

import numpy as np

import bndp

SPEC = {
    "age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.25},
    "income": {"mechanism": "gaussian", "lower": 0, "upper": 500000, "sensitivity": 1000,
               "epsilon": 0.25},
    "score": {"lower": "score_lo", "upper": "score_hi", "sensitivity": 1, "epsilon": 0.25},
}


def _data(n):
    rng = np.random.default_rng(0)
    lo = rng.integers(0, 50, n).astype(np.float64)
    return {"id": np.arange(n), "age": rng.integers(0, 121, n),
            "income": rng.uniform(0, 500000, n), "score": lo + rng.uniform(0, 10, n),
            "score_lo": lo, "score_hi": lo + 10.0}


class TimePrivatize:
    params = ["pandas", "polars", "arrow"]
    param_names = ["frame"]

    def setup(self, frame):
        try:
            import narwhals  # noqa: F401
            if frame == "pandas":
                import pandas as pd

                self.frame = pd.DataFrame(_data(200_000))
            elif frame == "polars":
                import polars as pl

                self.frame = pl.DataFrame(_data(200_000))
            else:
                import pyarrow as pa

                self.frame = pa.table(_data(200_000))
        except ImportError:
            raise NotImplementedError(f"{frame} or narwhals is not installed")

    def time_privatize(self, frame):
        bndp.privatize(self.frame, SPEC, rng=1)


class TimeByColumn:
    """The same release column by column with bndp.sample (the baseline of TimePrivatize)."""

    def setup(self):
        self.d = {k: np.asarray(v, dtype=np.float64) for k, v in _data(200_000).items()}

    def time_by_column(self):
        d = self.d
        bndp.sample(d["age"], mechanism="laplace", epsilon=0.25, sensitivity=1, lower=0,
                    upper=120, rng=1)
        bndp.sample(d["income"], mechanism="gaussian", epsilon=0.25, sensitivity=1000,
                    lower=0, upper=500000, rng=2)
        bndp.sample(d["score"], mechanism="laplace", epsilon=0.25, sensitivity=1,
                    lower=d["score_lo"], upper=d["score_hi"], rng=3)


class TimeBudget:
    def setup(self):
        self.costs = {f"c{i}": (0.001, 0.0) for i in range(10)}

    def time_charge(self):
        b = bndp.Budget(epsilon=1.0)
        for _ in range(50):
            b.charge(self.costs)
