"""bndp.estimate's intervals where the data resolve the answer poorly: a column with an
atom at a bound under noise as wide as its range."""

import sys

import numpy as np
import pytest

import bndp

Z95 = 1.959963984540054


def _payments(rng, n=20190):
    """A log-payment column on [0, 8]: 24 % exact zeros, the rest piled near the top."""
    x = np.clip(8.0 - rng.gamma(2.0, 0.6, n), 0.0, 8.0)
    x[rng.random(n) < 0.24] = 0.0
    return x


def _mech():
    return bndp.BoundedLaplace(0.25, sensitivity=0.5, lower=0.0, upper=8.0)


def test_atom_interval_is_not_narrower_than_the_spread_over_releases():
    # the same true column released 16 times: the estimate's root-mean-square error around
    # the column's mean (its spread and its bias, about 0.8 of its sd here) sets how wide
    # a 95 % interval must be; the interval of one more release is at least 95 % of z
    # times it (the plain bootstrap interval, z times the replicates' sd, was 0.0957
    # against the bound 0.0998)
    x = _payments(np.random.default_rng(7))
    m = _mech()
    errs = [bndp.estimate(m.sample(x, rng=100 + k), m, n_boot=0).mean - x.mean()
            for k in range(16)]
    rms = float(np.sqrt(np.mean(np.square(errs))))
    est = bndp.estimate(m.sample(x, rng=200), m, rng=0)
    a, b = est.mean_interval
    assert (b - a) / 2 >= 0.95 * Z95 * rms
    assert a <= x.mean() <= b
    # the widening is the replicates' mean error beyond its own noise, on both sides
    err = est.boot @ est.support - est.boot_truth @ est.support
    sd = err.std(ddof=1)
    slack = abs(err.mean()) - 2 * sd / np.sqrt(err.size)
    assert slack > 0
    # (the bootstrap's interval; the likelihood-ratio range may widen it further)
    import dataclasses
    pa, pb = dataclasses.replace(est, profile=None).mean_interval
    assert (pb - pa) / 2 == pytest.approx(Z95 * sd + slack, rel=1e-9)
    assert (pa + pb) / 2 == pytest.approx(est.mean, rel=1e-12)
    assert a <= pa and pb <= b


def test_atom_intervals_contain_the_truth():
    # three releases of three columns: the mean's and the quartile's intervals hold the
    # column's own values
    for seed in (1, 2, 3):
        rng = np.random.default_rng(seed)
        x = _payments(rng)
        m = _mech()
        est = bndp.estimate(m.sample(x, rng=rng), m, rng=rng)
        a, b = est.mean_interval
        assert a <= x.mean() <= b, (seed, a, b, x.mean())
        qa, qb = est.quantile_interval(0.25)
        t = np.quantile(x, 0.25, method="inverted_cdf")
        assert qa <= t <= qb, (seed, qa, qb, t)


@pytest.mark.slow
def test_atom_mean_interval_coverage():
    # 60 releases of fresh columns: a 95 % interval covers 57 on average, 53 or fewer with
    # probability about 4 %; the plain bootstrap interval covered about 90 %
    hit = 0
    for r in range(60):
        rng = np.random.default_rng(500 + r)
        x = _payments(rng)
        m = _mech()
        a, b = bndp.estimate(m.sample(x, rng=rng), m, rng=rng).mean_interval
        hit += a <= x.mean() <= b
    assert hit >= 54, hit


