"""Persistent budgets under concurrent processes and crashes, on a real SQLite file and a
real PostgreSQL server: many processes releasing at once never exceed the cap together and
the ledger holds exactly what the successful releases cost; a process killed (SIGKILL) at
each step of a release leaves a consistent ledger holding every charge whose output could
have been seen."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from fractions import Fraction

import pytest

import bndp

from .conftest import bndp_import_root

pytest.importorskip("pyarrow")

WORKERS = 8
PER_WORKER = 6
COST = 0.125  # a binary fraction: the exact sums are the float sums

WORKER = textwrap.dedent("""
    import json, os, sys
    import pyarrow as pa
    import bndp

    store, name, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
    b = bndp.Budget.open(store, name)
    t = pa.table({"age": [30.0, 41.0, 67.0]})
    spec = {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": %r}}
    sys.stdout.write("ready\\n"); sys.stdout.flush()
    sys.stdin.readline()  # every worker starts releasing at once
    done = {"ok": [], "refused": 0, "recorded": 0}
    for rid in ["shared"] + [f"{os.getpid()}-{i}" for i in range(k)]:
        try:
            bndp.privatize(t, spec, budget=b, release_id=rid)
            done["ok"].append(rid)
        except bndp.ReleaseRecorded:
            done["recorded"] += 1
        except bndp.BudgetError:
            done["refused"] += 1
    print(json.dumps(done))
""") % COST


def _env(**extra: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = bndp_import_root() + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def _consistent(b: "bndp.budget.PersistentBudget") -> list:
    """The ledger's totals are the sums of its recorded releases, within the cap."""
    hist = b.history
    e = sum((Fraction(h.cost.epsilon) for h in hist), Fraction(0))
    d = sum((Fraction(h.cost.delta) for h in hist), Fraction(0))
    assert b.spent == (float(e), float(d))
    assert e <= Fraction(b.epsilon) and d <= Fraction(b.delta)
    assert [h.seq for h in hist] == list(range(1, len(hist) + 1))
    ids = [h.release_id for h in hist if h.release_id is not None]
    assert len(ids) == len(set(ids))
    if "://" not in b.store:
        import sqlite3

        con = sqlite3.connect(b.store)
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        con.close()
    return hist


def test_concurrent_processes_never_exceed_the_cap(store):
    name = "c-" + uuid.uuid4().hex[:10]
    cap = 3.0  # 24 releases of 0.125 fit; 8 workers ask for 8 x 7
    b = bndp.Budget.create(store, name, epsilon=cap)
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, store, name, str(PER_WORKER)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=_env())
             for _ in range(WORKERS)]
    for p in procs:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    ok = [rid for r in results for rid in r["ok"]]
    hist = _consistent(b)
    # what the successful releases cost is exactly what was charged, and fills the cap
    assert len(ok) == len(hist) == int(cap / COST)
    assert b.spent == (len(ok) * COST, 0.0) == (cap, 0.0)
    assert sorted(ok) == sorted(h.release_id for h in hist)
    # the release id every worker tried first was released exactly once
    assert ok.count("shared") == 1 and sum(r["recorded"] for r in results) == WORKERS - 1
    assert sum(r["refused"] for r in results) == WORKERS * (PER_WORKER + 1) - len(ok) - (WORKERS - 1)


RELEASE = textwrap.dedent("""
    import sys
    import pyarrow as pa
    import bndp

    store, name, out = sys.argv[1], sys.argv[2], sys.argv[3]
    b = bndp.Budget.open(store, name)
    t = pa.table({"age": [30.0, 41.0, 67.0]})
    spec = {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.25}}
    res = bndp.privatize(t, spec, budget=b, release_id="night-1")
    with open(out, "w") as f:  # the output is seen only once privatize has returned
        f.write(str(res.column("age").to_pylist()))
""")


@pytest.mark.parametrize("step", ["planned", "drawn", "charged"])
def test_kill_at_each_step_of_privatize(store, tmp_path, step):
    name = "k-" + uuid.uuid4().hex[:10]
    b = bndp.Budget.create(store, name, epsilon=1.0)
    out = tmp_path / "out.txt"
    p = subprocess.run([sys.executable, "-c", RELEASE, store, name, str(out)],
                       env=_env(BNDP_TEST_CRASH_AT=step), capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert not out.exists()
    hist = _consistent(b)
    if step == "charged":  # committed before privatize could return: it stays spent
        assert [h.release_id for h in hist] == ["night-1"] and b.spent == (0.25, 0.0)
        with pytest.raises(bndp.ReleaseRecorded):  # a retry of the job is refused
            b.spend(0.25, release_id="night-1")
    else:  # nothing could have been seen: nothing spent, and the retry goes through
        assert hist == [] and b.spent == (0.0, 0.0)
        p = subprocess.run([sys.executable, "-c", RELEASE, store, name, str(out)], env=_env(),
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert out.exists() and [h.release_id for h in _consistent(b)] == ["night-1"]


def _unnamed_files(directory) -> bool:
    """Whether the file system of ``directory`` has unnamed files (O_TMPFILE)."""
    try:
        os.close(os.open(directory, os.O_TMPFILE | os.O_RDWR, 0o600))
        return True
    except (AttributeError, OSError):
        return False


@pytest.mark.parametrize("step", ["planned", "drawn", "charged", "writing"])
def test_kill_at_each_step_of_the_command_line(store, tmp_path, step):
    name = "k-" + uuid.uuid4().hex[:10]
    b = bndp.Budget.create(store, name, epsilon=1.0)
    src = tmp_path / "in.csv"
    src.write_text("age\n" + "\n".join(str(i % 100) for i in range(200)) + "\n")
    dst = tmp_path / "out.csv"
    cmd = [sys.executable, "-m", "bndp", "privatize", str(src), "-o", str(dst), "--column",
           "age:0:120", "--epsilon", "0.5", "--sensitivity", "1", "-q", "--block-size", "256",
           "--budget-store", store, "--budget-name", name, "--release-id", "night-1"]
    p = subprocess.run(cmd, env=_env(BNDP_TEST_CRASH_AT=step), capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert not dst.exists()  # the output is put in place only after the charge
    if _unnamed_files(tmp_path):  # (Linux) no drawn value is left on disk under a name
        assert [f for f in os.listdir(tmp_path) if not f.startswith("ledger.db")] == ["in.csv"]
    hist = _consistent(b)
    if step == "charged":
        assert [h.release_id for h in hist] == ["night-1"]
        p = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=120)
        assert p.returncode == 5 and not dst.exists()
    else:
        assert hist == []
        p = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert dst.exists() and [h.release_id for h in _consistent(b)] == ["night-1"]
