"""Persistent budgets (bndp.Budget.open) on a real SQLite file and a real PostgreSQL server:
the Budget interface, caps that never change, release ids, the recorded history, every
release path charging them, and the command line across separate invocations."""

from __future__ import annotations

import json
import os
import socket
import uuid

import numpy as np
import pytest

import bndp
from bndp.cli import main

pd = pytest.importorskip("pandas")

SPEC = {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.25},
        "score": {"lower": "lo", "upper": "hi", "sensitivity": 1, "epsilon": 0.25,
                  "delta": 1e-7}}


def _name() -> str:
    return "b-" + uuid.uuid4().hex[:12]


def _frame(n: int = 50) -> "pd.DataFrame":
    i = np.arange(n)
    return pd.DataFrame({"age": (i * 7) % 100 * 1.0, "score": (i % 5) + 0.5,
                         "lo": np.zeros(n), "hi": np.full(n, 10.0), "name": [f"n{k}" for k in i]})


def test_open_spend_reopen(store):
    name = _name()
    b = bndp.Budget.create(store, name, epsilon=1.0, delta=1e-6)
    assert isinstance(b, bndp.Budget) and isinstance(b, bndp.budget.PersistentBudget)
    assert (b.epsilon, b.delta, b.composition, b.name) == (1.0, 1e-6, "basic", name)
    assert b.spent == (0.0, 0.0) and b.remaining == (1.0, 1e-6)
    assert b.spend(0.25, 1e-7, label="a") == (0.25, 1e-7)
    # another handle (another process would open it the same way) sees the spend
    again = bndp.Budget.open(store, name)
    assert again.spent == (0.25, 1e-7)
    assert again.remaining.epsilon == 0.75
    again.charge({"x": (0.5, 0.0), "y": (0.25, 0.0)}, label="two columns")
    assert b.remaining.epsilon == 0.0
    with pytest.raises(bndp.BudgetError, match="exceed") as err:
        b.spend(0.125)
    assert not isinstance(err.value, bndp.ReleaseRecorded)
    assert [r.label for r in b.log] == ["a", "two columns"]
    assert b.log[1].columns == {"x": (0.5, 0.0), "y": (0.25, 0.0)}
    assert b.log[1].cost == (0.75, 0.0)
    # the same cap given again is fine; another one never changes the recorded cap
    bndp.Budget.open(store, name, epsilon=1.0, delta=1e-6)
    with pytest.raises(ValueError, match="another cap"):
        bndp.Budget.open(store, name, epsilon=2.0)
    with pytest.raises(ValueError, match="another cap"):
        bndp.Budget.open(store, name, epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="another cap"):
        bndp.Budget.open(store, name, composition="optimal")
    assert bndp.Budget.open(store, name).epsilon == 1.0


def test_exact_sums_across_handles(store):
    # the exact sums of the decimals decide, as in memory: ten times 0.1 is 1.0
    name = _name()
    mem = bndp.Budget(epsilon=1.0)
    b = bndp.Budget.create(store, name, epsilon=1.0)
    outcomes = []
    for _ in range(11):
        r = []
        for budget in (mem, bndp.Budget.open(store, name)):
            try:
                budget.spend(0.1)
                r.append(True)
            except bndp.BudgetError:
                r.append(False)
        outcomes.append(tuple(r))
    assert all(m == p for m, p in outcomes)
    assert b.spent == mem.spent and b.remaining == mem.remaining


@pytest.mark.parametrize("bad,exc,needle", [
    (dict(epsilon=-1.0), ValueError, "epsilon"),
    (dict(epsilon=0.0), ValueError, "epsilon"),
    (dict(epsilon=float("nan")), ValueError, "epsilon"),
    (dict(epsilon=1.0, delta=1.0), ValueError, "delta"),
    (dict(epsilon="1"), TypeError, "epsilon"),
    (dict(epsilon=1.0, composition="advanced"), ValueError, "composition"),
    (dict(epsilon=None), ValueError, "epsilon"),
    (dict(epsilon=1.0, exist_ok=1), TypeError, "exist_ok"),
])
def test_invalid_cap(store, bad, exc, needle):
    name = _name()
    with pytest.raises(exc, match=needle):
        bndp.Budget.create(store, name, **bad)
    opening = {k: v for k, v in bad.items() if v is not None}
    if opening and "exist_ok" not in bad:  # open checks the cap it is given the same way
        with pytest.raises(exc, match=needle):
            bndp.Budget.open(store, name, **opening)