def test_battery_command_writes_the_docs_table(tmp_path, monkeypatch):
    # the command behind docs/estimates.md's coverage battery, in a tiny configuration
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "estimate_battery.py"
    spec = importlib.util.spec_from_file_location("estimate_battery", path)
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "estimate_battery", mod)    # (its dataclass needs it)
    spec.loader.exec_module(mod)
    doc = tmp_path / "estimates.md"
    doc.write_text(f"before\n{mod.START}\nold table\n{mod.END}\nafter\n", encoding="utf-8")
    text = mod.main(["--reps", "2", "--n", "400", "--n-boot", "4", "--settings",
                     "payments-laplace", "scaled-gaussian-e0.5-s1-rows-n20000",
                     "--write-docs", str(doc)])
    out = doc.read_text(encoding="utf-8")
    assert "old table" not in out and out.startswith("before\n") and out.endswith("after\n")
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    assert rows[1].startswith("| payments-laplace-e0.25-s0.5-fixed-n20190 | 400 | 2 | 0 |")
    assert rows[2].startswith("| scaled-gaussian-e0.5-s1-rows-n20000 | 400 | 2 | 0 |")
    assert rows[3].startswith("| pooled | | 4 |")
    assert text in out
    with pytest.raises(SystemExit):
        mod.main(["--settings", "no-such-setting"])
    # the error columns (item 3 of the targets), each able to fail
    base = dict(rmse=0.05, rmse_naive=1.0, se=0.04, l1=0.10, l1_naive=0.20, l1_noise=0.02)
    assert mod.error_checks(base) == {"tenth": True, "within": True, "hist": True}
    assert mod.error_checks({**base, "rmse": 0.2, "se": 0.1})["within"] is True
    assert mod.error_checks({**base, "rmse": 0.2, "se": 0.04})["tenth"] is False
    assert mod.error_checks({**base, "rmse": 0.11})["within"] is False
    assert mod.error_checks({**base, "se": 0.2, "rmse": 0.3})["tenth"] is None   # not judged
    assert mod.error_checks({**base, "l1": 0.23})["hist"] is False
    assert mod.error_checks({**base, "l1": 0.21})["hist"] is True
    assert "error / naive" in rows[0]
    # --update: the settings run replace or join their rows, the others stay as written,
    # in the battery's order, and the pooled row is recomputed
    mod.main(["--reps", "3", "--n", "300", "--n-boot", "4", "--settings",
              "counts-gaussian", "payments-laplace", "--update", str(doc)])
    out2 = doc.read_text(encoding="utf-8")
    assert out2.startswith("before\n") and out2.endswith("after\n")
    rows2 = [line for line in out2.splitlines() if line.startswith("| ")]
    assert len(rows2) == 5 and rows2[0] == rows[0]
    assert rows2[1].startswith("| payments-laplace-e0.25-s0.5-fixed-n20190 | 300 | 3 | 0 |")
    assert rows2[2].startswith("| counts-gaussian-e0.5-s1-fixed-n20000 | 300 | 3 | 0 |")
    assert rows2[3] == rows[2]                               # kept as it was
    cells = [[c.strip() for c in r.strip("|").split("|")] for r in rows2[1:]]
    hits = sum(round(float(c[4].split()[0]) * int(c[2])) for c in cells[:3])
    assert cells[3][2] == "8" and cells[3][4] == f"{hits / 8:.3f}"
    assert cells[3][5] == f"{np.mean([float(c[5]) for c in cells[:3]]):.3f}"
    # a table written with other bootstrap replicates is not mixed with new rows
    with pytest.raises(ValueError, match="n-boot"):
        mod.main(["--reps", "2", "--n", "300", "--n-boot", "5", "--settings",
                  "counts-gaussian", "--update", str(doc)])


def test_battery_in_several_processes_gives_the_same_table():
    # --jobs runs the settings in other processes: the same columns, releases and
    # estimates (each setting's seed), the settings in their order; only the seconds differ
    import importlib
    mod = importlib.import_module("benchmarks.estimate_battery")
    args = ["--reps", "2", "--n", "300", "--n-boot", "4", "--settings", "counts-gaussian",
            "payments-laplace", "scaled-laplace-e0.5-s1-rows-n20000"]

    def rows(text):
        return [line.rsplit("|", 2)[0] for line in text.splitlines() if line.startswith("| ")]

    one, two = rows(mod.main(args)), rows(mod.main(args + ["--jobs", "2"]))
    assert one == two and len(one) == 5
    assert [r.split(" |")[0] for r in one[1:4]] == [
        "| payments-laplace-e0.25-s0.5-fixed-n20190", "| scaled-laplace-e0.5-s1-rows-n20000",
        "| counts-gaussian-e0.5-s1-fixed-n20000"]
    with pytest.raises(SystemExit):
        mod.main(args + ["--jobs", "0"])


