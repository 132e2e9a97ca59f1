"""benchmarks/compare_integer.py: the closed forms of the peers' integer laws (clamped and
folded two-sided geometric), the exact metrics computed from a pmf, bndp's integer law
through its pmf and certificate, the draws check, the docs' tables and the timing."""

import math
import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "benchmarks")

if not os.path.isdir(BENCH):
    pytest.skip("needs the source tree", allow_module_level=True)


@pytest.fixture
def ci(monkeypatch):
    monkeypatch.syspath_prepend(BENCH)
    import compare_integer
    return compare_integer


def test_fold_reflects_at_each_bound(ci):
    v = np.array([-1, -2, -120, 121, 130, 240, 241, 0, 60, 120])
    assert ci.fold(v).tolist() == [1, 2, 120, 119, 110, 0, 1, 0, 60, 120]


def test_truncated_geometric_closed_form(ci):
    a = math.exp(-1.0)
    c = (1 - a) / (1 + a)
    P = ci.truncated_geometric(1.0)
    assert P.shape == (121, 121)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-13)
    # the lower bound takes the whole tail below it: 1/(1 + a) at true value 0
    assert P[0, 0] == pytest.approx(0.7310585786300049, rel=1e-13)
    assert P[0, 1] == pytest.approx(c * a, rel=1e-13)
    assert P[60, 63] == pytest.approx(c * a ** 3, rel=1e-13)
    assert P[118, 120] == pytest.approx(a ** 2 / (1 + a), rel=1e-13)
    m = ci.metrics(P)
    # E[max(z, 0)] = a / (1 - a^2) at the bound (the upper clamp is e^-120 away)
    assert m["bias"][0] == pytest.approx(a / (1 - a * a), rel=1e-12)
    assert m["bias"][60] == pytest.approx(0.0, abs=1e-12)
    # inside, the variance of the two-sided geometric law, 2a / (1 - a)^2
    assert m["mse"][60] == pytest.approx(2 * a / (1 - a) ** 2, rel=1e-12)
    assert m["loss"] == pytest.approx(1.0, rel=1e-12) and m["unlisted"] == 0


def test_folded_geometric_closed_form(ci):
    a = math.exp(-1.0)
    c = (1 - a) / (1 + a)
    P = ci.folded_geometric(1.0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-13)
    # the bound keeps only its own offset; the next value takes z = +1 and z = -1 (folded)
    assert P[0, 0] == pytest.approx(c, rel=1e-12)
    assert P[0, 1] == pytest.approx(2 * c * a, rel=1e-12)
    assert P[120, 118] == pytest.approx(2 * c * a * a, rel=1e-12)
    assert P[60, 60] == pytest.approx(c, rel=1e-12)
    m = ci.metrics(P)
    # at the bound the folded noise is |z|: E|z| = 2a / (1 - a^2)
    assert m["bias"][0] == pytest.approx(2 * a / (1 - a * a), rel=1e-12)
    assert m["loss"] <= 1.0 + 1e-12


def test_metrics_of_a_law_with_unlisted_outputs(ci):
    # a law whose neighbouring rows disagree on which outputs have mass: reported apart
    P = np.zeros((121, 121))
    P[np.arange(121), np.arange(121)] = 0.5
    P[np.arange(121), np.minimum(np.arange(121) + 1, 120)] += 0.5
    m = ci.metrics(P)
    # rows x and x + 1 share the output x + 1 (0.5 each); only 119 and 120 differ there
    # (0.5 against 1 at 120): the loss over the shared outputs is ln 2
    assert m["unlisted"] == 2 * 119 + 1 and m["loss"] == pytest.approx(math.log(2.0))
    assert m["lower"][0] == 0.5 and m["upper"][120] == 1.0


def test_bndp_integer_law_through_its_pmf(ci):
    P, cert, mech = ci.bndp_law("laplace", 1.0)
    assert mech.integer == 1
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    m = ci.metrics(P)
    # the realised loss over the listed outputs never exceeds the certificate, which is
    # at most epsilon
    assert m["loss"] <= cert * (1 + 1e-9) and cert <= 1.0
    # the bounded law is symmetric under the range's reflection
    np.testing.assert_allclose(P[::-1, ::-1], P, rtol=1e-9, atol=1e-300)