def test_invalid_store_and_name(tmp_path):
    with pytest.raises(ValueError, match="unknown URL scheme 'mysql'"):
        bndp.Budget.open("mysql://host/db", "x", epsilon=1.0)
    with pytest.raises(TypeError, match="store"):
        bndp.Budget.open(42, "x", epsilon=1.0)
    with pytest.raises(ValueError, match="does not exist"):
        bndp.Budget.open(str(tmp_path / "no" / "such" / "dir.db"), "x", epsilon=1.0)
    with pytest.raises(ValueError, match="no budget store"):
        bndp.Budget.open(str(tmp_path / "missing.db"), "x")
    assert not (tmp_path / "missing.db").exists()
    with pytest.raises(TypeError, match="name"):
        bndp.Budget.open(str(tmp_path / "l.db"), 3, epsilon=1.0)
    with pytest.raises(ValueError, match="name"):
        bndp.Budget.open(str(tmp_path / "l.db"), "", epsilon=1.0)
    b = bndp.Budget.create(str(tmp_path / "l.db"), "x", epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        b.spend(-0.5)
    with pytest.raises(TypeError, match="release_id"):
        b.spend(0.1, release_id=5)
    assert b.spent == (0.0, 0.0)


def test_postgres_url_is_checked():
    pytest.importorskip("psycopg")
    with pytest.raises(ConnectionError, match="cannot connect"):
        bndp.Budget.open("postgresql:///nodb?host=/nonexistent-bndp-socket", "x", epsilon=1.0)


def test_release_id_refused_before_anything_is_drawn(store, monkeypatch):
    name = _name()
    b = bndp.Budget.create(store, name, epsilon=2.0, delta=1e-6)
    df = _frame()
    out = bndp.privatize(df, SPEC, budget=b, release_id="2024-06-01")
    assert out.shape == df.shape
    assert b.spent.epsilon == 0.5
    drawn = []
    import bndp._release as rel

    real = rel.ColumnPlan.draw
    monkeypatch.setattr(rel.ColumnPlan, "draw",
                        lambda self, *a, **k: drawn.append(self.name) or real(self, *a, **k))
    with pytest.raises(bndp.ReleaseRecorded, match="2024-06-01") as err:
        bndp.privatize(df, SPEC, budget=bndp.Budget.open(store, name), release_id="2024-06-01")
    assert err.value.release_id == "2024-06-01" and isinstance(err.value, bndp.BudgetError)
    assert drawn == [] and b.spent.epsilon == 0.5 and len(b.history) == 1
    bndp.privatize(df, SPEC, budget=b, release_id="2024-06-02")
    assert [e.release_id for e in b.history] == ["2024-06-01", "2024-06-02"]
    with pytest.raises(ValueError, match="needs a `budget`"):
        bndp.privatize(df, SPEC, release_id="x")


def test_in_memory_budget_takes_release_ids():
    b = bndp.Budget(epsilon=1.0)
    b.spend(0.25, release_id="a")
    with pytest.raises(bndp.ReleaseRecorded):
        b.spend(0.25, release_id="a")
    bndp.privatize(_frame(), {"age": SPEC["age"]}, budget=b, release_id="b")
    with pytest.raises(bndp.ReleaseRecorded):
        bndp.privatize(_frame(), {"age": SPEC["age"]}, budget=b, release_id="b")
    assert b.spent == (0.5, 0.0)


def test_history_records_every_detail(store):
    b = bndp.Budget.create(store, _name(), epsilon=2.0, delta=1e-6)
    spec = dict(SPEC, income={"mechanism": "gaussian", "lower": 0, "upper": 1000,
                              "sensitivity": 10, "epsilon": 0.5, "mode": "continuous"},
                visits={"lower": 0, "upper": 50, "sensitivity": 1, "epsilon": 0.25})
    df = _frame().assign(income=500.0, visits=np.arange(50, dtype=np.int32) % 7)
    bndp.privatize(df, spec, budget=b, release_id="r1")
    (e,) = b.history
    assert e.seq == 1 and e.release_id == "r1" and (
        e.label == "privatize(age, score, income, visits)")
    assert e.host == socket.gethostname() and e.pid == os.getpid()
    assert e.version == bndp.__version__
    assert e.cost == (1.25, 1e-7)
    assert e.seeded is False and all(c.pop("seeded") is False for c in e.columns)  # rng=None
    cols = {c["column"]: c for c in e.columns}
    assert cols["age"] == {"column": "age", "epsilon": 0.25, "delta": 0.0,
                           "mechanism": "laplace", "sensitivity": 1.0, "bounds": [0.0, 120.0],
                           "mode": "exact", "law": "grid",
                           "certified_loss": cols["age"]["certified_loss"],
                           "epsilon_per_sensitivity": 0.25,
                           "whole_range_loss": cols["age"]["whole_range_loss"],
                           "whole_range_loss_note": None}
    assert 0.24 < cols["age"]["certified_loss"] <= 0.25
    # a change across the whole range [0, 120] costs far more than one sensitivity unit
    assert 0.25 * 10 < cols["age"]["whole_range_loss"] <= 0.25 * 120
    assert cols["score"]["bounds"] == "per-row from columns lo/hi"
    assert cols["score"]["certified_loss"] is None and cols["score"]["delta"] == 1e-7
    assert cols["score"]["whole_range_loss"] is None
    assert "per-row" in cols["score"]["whole_range_loss_note"]
    assert cols["income"]["mechanism"] == "gaussian" and cols["income"]["mode"] == "continuous"
    assert cols["income"]["certified_loss"] <= 0.5 + 1e-9
    # the law each column was released by (an integer column: the integer lattice)
    assert [cols[c]["law"] for c in ("age", "score", "income", "visits")] == [
        "grid", "grid", "continuous", "integer"]
    assert cols["visits"]["certified_loss"] <= 0.25 + 1e-12


def test_a_failed_release_records_nothing(store):
    b = bndp.Budget.create(store, _name(), epsilon=1.0, delta=1e-6)
    bad = _frame()
    bad.loc[3, "age"] = np.nan
    with pytest.raises(ValueError, match="missing"):
        bndp.privatize(bad, SPEC, budget=b, release_id="x")
    assert b.spent == (0.0, 0.0) and b.history == []
    bndp.privatize(_frame(), SPEC, budget=b, release_id="x")  # the id was never recorded
    assert len(b.history) == 1


def test_the_budget_refuses_before_drawing(store):
    b = bndp.Budget.create(store, _name(), epsilon=0.75, delta=1e-6)
    bndp.privatize(_frame(), SPEC, budget=b)
    with pytest.raises(bndp.BudgetError, match="exceed"):
        bndp.privatize(_frame(), SPEC, budget=b)
    assert b.spent.epsilon == 0.5 and len(b.history) == 1


# --- the command line, each run a separate invocation -----------------------------------
def _csv(tmp_path) -> str:
    p = tmp_path / "people.csv"
    p.write_text("age,name\n30,a\n41,b\n67,c\n")
    return str(p)


def test_cli_nightly_runs_share_one_budget(store, tmp_path, capsys):
    src = _csv(tmp_path)
    name = _name()
    spec = tmp_path / "release.toml"
    store_line = json.dumps(store)
    spec.write_text(f"[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 0.5\n"
                    f"[budget]\nstore = {store_line}\nname = \"{name}\"\nepsilon = 1.0\n"
                    "create = true\n")
    outs = [str(tmp_path / f"night{k}.csv") for k in range(4)]
    assert main(["privatize", src, "-o", outs[0], "--spec", str(spec), "-q",
                 "--release-id", "day-1"]) == 0
    # a retried run of the same night: refused, its own exit status, nothing written
    assert main(["privatize", src, "-o", outs[1], "--spec", str(spec), "-q",
                 "--release-id", "day-1"]) == 5
    assert "already recorded" in capsys.readouterr().err
    assert not os.path.exists(outs[1])
    assert main(["privatize", src, "-o", outs[2], "--spec", str(spec), "-q",
                 "--release-id", "day-2"]) == 0
    # the third night would exceed the cap: the budget's exit status, nothing written
    assert main(["privatize", src, "-o", outs[3], "--spec", str(spec), "-q",
                 "--release-id", "day-3"]) == 4
    assert "exceed" in capsys.readouterr().err
    assert not os.path.exists(outs[3])
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["people.csv", "release.toml", "night0.csv", "night2.csv"]
        + (["ledger.db", "ledger.db-journal"] if "://" not in store else []))
    # the same budget by name, from the command line: show it
    assert main(["budget", "show", name, "--store", store, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["spent"]["epsilon"] == 1.0 and doc["remaining"]["epsilon"] == 0.0
    assert [r["release_id"] for r in doc["releases"]] == ["day-1", "day-2"]
    assert doc["releases"][0]["columns"][0]["bounds"] == [0.0, 120.0]
    assert main(["budget", "show", name, "--store", store]) == 0
    text = capsys.readouterr().out
    assert "remaining  epsilon = 0" in text and "id 'day-2'" in text and "certified loss" in text


def test_cli_budget_flags_and_create(store, tmp_path, capsys):
    src = _csv(tmp_path)
    name = _name()
    out = str(tmp_path / "o.csv")
    args = ["privatize", src, "-o", out, "--column", "age:0:120", "--epsilon", "0.5",
            "--sensitivity", "1", "-q", "--budget-store", store, "--budget-name", name]
    # the budget does not exist yet: a budget error (the PostgreSQL store holds no such
    # name), or an I/O error (there is no SQLite file, and opening does not create it)
    assert main(args) == (1 if "://" not in store else 4)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not os.path.exists(out)
    assert ("there is no budget store at" if "://" not in store else "does not exist") in err
    assert "://" in store or not os.path.exists(store)
    assert main(["budget", "create", name, "--store", store, "--epsilon", "0.5", "-q"]) == 0
    assert main(["budget", "create", name, "--store", store, "--epsilon", "0.7"]) == 2
    assert "another cap" in capsys.readouterr().err
    assert main(args + ["--release-id", "r"]) == 0 and os.path.exists(out)
    os.unlink(out)
    assert main(args + ["--release-id", "r"]) == 5 and not os.path.exists(out)
    assert main(args + ["--release-id", "s"]) == 4 and not os.path.exists(out)
    # a release id needs a persistent budget; a store needs a name
    assert main(args[:11] + ["--release-id", "r"]) == 2
    assert "--release-id needs a persistent budget" in capsys.readouterr().err
    assert main(args[:13]) == 2
    assert "both a store and a name" in capsys.readouterr().err


def test_cli_spec_budget_keys(tmp_path, capsys):
    src = _csv(tmp_path)
    spec = tmp_path / "r.toml"
    spec.write_text("[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 0.5\n"
                    "[budget]\nstore = \"sub.db\"\nname = \"n\"\nepsilon = 1.0\n"
                    "composition = \"basic\"\ncreate = true\n")
    assert main(["privatize", src, "-o", str(tmp_path / "o.csv"), "--spec", str(spec),
                 "-q"]) == 0
    # a relative store is relative to the spec file
    assert (tmp_path / "sub.db").exists()
    assert bndp.Budget.open(str(tmp_path / "sub.db"), "n").spent == (0.5, 0.0)
    spec.write_text("[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 0.5\n"
                    "[budget]\nepsilon = 1.0\ncomposition = \"optimal\"\n")
    assert main(["privatize", src, "-o", str(tmp_path / "p.csv"), "--spec", str(spec)]) == 2
    assert "composition applies to a persistent budget" in capsys.readouterr().err
    spec.write_text("[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 0.5\n"
                    "[budget]\nsotre = \"x.db\"\n")
    assert main(["privatize", src, "-o", str(tmp_path / "p.csv"), "--spec", str(spec)]) == 2
    assert "[budget] takes" in capsys.readouterr().err
    spec.write_text("[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 0.5\n"
                    "[budget]\nepsilon = 1.0\ncreate = true\n")
    assert main(["privatize", src, "-o", str(tmp_path / "p.csv"), "--spec", str(spec)]) == 2
    assert "create applies to a persistent budget" in capsys.readouterr().err
    spec.write_text("[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 0.5\n"
                    "[budget]\nstore = \"sub.db\"\nname = \"n\"\ncreate = \"yes\"\n")
    assert main(["privatize", src, "-o", str(tmp_path / "p.csv"), "--spec", str(spec)]) == 2
    assert "create must be true or false" in capsys.readouterr().err
    spec.write_text("[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 0.5\n"
                    "[budget]\nstore = \"sub.db\"\nname = \"m\"\ncreate = true\n")
    assert main(["privatize", src, "-o", str(tmp_path / "p.csv"), "--spec", str(spec)]) == 2
    assert "create = true needs the cap's epsilon" in capsys.readouterr().err


# --- the result is put together while the charge commits --------------------------------
class _CommitProxy:
    """A store connection whose commit runs ``hook`` first (or raises ``fail``)."""

    def __init__(self, conn, hook=None, fail=None):
        self._conn, self._hook, self._fail = conn, hook, fail

    def commit(self):
        if self._hook is not None:
            self._hook()
        if self._fail is not None:
            raise self._fail
        return self._conn.commit()

    def __getattr__(self, name):
        return getattr(self._conn, name)


def _proxy_commit(b, **kw):
    backend = b._ledger.backend
    backend.conn()  # this process's connection, made now
    backend._conn = _CommitProxy(backend._conn, **kw)
    return backend


def test_the_frame_is_built_while_the_charge_commits(store, monkeypatch):
    import threading

    b = bndp.Budget.create(store, _name(), epsilon=2.0, delta=1e-6)
    committing, built = threading.Event(), threading.Event()
    threads = {}

    def hook():  # in the charge's commit: waits for the frame to be put together meanwhile
        if not threads.get("drawn"):  # (the budget's check, before the draws)
            return
        threads["commit"] = threading.get_ident()
        committing.set()
        threads["overlapped"] = built.wait(20)

    real_draw, real = bndp.frames.draw_columns, bndp.frames.assemble

    def draw_columns(*a, **k):
        out = real_draw(*a, **k)
        threads["drawn"] = True
        return out

    def assemble(*a, **k):  # waits for the charge to be under way meanwhile
        threads["assemble"] = threading.get_ident()
        threads["charging"] = committing.wait(20)
        out = real(*a, **k)
        built.set()
        return out

    monkeypatch.setattr(bndp.frames, "assemble", assemble)
    monkeypatch.setattr(bndp.frames, "draw_columns", draw_columns)
    _proxy_commit(b, hook=hook)
    out = bndp.privatize(_frame(), SPEC, budget=b, rng=3, allow_seeded=True)
    threads["drawn"] = False
    assert threads["overlapped"] and threads["charging"]
    assert threads["commit"] != threads["assemble"] == threading.get_ident()
    assert out.shape == _frame().shape and b.spent.epsilon == 0.5 and len(b.history) == 1


def test_a_failed_commit_returns_nothing_and_records_nothing(store, monkeypatch):
    import sqlite3

    b = bndp.Budget.create(store, _name(), epsilon=2.0, delta=1e-6)
    backend = _proxy_commit(b, fail=sqlite3.OperationalError("disk I/O error (injected)"))
    with pytest.raises(sqlite3.OperationalError, match="injected"):
        bndp.privatize(_frame(), SPEC, budget=b, release_id="r")
    backend._conn = backend._conn._conn
    assert b.spent == (0.0, 0.0) and b.history == []
    bndp.privatize(_frame(), SPEC, budget=b, release_id="r")  # the id was never recorded
    assert len(b.history) == 1


def test_a_charge_refused_after_the_draw_returns_nothing(store, monkeypatch):
    b = bndp.Budget.create(store, _name(), epsilon=0.75, delta=1e-6)
    other = bndp.Budget.open(store, b.name)
    real = bndp.frames.draw_columns

    def racing(*a, **k):  # another process spends the budget while this one draws
        out = real(*a, **k)
        other.spend(0.5, label="someone else")
        return out

    monkeypatch.setattr(bndp.frames, "draw_columns", racing)
    with pytest.raises(bndp.BudgetError, match="exceed"):
        bndp.privatize(_frame(), SPEC, budget=b)
    assert [e.label for e in b.history] == ["someone else"] and b.spent.epsilon == 0.5