def test_battery_skips_a_real_column_without_statsmodels(monkeypatch, capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "estimate_battery.py"
    spec = importlib.util.spec_from_file_location("estimate_battery", path)
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "estimate_battery", mod)
    spec.loader.exec_module(mod)
    names = [s.name for s in mod.settings()]
    assert "randhie-lpi-laplace-e0.25-s0.5-fixed-n20190" in names
    monkeypatch.setattr(mod, "_real_column", lambda shape: None)
    text = mod.main(["--reps", "1", "--settings", "randhie-lpi-laplace"])
    assert "randhie-lpi-laplace-e0.25-s0.5-fixed-n20190: skipped" in capsys.readouterr().out
    assert "| pooled | | 0 |" in text


def _payments_and_rng(seed, n=20000):
    # 24 % exact zeros at the lower bound of [0, 8], the rest piled near the top
    rng = np.random.default_rng(seed)
    u = np.clip(1.0 - rng.gamma(2.0, 0.6, n) / 8.0, 0.0, 1.0)
    u[rng.random(n) < 0.24] = 0.0
    return 8.0 * u, rng


def test_unidentified_atom_widens_to_the_likelihood_ratio_range():
    # the Gaussian's noise (sd 3.3) is 41 % of the range: the cycle rule alone
    # (gap_tol=None) stops on a flat ridge, biased by more than the bootstrap's spread; the
    # bootstrap's own interval misses the column's mean and 0.25 quantile, the
    # likelihood-ratio range holds them
    import dataclasses
    x, rng = _payments_and_rng(1)
    spec = {"mechanism": "gaussian", "epsilon": 0.25, "sensitivity": 0.5}
    y = bndp.sample(x, lower=0.0, upper=8.0, rng=rng, **spec)
    est = bndp.estimate(y, spec, lower=0.0, upper=8.0, n_boot=200, rng=101, gap_tol=None)
    plain = dataclasses.replace(est, profile=None)
    mu = float(x.mean())
    q25 = float(np.quantile(x, 0.25, method="inverted_cdf"))
    a, b = plain.mean_interval
    assert not a <= mu <= b
    # the default certifies the maximum (the noise 0.41 of the width): the fit's own
    # bootstrap interval then holds the mean
    auto = bndp.estimate(y, spec, lower=0.0, upper=8.0, n_boot=200, rng=101)
    assert abs(auto.mean - mu) < abs(est.mean - mu)
    a, b = dataclasses.replace(auto, profile=None).mean_interval
    assert a <= mu <= b
    a, b = est.mean_interval
    assert a <= mu <= b
    a, b = plain.quantile_interval(0.25)
    assert not a <= q25 <= b
    a, b = est.quantile_interval(0.25)
    assert a <= q25 <= b
    # wider, never narrower, than the bootstrap's
    for new, old in ((est.mean_interval, plain.mean_interval),
                     (est.quantile_interval([0.1, 0.5, 0.9]),
                      plain.quantile_interval([0.1, 0.5, 0.9])),
                     (est.histogram_interval(np.linspace(0, 8, 9)),
                      plain.histogram_interval(np.linspace(0, 8, 9)))):
        assert np.all(np.asarray(new[0]) <= np.asarray(old[0]) + 1e-12)
        assert np.all(np.asarray(new[1]) >= np.asarray(old[1]) - 1e-12)


def test_identified_column_keeps_the_bootstrap_intervals():
    # noise a small part of the range (Laplace, scale 1 on [0, 60]): the likelihood is as
    # curved as the bootstrap sees it, the quantiles' and bins' intervals are the
    # bootstrap's and the mean's is at most a little wider
    import dataclasses
    rng = np.random.default_rng(5)
    x = np.clip(rng.exponential(8.0, 5000), 0, 60)
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0, upper=60)
    est = bndp.estimate(m.sample(x, rng=6), m, n_boot=100, rng=7)
    plain = dataclasses.replace(est, profile=None)
    a, b = est.mean_interval
    a0, b0 = plain.mean_interval
    assert a <= a0 and b0 <= b and (b - a) <= 1.1 * (b0 - a0)
    q = [0.1, 0.5, 0.9]
    np.testing.assert_array_equal(est.quantile_interval(q), plain.quantile_interval(q))
    e = np.linspace(0, 60, 7)
    np.testing.assert_array_equal(est.histogram_interval(e), plain.histogram_interval(e))