def test_goodness_tells_the_law_from_another(ci):
    p = ci.truncated_geometric(0.5)[2]
    rng = np.random.default_rng(7)
    same = rng.multinomial(100_000, p)
    other = rng.multinomial(100_000, ci.folded_geometric(0.5)[2])
    pv, tv = ci.goodness(same, p)
    assert pv > 1e-3 and tv < 0.02
    pv2, tv2 = ci.goodness(other, p)
    assert pv2 < 1e-12 and tv2 > 0.1


def test_bndp_draws_are_int64_in_range_and_follow_the_pmf(ci):
    counts = ci.bndp_counts(0.5, 2, 20_000, seed=3)
    for law in ("bndp-laplace", "bndp-gaussian"):
        assert sum(counts[law]) == 20_000 and len(counts[law]) == 121
        pv, _ = ci.goodness(counts[law], ci.law_matrix(law, 0.5)[2])
        assert pv > 1e-4, law


def test_opendp_draws_clamped(ci):
    pytest.importorskip("opendp")
    res = ci.opendp_counts(1.0, 0, 5_000)
    counts = np.array(res["opendp-clamped"])
    assert counts.sum() == 5_000 and counts.size == 121
    assert res["map"] <= 1.0 + 1e-9
    # clamped at 0: about 1/(1 + e^-1) = 0.731 of the draws at the bound (OpenDP's own
    # randomness: 12 standard deviations of slack)
    assert abs(counts[0] / 5_000 - 0.7311) < 12 * math.sqrt(0.7311 * 0.2689 / 5_000)


def test_tables_and_write_docs(ci, tmp_path):
    res = ci.compare(epsilons=(2.0,))
    text = ci.tables(res, ci.ages(), None, epsilons=(2.0,))
    assert "**ε = 2**: bias / mean squared error" in text
    assert "| ages column |" in text and "OpenDP discrete Laplace, clamped" in text
    # the clamped geometric's bias at the bound, a / (1 - a^2) at a = e^-2
    a = math.exp(-2.0)
    # the clamped geometric at true value 0 (diffprivlib's and OpenDP's columns): bias
    # E[max(z, 0)] = a / (1 - a^2), mean squared error E[max(z, 0)^2] = a / (1 - a)^2
    row0 = text.split("\n| 0 | ")[1].split("\n")[0].rstrip(" |").split(" | ")
    want = f"+{a / (1 - a * a):.2f} / {a / (1 - a) ** 2:.3g}"
    assert row0[2] == row0[4] == want
    assert "2.00000000 ✓" in text and "✗" not in text
    doc = tmp_path / "page.md"
    doc.write_text(f"# Page\n\n{ci.START}\nPREVIOUS TABLE\n{ci.END}\n\n{ci.SPEED_START}\n"
                   f"{ci.SPEED_END}\n", encoding="utf-8")
    ci.write_docs(str(doc), text)
    ci.write_docs(str(doc), "timing", ci.SPEED_START, ci.SPEED_END)
    out = doc.read_text(encoding="utf-8")
    assert "PREVIOUS TABLE" not in out and text in out and f"{ci.SPEED_START}\ntiming\n" in out
    bare = tmp_path / "bare.md"
    bare.write_text("# Page\n", encoding="utf-8")
    with pytest.raises(ValueError, match="markers"):
        ci.write_docs(str(bare), text)


def test_speed_rows(ci):
    rows = ci.speed(n=20_000, repeat=1)
    assert [(r["mechanism"], r["bounds"], r["step"]) for r in rows] == [
        (m, b, k) for m in ("laplace", "gaussian") for b in ("fixed", "per-row")
        for k in (1, 5)]
    assert all(r["integer_s"] > 0 and r["grid_s"] > 0 and
               r["ratio"] == r["integer_s"] / r["grid_s"] for r in rows)
    assert "| laplace | per-row | 5 |" in ci.speed_table(rows, 20_000, 1)


def test_ages_column(ci):
    col = ci.ages()
    assert col.size == 1000 and col.dtype == np.int64
    assert col.min() >= 0 and col.max() <= 120
    assert sys.modules["compare_integer"] is ci
