"""Types that catch mistakes (checked with mypy on a user's snippet) and the Polars Series
as a column of bndp.sample."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import bndp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SNIPPET = '''
import numpy as np
import polars as pl
import bndp

a = bndp.sample(np.array([1.0, 2.0]), mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                lower=0.0, upper=10.0)
reveal_type(a)
f = bndp.sample(3.0, mechanism="gaussian", epsilon=1.0, sensitivity=1.0, lower=0.0,
                upper=10.0)
reveal_type(f)
df = bndp.privatize(pl.DataFrame({"x": [1.0]}), {"x": {"mechanism": "laplace"}})
reveal_type(df)
bad = bndp.sample(3.0, mechanism="laplase", epsilon=1.0, sensitivity=1.0, lower=0.0,
                  upper=10.0)
m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
one = bndp.estimate(np.array([1.0, 2.0]), m)
reveal_type(one)
per_column = bndp.estimate(pl.DataFrame({"x": [1.0]}), {"x": {"mechanism": "laplace"}})
reveal_type(per_column)
'''


def test_mypy_sees_the_types(tmp_path):
    pytest.importorskip("mypy")
    pytest.importorskip("polars")
    (tmp_path / "user.py").write_text(SNIPPET)
    env = dict(os.environ, MYPYPATH=os.path.join(ROOT, "src"))
    r = subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports",
                        "--cache-dir", str(tmp_path / "cache"), "--follow-imports=silent",
                        str(tmp_path / "user.py")], capture_output=True, text=True,
                       env=env, cwd=tmp_path, timeout=600)
    out = r.stdout
    lines = [ln for ln in out.splitlines() if "user.py" in ln]
    revealed = [ln.split("Revealed type is ")[1] for ln in lines if "Revealed type" in ln]
    assert len(revealed) == 5, out
    assert revealed[0].startswith('"numpy.ndarray'), out
    assert revealed[1] in ('"float"', '"builtins.float"'), out
    assert revealed[2] == '"polars.dataframe.frame.DataFrame"', out
    # bndp.estimate: one Estimate for a column, a dict of them for a frame and its spec
    assert revealed[3] == '"bndp.estimation._result.Estimate"', out
    assert revealed[4] in ('"dict[str, bndp.estimation._result.Estimate]"',
                           '"builtins.dict[builtins.str, bndp.estimation._result.Estimate]"'), out
    # the misspelt mechanism is an error
    assert any("laplase" in ln and "error" in ln for ln in lines) or any(
        "No overload variant" in ln for ln in lines), out


def test_polars_series_in_polars_series_out():
    pl = pytest.importorskip("polars")
    s = pl.Series("age", [23, 41, None, 67])
    kw = dict(mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0, upper=120, rng=1)
    # an integer Series (integral bounds and sensitivity): the integer law, its own type
    out = bndp.sample(s, nulls="keep", **kw)
    assert isinstance(out, pl.Series) and out.name == "age" and out.dtype == pl.Int64
    assert out.null_count() == 1 and out[2] is None
    ref = bndp.sample(np.array([23, 41, 67]), **kw)
    np.testing.assert_array_equal(out.drop_nulls().to_numpy(), ref)
    # the grid law on request: Float64
    out = bndp.sample(s, nulls="keep", integer=False, **kw)
    assert out.dtype == pl.Float64 and out.null_count() == 1
    ref = bndp.sample(np.array([23.0, 41.0, 67.0]), **kw)
    np.testing.assert_array_equal(out.drop_nulls().to_numpy(), ref)
    nan = bndp.sample(pl.Series("x", [1.0, float("nan")]), nulls="keep", **kw)
    assert nan.null_count() == 0 and np.isnan(nan[1])          # NaN stays NaN
    with pytest.raises(ValueError, match="missing"):
        bndp.sample(s, **kw)
    with pytest.raises(TypeError, match="real numbers"):
        bndp.sample(pl.Series("s", ["a"]), **kw)
    m = bndp.BoundedGaussian(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0)
    assert isinstance(m.sample(pl.Series("x", [1.0, 2.0]), rng=1), pl.Series)
