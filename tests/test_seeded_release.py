"""Seeded releases and forked secure generators.

A release whose noise comes from a reproducible generator (a seed, a SeedSequence, any
generator bndp did not key from the OS itself) can be undone by whoever knows the seed: with
a persistent budget it is refused unless ``allow_seeded=True`` / ``--allow-seeded``, and then
recorded as seeded; with an in-memory budget it warns. A generator bndp keyed from the OS is
re-keyed in a forked child; a seeded one stays deterministic. (Spark: tests/test_spark.py.)
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import sqlite3
import warnings

import numpy as np
import pytest

import bndp
from bndp import _random
from bndp.cli import main

pd = pytest.importorskip("pandas")

SPEC = {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.25},
        "income": {"lower": 0, "upper": 1000, "sensitivity": 10, "epsilon": 0.5}}


def _frame() -> "pd.DataFrame":
    return pd.DataFrame({"age": [23.0, 35.0, 61.0, 118.0, 40.0],
                         "income": [10.0, 500.0, 999.0, 0.0, 250.0],
                         "name": list("abcde")})


def _new_budget(store, name, epsilon):
    """A new persistent budget (``Budget.create`` where the library has it)."""
    create = getattr(bndp.Budget, "create", None)
    if create is not None:
        return create(store, name, epsilon=epsilon)
    return bndp.Budget.create(store, name, epsilon=epsilon)


def _reproducible_rngs():
    """Every kind of generator bndp cannot tell from a seeded one."""
    return {"int": 42, "seed sequence": np.random.SeedSequence(42),
            "numpy generator": np.random.default_rng(42),
            "numpy generator without seed": np.random.default_rng(),
            "bit generator": np.random.PCG64(42),
            "bndp seeded": bndp.default_rng(42)}


# --- which generators are secure -----------------------------------------------------------

def test_only_none_and_generators_bndp_keyed_itself_are_secure():
    g = bndp.default_rng()
    assert _random.is_secure(None)
    assert _random.is_secure(g) and _random.is_secure(g.bit_generator)
    assert _random.is_secure(bndp.default_rng(None))
    for kind in ("aes", "chacha"):
        bg = _random.secure_bit_generator(kind)
        assert _random.is_secure(bg) and _random.is_secure(np.random.Generator(bg))
    assert all(_random.is_secure(k) for k in _random.spawn(None, 3))
    assert all(_random.is_secure(k) for k in _random.spawn(g, 3))      # secure children
    for name, rng in _reproducible_rngs().items():
        assert not _random.is_secure(rng), name
    assert not all(_random.is_secure(k) for k in _random.spawn(42, 2))
    # a copy of a secure generator repeats its stream: reproducible
    copy = pickle.loads(pickle.dumps(g))
    assert not _random.is_secure(copy)
    same = type(g.bit_generator)()
    same.state = g.bit_generator.state
    assert not _random.is_secure(same)
    with pytest.raises(TypeError, match="rng"):
        _random.is_secure("42")


# --- the API: persistent budgets refuse a seeded release without the opt-in -------------------

@pytest.mark.parametrize("kind", list(_reproducible_rngs()))
def test_seeded_release_on_a_persistent_budget_is_refused(store, kind):
    name = f"seeded-{kind.replace(' ', '-')}-{os.getpid()}-{id(store)}"
    b = _new_budget(store, name, 10.0)
    rng = _reproducible_rngs()[kind]
    before = rng.bit_generator.state if isinstance(rng, np.random.Generator) else None
    with pytest.raises(ValueError, match="allow_seeded=True") as err:
        bndp.privatize(_frame(), SPEC, budget=b, rng=rng)
    assert "nothing was drawn or charged" in str(err.value)
    assert b.spent == (0.0, 0.0) and b.history == []
    if before is not None:                       # nothing drawn from it either
        assert rng.bit_generator.state == before


def test_allowed_seeded_release_is_recorded_as_seeded(store, caplog):
    name = f"allowed-{os.getpid()}-{id(caplog)}"
    b = _new_budget(store, name, 10.0)
    caplog.set_level(logging.INFO, logger="bndp")
    out = bndp.privatize(_frame(), SPEC, budget=b, rng=42, allow_seeded=True)
    again = bndp.privatize(_frame(), SPEC, budget=b, rng=42, allow_seeded=True)
    # the reason for the refusal: the same seed gives the same noise
    pd.testing.assert_frame_equal(out, again)
    bndp.privatize(_frame(), SPEC, budget=b)                     # rng=None
    bndp.privatize(_frame(), SPEC, budget=b, rng=bndp.default_rng())
    hist = b.history
    assert [e.seeded for e in hist] == [True, True, False, False]
    for e in hist:
        assert [c["seeded"] for c in e.columns] == [e.seeded] * 2
    again = bndp.Budget.open(store, name)                        # read back from the store
    assert [e.seeded for e in again.history] == [True, True, False, False]
    logged = [r.bndp_release for r in caplog.records if hasattr(r, "bndp_release")]
    assert [r["seeded"] for r in logged] == [True, True, False, False]
    messages = [r.getMessage() for r in caplog.records if hasattr(r, "bndp_release")]
    assert ["seeded" in m for m in messages] == [True, True, False, False]


def test_in_memory_budget_warns_about_a_seeded_release():
    b = bndp.Budget(epsilon=10.0)
    with pytest.warns(bndp.PrivacyLeakWarning, match="allow_seeded=True"):
        bndp.privatize(_frame(), SPEC, budget=b, rng=7)
    assert b.spent.epsilon == 0.75                               # not refused
    with warnings.catch_warnings():
        warnings.simplefilter("error", bndp.PrivacyLeakWarning)
        bndp.privatize(_frame(), SPEC, budget=b, rng=7, allow_seeded=True)
        bndp.privatize(_frame(), SPEC, budget=b)
        bndp.privatize(_frame(), SPEC, budget=b, rng=bndp.default_rng())
        bndp.privatize(_frame(), SPEC, rng=7)                    # no budget: tests, research
    assert b.spent.epsilon == 3.0


def test_allow_seeded_must_be_a_bool(tmp_path):
    b = _new_budget(str(tmp_path / "l.db"), "b", 1.0)
    with pytest.raises(TypeError, match="allow_seeded"):
        bndp.privatize(_frame(), SPEC, budget=b, rng=1, allow_seeded="yes")
    assert b.history == []


def test_a_store_without_the_seeded_flag_still_reads_and_records(tmp_path):
    # a release row as bndp 0.7.0 wrote it: no "seeded" in its columns
    path = str(tmp_path / "old.db")
    b = _new_budget(path, "old", 5.0)
    b.charge({"age": (0.25, 0.0)}, label="privatize(age)",
             details={"age": {"mechanism": "laplace", "sensitivity": 1.0,
                              "bounds": [0.0, 120.0], "mode": "exact",
                              "certified_loss": 0.25}})
    b.spend(0.5, label="manual")
    con = sqlite3.connect(path)
    cols = json.loads(con.execute("SELECT columns FROM bndp_release WHERE seq = 1").fetchone()[0])
    con.close()
    assert all("seeded" not in c for c in cols)
    assert [e.seeded for e in b.history] == [None, None]          # not recorded: unknown
    bndp.privatize(_frame(), SPEC, budget=b, rng=3, allow_seeded=True)
    assert [e.seeded for e in bndp.Budget.open(path, "old").history] == [None, None, True]


# --- the command line ------------------------------------------------------------------------

def _csv(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("age,name\n23,a\n35,b\n61,c\n118,d\n")
    return str(src)


def _privatize(capsys, tmp_path, *extra):
    args = ["privatize", _csv(tmp_path), "-o", str(tmp_path / "out.csv"), "--column",
            "age:0:120", "--epsilon", "0.5", "--sensitivity", "1",
            "--summary-json", str(tmp_path / "run.json"), *extra]
    code = main(args)
    return code, capsys.readouterr().err


def test_cli_seed_with_a_persistent_budget_is_a_usage_error(tmp_path, capsys):
    store = str(tmp_path / "ledger.db")
    _new_budget(store, "b", 2.0)
    code, err = _privatize(capsys, tmp_path, "--seed", "42", "--budget-store", store,
                           "--budget-name", "b")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bndp: error: --seed")
    assert "--allow-seeded" in lines[0]
    assert not (tmp_path / "out.csv").exists()
    # the run record says so: refused, nothing charged
    run = json.loads((tmp_path / "run.json").read_text())
    assert (run["status"], run["exit_code"], run["error_kind"], run["charged"]) == (
        "error", 2, "usage", None)
    assert run["error"] == lines[0].removeprefix("bndp: error: ")
    assert bndp.Budget.open(store, "b").history == []


def test_cli_seed_with_a_spec_budget_creates_nothing(tmp_path, capsys):
    spec = tmp_path / "release.toml"
    spec.write_text('[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 0.5\n'
                    '[budget]\nstore = "new.db"\nname = "n"\nepsilon = 1.0\n')
    code = main(["privatize", _csv(tmp_path), "-o", str(tmp_path / "out.csv"), "--spec",
                 str(spec), "--seed", "3"])
    err = capsys.readouterr().err
    assert code == 2 and "--allow-seeded" in err
    assert not (tmp_path / "new.db").exists() and not (tmp_path / "out.csv").exists()


def test_cli_allowed_seeded_release_is_recorded(tmp_path, capsys):
    store = str(tmp_path / "ledger.db")
    _new_budget(store, "b", 2.0)
    code, err = _privatize(capsys, tmp_path, "--seed", "42", "--allow-seeded",
                           "--budget-store", store, "--budget-name", "b")
    assert code == 0
    assert ", seeded (--seed, --allow-seeded: reproducible)" in err
    first = (tmp_path / "out.csv").read_text()
    assert json.loads((tmp_path / "run.json").read_text())["seeded"] is True
    code, err = _privatize(capsys, tmp_path, "--budget-store", store, "--budget-name", "b")
    assert code == 0 and "seeded (--seed" not in err
    assert json.loads((tmp_path / "run.json").read_text())["seeded"] is False
    assert [e.seeded for e in bndp.Budget.open(store, "b").history] == [True, False]
    # the seeded release is reproducible: the reason it needs the opt-in
    code, _ = _privatize(capsys, tmp_path, "--seed", "42")
    assert code == 0 and (tmp_path / "out.csv").read_text() == first
    assert json.loads((tmp_path / "run.json").read_text())["seeded"] is True
    assert main(["budget", "show", "b", "--store", store, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [r["seeded"] for r in shown["releases"]] == [True, False]


def test_cli_seed_with_an_in_memory_budget_warns(tmp_path, capsys):
    spec = tmp_path / "release.toml"
    spec.write_text('[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 0.5\n'
                    '[budget]\nepsilon = 1.0\n')
    code = main(["privatize", _csv(tmp_path), "-o", str(tmp_path / "out.csv"), "--spec",
                 str(spec), "--seed", "3"])
    err = capsys.readouterr().err
    assert code == 0
    assert "bndp: warning: --seed makes the noise reproducible" in err
    assert "--allow-seeded" in err


# --- Dask: every partition draws from a secure generator ----------------------------------

def test_dask_release_is_recorded_unseeded_from_secure_partition_generators(tmp_path,
                                                                             monkeypatch,
                                                                             caplog):
    dd = pytest.importorskip("dask.dataframe")
    import dask

    from bndp.integrations import dask as bdask

    secure = []
    real = bdask.draw

    def draw(nw, frame, plans, prepared, gens):
        secure.extend(_random.is_secure(g) for g in gens)
        return real(nw, frame, plans, prepared, gens)

    monkeypatch.setattr(bdask, "draw", draw)
    caplog.set_level(logging.INFO, logger="bndp")
    b = _new_budget(str(tmp_path / "l.db"), "dask", 5.0)
    ddf = dd.from_pandas(_frame(), npartitions=2)
    with dask.config.set(scheduler="synchronous"):
        out = bndp.dask.privatize(ddf, SPEC, budget=b).compute()
    assert out.shape == _frame().shape
    assert secure and all(secure)
    assert [e.seeded for e in b.history] == [False]
    logged = [r.bndp_release for r in caplog.records if hasattr(r, "bndp_release")]
    assert [r["seeded"] for r in logged] == [False]
    with pytest.raises(ValueError, match="rng"):             # a seed cannot reach Dask
        bndp.privatize(ddf, SPEC, budget=b, rng=1, allow_seeded=True)
    assert len(b.history) == 1


# --- fork: secure generators re-key in the child, seeded ones do not ------------------------

def _in_children(fn, n=1):
    """``fn()`` (an array of float64) computed in ``n`` forked children, one after another."""
    outs = []
    for _ in range(n):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            try:
                os.close(r)
                os.write(w, np.asarray(fn(), dtype=np.float64).tobytes())
            finally:
                os._exit(0)
        os.close(w)
        data = b""
        while chunk := os.read(r, 65536):
            data += chunk
        os.close(r)
        os.waitpid(pid, 0)
        outs.append(np.frombuffer(data, dtype=np.float64))
    return outs


needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _mech():
    return bndp.BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=100.0)


@needs_fork
@pytest.mark.parametrize("make", ["default_rng", "aes", "chacha"])
def test_forked_children_of_a_secure_generator_draw_new_noise(make):
    g = (bndp.default_rng() if make == "default_rng"
         else np.random.Generator(_random.secure_bit_generator(make)))
    g.random()                                     # the stream is under way at the fork

    def draws():
        return np.concatenate([g.random(8), _mech().sample(np.full(8, 50.0), rng=g)])

    kids = _in_children(draws, 3)
    parent = draws()                               # what a child replaying the state draws
    assert all(k.shape == (16,) for k in kids)
    for k in kids:
        assert set(k[:8].tolist()).isdisjoint(parent[:8].tolist())
        assert not np.array_equal(k[8:], parent[8:])
    for i in range(3):
        for j in range(i + 1, 3):
            assert set(kids[i][:8].tolist()).isdisjoint(kids[j][:8].tolist())


@needs_fork
def test_forked_child_of_a_secure_generator_keeps_it_secure():
    g = bndp.default_rng()
    (flag,) = _in_children(lambda: [float(_random.is_secure(g))])
    assert flag.tolist() == [1.0]


@needs_fork
@pytest.mark.parametrize("seed", [7, np.random.SeedSequence(7)])
def test_forked_children_of_a_seeded_generator_stay_deterministic(seed):
    g = bndp.default_rng(seed)
    g.random()

    def draws():
        return np.concatenate([g.random(8), _mech().sample(np.full(8, 50.0), rng=g)])

    kids = _in_children(draws, 2)
    parent = draws()
    for k in kids:
        np.testing.assert_array_equal(k, parent)



@needs_fork
def test_fork_while_another_thread_holds_a_secure_generator_does_not_hang():
    import threading
    import time

    busy = bndp.default_rng()
    g = bndp.default_rng()
    g.random()
    held, done = threading.Event(), threading.Event()

    def hold():
        with busy.bit_generator.lock:          # a draw under way in another thread
            held.set()
            done.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(10)
    try:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: the fork hooks ran; the other generators were re-keyed
            try:
                os.close(r)
                os.write(w, g.random(8).tobytes())
            finally:
                os._exit(0)
        os.close(w)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                break
            time.sleep(0.05)
        else:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung in bndp's fork hook")
        data = b""
        while chunk := os.read(r, 65536):
            data += chunk
        os.close(r)
    finally:
        done.set()
        t.join()
    child = np.frombuffer(data, dtype=np.float64)
    assert child.shape == (8,)
    assert set(child.tolist()).isdisjoint(g.random(8).tolist())


def test_default_generator_without_randomgen_warns_once(monkeypatch):
    import bndp._random as r

    monkeypatch.setattr(r, "_AESCounter", None)
    monkeypatch.setattr(r, "_warned_fallback", False)
    with pytest.warns(bndp.PrivacyLeakWarning, match="not cryptographically secure"):
        g = bndp.default_rng()
    assert isinstance(g.bit_generator, np.random.PCG64)
    assert r.is_secure(g)                        # keyed from the OS by bndp, not seeded
    with warnings.catch_warnings():
        warnings.simplefilter("error", bndp.PrivacyLeakWarning)
        bndp.default_rng()                       # once a process