def test_atom_the_mean_does_not_flag_widens_narrow_bins_and_quantiles():
    # 30 % of the column at 4.0, the rest uniform on [0, 10], Gaussian noise of scale 2.76:
    # the mean is identified (its likelihood-ratio range adds little), but the fit spreads
    # the atom over its neighbours and the bootstrap's intervals of the atom's bin (1.25
    # wide) and of the 0.25 quantile next to it miss the column's; their likelihood-ratio
    # ranges hold them. Bins wider than the noise scale keep the bootstrap's intervals.
    # (The fit of the cycle rule alone, gap_tol=None, the default here: the noise is 0.28
    # of the width.)
    import dataclasses
    rng = np.random.default_rng(0)
    n = 10000
    x = np.where(rng.random(n) < 0.3, 4.0, 10.0 * rng.random(n))
    spec = {"mechanism": "gaussian", "epsilon": 1.0, "sensitivity": 1.0}
    y = bndp.sample(x, lower=0.0, upper=10.0, rng=rng, **spec)
    est = bndp.estimate(y, spec, lower=0.0, upper=10.0, n_boot=200, rng=100, gap_tol=None)
    plain = dataclasses.replace(est, profile=None)
    assert est._noise_scale > 1.25
    assert not est._flat      # the mean's range: within its sd of the normal interval
    e = np.linspace(0.0, 10.0, 9)
    truth = np.histogram(x, e)[0] / n
    a, b = plain.histogram_interval(e)
    assert not a[3] <= truth[3] <= b[3]
    a, b = est.histogram_interval(e)
    assert np.all((a <= truth) & (truth <= b))
    q25 = float(np.quantile(x, 0.25, method="inverted_cdf"))
    a, b = plain.quantile_interval(0.25)
    assert not a <= q25 <= b
    a, b = est.quantile_interval(0.25)
    assert a <= q25 <= b
    # wider, never narrower, than the bootstrap's
    for new, old in ((est.quantile_interval([0.1, 0.5, 0.9]),
                      plain.quantile_interval([0.1, 0.5, 0.9])),
                     (est.histogram_interval(e), plain.histogram_interval(e))):
        assert np.all(np.asarray(new[0]) <= np.asarray(old[0]) + 1e-12)
        assert np.all(np.asarray(new[1]) >= np.asarray(old[1]) - 1e-12)
    wide = np.array([0.0, 5.0, 10.0])
    np.testing.assert_array_equal(est.histogram_interval(wide),
                                  plain.histogram_interval(wide))


def test_bins_narrower_than_the_noise_take_straddling_cells_at_their_worst():
    # a log-payment column as the RAND HIE survey's `lpi`: 24 % zeros, the rest piled just
    # below 7 on [0, 8] (0.4 % of the values in [7, 8)); Laplace at epsilon 0.25, noise
    # 3.7 wide. The support point at 7.0 stands for values on both sides of the bin edge:
    # without taking its cell at its worst the [7, 8) interval covered 22 % of releases
    # (the fit puts 0.13 there), [6, 7) 87 %
    rng = np.random.default_rng(11)
    n = 20000
    x = np.clip(6.95 - rng.gamma(1.5, 0.6, n), 2.5, 7.16)
    x[rng.random(n) < 0.1] = 6.908
    x[rng.random(n) < 0.24] = 0.0
    edges = np.linspace(0.0, 8.0, 9)
    truth = np.histogram(x, edges)[0] / n
    assert truth[7] < 0.01 and truth[6] > 0.4
    spec = {"mechanism": "laplace", "epsilon": 0.25, "sensitivity": 0.5}
    hits = np.zeros(8, dtype=int)
    reps = 8
    for _ in range(reps):
        y = bndp.sample(x, lower=0.0, upper=8.0, rng=rng, **spec)
        e = bndp.estimate(y, spec, lower=0.0, upper=8.0, n_boot=100,
                          rng=int(rng.integers(2**62)))
        lo, hi = e.histogram_interval(edges)
        hits += (lo <= truth) & (truth <= hi)
        assert np.all(hi - lo <= 0.8)          # widened, not given up
    assert hits[7] >= reps - 1 and hits[6] >= reps - 1, hits
