"""Edge cases found by an outside check of the release paths: forked workers, seeded
generators, and what the documentation promises."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import bndp


def _draw_in_forks(draw, n_children: int = 2) -> list[bytes]:
    """``draw()`` in ``n_children`` forked children and then in the parent; the raw bytes."""
    outs = []
    for _ in range(n_children):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 1
            try:
                os.close(r)
                data = draw().tobytes()
                while data:
                    data = data[os.write(w, data):]
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        chunks = []
        while True:
            c = os.read(r, 1 << 16)
            if not c:
                break
            chunks.append(c)
        os.close(r)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        outs.append(b"".join(chunks))
    outs.append(draw().tobytes())
    return outs


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
@pytest.mark.parametrize("kind", ["default_rng", "none"])
def test_secure_generator_with_workers_draws_new_noise_after_fork(kind):
    # 2 * 32768 draws: enough for two threads; the parent's generator made before the fork
    x = np.full(1 << 16, 60.0)
    g = bndp.default_rng() if kind == "default_rng" else None

    def draw():
        return bndp.sample(x, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0,
                           upper=120, rng=g, workers=2)

    if g is None:
        draw()  # the thread's default generator exists before the fork
    outs = _draw_in_forks(draw)
    assert len(outs) == 3 and all(len(o) == x.size * 8 for o in outs)
    assert len(set(outs)) == 3


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_seeded_generator_with_workers_stays_deterministic_after_fork():
    x = np.full(1 << 16, 60.0)
    g = bndp.default_rng(1234)

    def draw():
        return bndp.sample(x, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0,
                           upper=120, rng=g, workers=2)

    outs = _draw_in_forks(draw)
    assert len(set(outs)) == 1
    ref = bndp.sample(x, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0,
                      upper=120, rng=bndp.default_rng(1234), workers=2)
    assert outs[0] == ref.tobytes()


# --- PostgreSQL passwords in error messages ----------------------------------------------
_PW = "QaSecretPw9876"


def test_password_with_an_unencoded_slash_is_not_quoted_by_psycopg():
    pytest.importorskip("psycopg")
    url = f"postgresql://postgres:{_PW}/x@/postgres?host=/nonexistent-bndp-socket"
    with pytest.raises((ValueError, ConnectionError)) as err:
        bndp.Budget.open(url, "x")
    assert _PW not in str(err.value) and _PW not in repr(err.value)


def test_keyword_value_connection_string_password_is_not_shown():
    dsn = f"host=/nonexistent-bndp-socket user=postgres password={_PW} dbname=postgres"
    with pytest.raises((ValueError, ConnectionError)) as err:
        bndp.Budget.open(dsn, "x")
    assert _PW not in str(err.value) and _PW not in repr(err.value)


# --- bndp.estimate: a value that is not a released output is not quoted ------------------
_TRUE = 987654.321


def test_estimate_does_not_quote_a_value_off_the_grid(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    settings = {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 1}
    with pytest.raises(ValueError, match="is not an output") as err:
        bndp.estimate(pd.Series([1.0, _TRUE], name="age"), settings)
    assert "987654" not in str(err.value)
    pytest.importorskip("pyarrow")
    from bndp.cli import main
    (tmp_path / "r.csv").write_text(f"age\n1\n{_TRUE}\n")
    (tmp_path / "s.toml").write_text("[columns.age]\nlower = 0\nupper = 120\n"
                                     "sensitivity = 1\nepsilon = 1\n")
    assert main(["estimate", str(tmp_path / "r.csv"), "--spec", str(tmp_path / "s.toml")]) != 0
    out, err = capsys.readouterr()
    assert "not an output" in err and "987654" not in out + err


@pytest.mark.parametrize("n_rows", [2, 400])
def test_estimate_with_per_row_bounds_quotes_neither_value_nor_bounds(n_rows):
    pd = pytest.importorskip("pandas")
    # per-row bounds [13.375, 777.125] (data); 2 rows: the scaled model, 400: the strata
    x = np.full(n_rows, 100.0)
    x[-1] = _TRUE
    df = pd.DataFrame({"age": x, "lo": 13.375, "hi": 777.125})
    settings = {"lower": "lo", "upper": "hi", "sensitivity": 1, "epsilon": 1}
    with pytest.raises(ValueError, match="not an output") as err:
        bndp.estimate(df, {"age": settings})
    text = str(err.value)
    assert "987654" not in text and "13.375" not in text and "777.125" not in text


def test_secure_generator_reseeded_in_place_is_reproducible(tmp_path):
    pd = pytest.importorskip("pandas")
    store = str(tmp_path / "ledger.db")
    bndp.Budget.create(store, "s", epsilon=5.0)
    g = bndp.default_rng()
    g.bit_generator.seed(key=1234)       # now anyone who knows 1234 replays the noise
    with pytest.raises(ValueError, match="allow_seeded"):
        bndp.privatize(pd.DataFrame({"a": [1.0, 2.0]}),
                       {"a": {"lower": 0, "upper": 10, "sensitivity": 1, "epsilon": 0.5}},
                       budget=bndp.Budget.open(store, "s"), rng=g)


def test_secure_generator_given_a_state_is_reproducible():
    g = bndp.default_rng()
    assert bndp._random.is_secure(g)
    g.bit_generator.state = g.bit_generator.state   # a state someone else knows
    assert not bndp._random.is_secure(g)
    h = bndp.default_rng()
    bndp._random._key_from_os(h.bit_generator)       # bndp's own re-keying keeps it secure
    assert bndp._random.is_secure(h)
