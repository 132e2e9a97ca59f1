"""The persistent ledger at its edges: a committed charge is in the SQLite database file
itself (a copy of that one file holds it) and ``backup`` copies a store consistently;
opening never creates a budget nor a store (a typo in a name or a path is an error naming
the nearest names or the absolute path; names compared in Unicode NFC); PostgreSQL
passwords never shown (URLs, reprs, summaries, JSON, errors, psycopg's own messages)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import unicodedata
import uuid

import pytest

import bndp
from bndp.cli import main


def _name() -> str:
    return "e-" + uuid.uuid4().hex[:12]


def _csv(tmp_path) -> str:
    p = tmp_path / "people.csv"
    p.write_text("age\n30\n41\n67\n")
    return str(p)


def _spec(tmp_path, budget: str, name: str = "release.toml") -> str:
    p = tmp_path / name
    p.write_text("[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 0.25\n"
                 "[budget]\n" + budget)
    return str(p)


def _env() -> dict:
    env = dict(os.environ)
    src = os.path.dirname(os.path.dirname(os.path.abspath(bndp.__file__)))
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return env


# --- A: the database file holds every committed charge ------------------------------------
def test_a_copy_of_the_database_file_alone_holds_every_charge(tmp_path):
    path = str(tmp_path / "ledger.db")
    b = bndp.Budget.create(path, "survey", epsilon=0.75)
    b.spend(0.25, label="first")
    b.charge({"age": (0.25, 0.0)}, label="second", release_id="r2")
    # the budget is still open (a notebook, a service): copy only the main file
    shutil.copyfile(path, str(tmp_path / "copy.db"))
    copy = bndp.Budget.open(str(tmp_path / "copy.db"), "survey")
    assert copy.spent == (0.5, 0.0) and copy.remaining == (0.25, 0.0)
    assert [e.label for e in copy.history] == ["first", "second"]
    assert b.spent == (0.5, 0.0)
    # no write-ahead log beside the store: nothing committed lives outside the file
    assert not os.path.exists(path + "-wal")


def test_a_crashed_process_leaves_its_charges_in_the_database_file(tmp_path):
    path = str(tmp_path / "ledger.db")
    code = textwrap.dedent("""
        import os, sys
        import bndp
        b = bndp.Budget.create(sys.argv[1], "survey", epsilon=0.75)
        b.spend(0.5, label="before the crash")
        os._exit(9)          # no close, no cleanup: as a crash
    """)
    p = subprocess.run([sys.executable, "-c", code, path], env=_env(), capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 9, p.stderr
    shutil.copyfile(path, str(tmp_path / "copy.db"))
    copy = bndp.Budget.open(str(tmp_path / "copy.db"), "survey")
    assert copy.spent == (0.5, 0.0) and [e.label for e in copy.history] == ["before the crash"]


def test_a_store_left_in_wal_mode_is_checkpointed_after_each_charge(tmp_path):
    # a store written in WAL mode, still held open by another connection (an older
    # version's process): it stays in WAL mode, and every charge is copied into the file
    path = str(tmp_path / "ledger.db")
    bndp.Budget.create(path, "survey", epsilon=1.0)
    held = sqlite3.connect(path)
    assert held.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    assert held.execute("SELECT count(*) FROM bndp_budget").fetchone()[0] == 1
    try:
        b = bndp.Budget.open(path, "survey")
        b.spend(0.25)
        assert b._ledger.backend.conn().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        shutil.copyfile(path, str(tmp_path / "copy.db"))
        assert bndp.Budget.open(str(tmp_path / "copy.db"), "survey").spent == (0.25, 0.0)
    finally:
        held.close()
    # the next connection, the only one, switches the store to the rollback journal
    b._ledger.backend.close()
    assert bndp.Budget.open(path, "survey").spent == (0.25, 0.0)
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] != "wal"
    con.close()
    assert not os.path.exists(path + "-wal")


def test_backup_copies_a_store_in_use(tmp_path):
    path = str(tmp_path / "ledger.db")
    b = bndp.Budget.create(path, "survey", epsilon=1.0, delta=1e-6)
    b.spend(0.25, 1e-7, label="a", release_id="day-1")
    other = bndp.Budget.create(path, "other", epsilon=2.0, composition="basic")
    other.spend(1.5)
    dest = str(tmp_path / "copies" / "backup.db")
    os.mkdir(tmp_path / "copies")
    assert bndp.budget.backup(path, dest) == dest
    assert os.listdir(tmp_path / "copies") == ["backup.db"]  # one self-contained file
    copy = bndp.Budget.open(dest, "survey")
    assert copy.spent == (0.25, 1e-7) and copy.history[0].release_id == "day-1"
    assert bndp.Budget.open(dest, "other").remaining == (0.5, 0.0)
    # the copy is a store of its own: charging it leaves the original alone
    copy.spend(0.5)
    assert b.spent == (0.25, 1e-7)
    # never overwrites; a missing store or directory, and a file that is no store, refused
    before = open(dest, "rb").read()
    with pytest.raises(ValueError, match="exists"):
        bndp.budget.backup(path, dest)
    assert open(dest, "rb").read() == before
    with pytest.raises(ValueError, match="no budget store at .*missing.db"):
        bndp.budget.backup(str(tmp_path / "missing.db"), str(tmp_path / "x.db"))
    with pytest.raises(ValueError, match="does not exist"):
        bndp.budget.backup(path, str(tmp_path / "nowhere" / "x.db"))
    plain = tmp_path / "plain.db"
    sqlite3.connect(str(plain)).close()
    with pytest.raises(ValueError, match="not a budget store"):
        bndp.budget.backup(str(plain), str(tmp_path / "y.db"))
    assert not (tmp_path / "missing.db").exists() and not (tmp_path / "x.db").exists()
    assert not (tmp_path / "y.db").exists()
    with pytest.raises(TypeError, match="dest"):
        bndp.budget.backup(path, 3)


def test_cli_budget_backup(tmp_path, capsys):
    path = str(tmp_path / "ledger.db")
    bndp.Budget.create(path, "survey", epsilon=1.0).spend(0.5)
    assert main(["budget", "backup", path, str(tmp_path / "b1.db")]) == 0
    assert "copied to" in capsys.readouterr().err
    assert main(["budget", "backup", str(tmp_path / "b2.db"), "--store", path, "-q"]) == 0
    assert capsys.readouterr().err == ""
    for copy in ("b1.db", "b2.db"):
        assert bndp.Budget.open(str(tmp_path / copy), "survey").spent == (0.5, 0.0)
    assert main(["budget", "backup", path, str(tmp_path / "b1.db")]) == 2
    err = capsys.readouterr().err
    assert "never overwrites" in err and err.count("\n") == 1
    assert main(["budget", "backup", str(tmp_path / "none.db"), str(tmp_path / "b3.db")]) == 1
    assert "no budget store" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists() and not (tmp_path / "b3.db").exists()
    assert main(["budget", "backup", path]) == 2
    assert "STORE DEST" in capsys.readouterr().err


def test_backup_of_a_postgresql_store_says_pg_dump(postgres_url, tmp_path, capsys):
    url = postgres_url.replace("postgresql://", "postgresql://postgres:Pg5ecretBackup@", 1)
    with pytest.raises(ValueError, match="pg_dump"):
        bndp.budget.backup(url, str(tmp_path / "copy.db"))
    assert main(["budget", "backup", url, str(tmp_path / "copy.db")]) == 2
    err = capsys.readouterr().err
    assert "pg_dump" in err and "Pg5ecretBackup" not in err
    assert not (tmp_path / "copy.db").exists()


# --- B: opening never creates --------------------------------------------------------------
def test_an_unknown_name_is_refused_with_the_nearest_names(store):
    stem = _name()
    bndp.Budget.create(store, stem + "-survey-2024", epsilon=1.0)
    typo = stem + "-survey-2O24"
    for cap in ({}, {"epsilon": 1.0}, {"epsilon": 1.0, "delta": 0.0,
                                        "composition": "basic"}):
        with pytest.raises(bndp.BudgetError) as err:
            bndp.Budget.open(store, typo, **cap)
        msg = str(err.value)
        assert f"budget {typo!r} does not exist" in msg and "\n" not in msg
        assert f"did you mean {stem + '-survey-2024'!r}" in msg
        assert "bndp.Budget.create" in msg and "bndp budget create" in msg
    with pytest.raises(bndp.BudgetError):  # still not created by any of these
        bndp.Budget.open(store, typo)
    with pytest.raises(bndp.BudgetError, match="none with a similar name"):
        bndp.Budget.open(store, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz")
    # a cap given to open must still be the recorded one
    with pytest.raises(ValueError, match="another cap"):
        bndp.Budget.open(store, stem + "-survey-2024", epsilon=2.0)


def test_create_refuses_an_existing_name_unless_exist_ok_with_the_same_cap(store):
    name = _name()
    b = bndp.Budget.create(store, name, epsilon=1.0, delta=1e-6)
    assert (b.name, b.epsilon, b.delta, b.composition) == (name, 1.0, 1e-6, "basic")
    b.spend(0.25)
    with pytest.raises(ValueError, match="already exists"):
        bndp.Budget.create(store, name, epsilon=1.0, delta=1e-6)
    again = bndp.Budget.create(store, name, epsilon=1.0, delta=1e-6, exist_ok=True)
    assert again.spent == (0.25, 0.0)  # opened, nothing reset
    for other in ({"epsilon": 2.0, "delta": 1e-6}, {"epsilon": 1.0},
                  {"epsilon": 1.0, "delta": 1e-6, "composition": "optimal"}):
        with pytest.raises(ValueError, match="another cap"):
            bndp.Budget.create(store, name, exist_ok=True, **other)
    assert bndp.Budget.open(store, name).epsilon == 1.0


def test_names_are_compared_in_nfc(store):
    stem = _name()
    nfc = unicodedata.normalize("NFC", stem + "-café")
    nfd = unicodedata.normalize("NFD", stem + "-café")
    assert nfc != nfd
    b = bndp.Budget.create(store, nfd, epsilon=1.0)
    assert b.name == nfc                 # stored in NFC
    b.spend(0.25)
    assert bndp.Budget.open(store, nfc).spent == (0.25, 0.0)
    assert bndp.Budget.open(store, nfd).spent == (0.25, 0.0)
    with pytest.raises(ValueError, match="already exists"):
        bndp.Budget.create(store, nfc, epsilon=1.0)


def test_a_name_stored_in_nfd_by_an_earlier_version_is_found(tmp_path):
    path = str(tmp_path / "ledger.db")
    bndp.Budget.create(path, "other", epsilon=1.0)
    nfd = unicodedata.normalize("NFD", "café")
    con = sqlite3.connect(path)
    con.execute("INSERT INTO bndp_budget (name, epsilon, delta, composition, spent_epsilon, "
                "spent_delta, counts, releases, created) VALUES (?, 1.0, 0.0, 'basic', "
                "'0/1', '0/1', '[]', 0, 0.0)", (nfd,))
    con.commit()
    con.close()
    b = bndp.Budget.open(path, unicodedata.normalize("NFC", "café"))
    assert b.name == nfd
    b.spend(0.5)
    assert bndp.Budget.open(path, nfd).spent == (0.5, 0.0)
    with pytest.raises(ValueError, match="already exists"):
        bndp.Budget.create(path, "café", epsilon=1.0)


def test_opening_a_missing_sqlite_file_never_creates_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("elsewhere")
    for cap in ({}, {"epsilon": 1.0}):
        with pytest.raises(ValueError) as err:
            bndp.Budget.open("ledger.db", "survey", **cap)
        assert str(tmp_path / "ledger.db") in str(err.value)   # the absolute path
        assert "bndp.Budget.create" in str(err.value)
    assert os.listdir(tmp_path) == ["elsewhere"]
    b = bndp.Budget.create(os.path.join("elsewhere", "ledger.db"), "survey", epsilon=1.0)
    assert b.store == str(tmp_path / "elsewhere" / "ledger.db")
    assert repr(b).startswith(f"PersistentBudget('survey' in {b.store!r}")


def test_cli_a_typo_in_the_spec_name_releases_nothing(store, tmp_path, capsys):
    stem = _name()
    name = stem + "-survey-2024"
    assert main(["budget", "create", name, "--store", store, "--epsilon", "1", "-q"]) == 0
    src = _csv(tmp_path)
    spec = _spec(tmp_path, f"store = {json.dumps(store)}\nname = \"{stem}-survey-2O24\"\n"
                           "epsilon = 1.0\n")
    out = tmp_path / "out.csv"
    assert main(["privatize", src, "-o", str(out), "--spec", spec, "-q"]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"did you mean {name!r}" in err
    assert not out.exists()
    with pytest.raises(bndp.BudgetError):
        bndp.Budget.open(store, stem + "-survey-2O24")
    assert bndp.Budget.open(store, name).spent == (0.0, 0.0)
    # the same from the flags, and for bndp budget show
    assert main(["privatize", src, "-o", str(out), "--column", "age:0:120", "--epsilon",
                 "0.25", "--sensitivity", "1", "-q", "--budget-store", store,
                 "--budget-name", stem + "-survey-2O24"]) == 4
    assert main(["budget", "show", stem + "-survey-2O24", "--store", store]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and err.count(f"did you mean {name!r}") == 2
    assert not out.exists()


def test_cli_a_relative_store_from_another_directory_is_not_created(tmp_path, monkeypatch,
                                                                    capsys):
    home = tmp_path / "jobs"
    home.mkdir()
    monkeypatch.chdir(home)
    assert main(["budget", "create", "survey", "--store", "ledger.db", "--epsilon", "1",
                 "-q"]) == 0
    assert os.path.exists(home / "ledger.db")
    src = _csv(tmp_path)
    args = ["--column", "age:0:120", "--epsilon", "0.25", "--sensitivity", "1",
            "--budget-store", "ledger.db", "--budget-name", "survey"]
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.chdir(other)
    assert main(["privatize", src, "-o", str(tmp_path / "o.csv"), "-q"] + args) == 1
    err = capsys.readouterr().err
    assert str(other / "ledger.db") in err and err.count("\n") == 1
    assert os.listdir(other) == [] and not (tmp_path / "o.csv").exists()
    # from the right directory the run goes through, and its summary gives the store's
    # absolute path
    monkeypatch.chdir(home)
    assert main(["privatize", src, "-o", str(tmp_path / "o.csv")] + args) == 0
    err = capsys.readouterr().err
    assert f"recorded under budget 'survey' ({home / 'ledger.db'})" in err


def test_cli_spec_create_true(store, tmp_path, capsys):
    name = _name()
    src = _csv(tmp_path)
    spec = _spec(tmp_path, f"store = {json.dumps(store)}\nname = \"{name}\"\n"
                           "epsilon = 0.5\ncreate = true\n")
    for night in range(2):  # created on the first run, opened (its cap checked) after
        assert main(["privatize", src, "-o", str(tmp_path / f"o{night}.csv"), "--spec", spec,
                     "-q"]) == 0
    assert main(["privatize", src, "-o", str(tmp_path / "o2.csv"), "--spec", spec,
                 "-q"]) == 4
    b = bndp.Budget.open(store, name)
    assert b.spent == (0.5, 0.0) and len(b.history) == 2
    other = _spec(tmp_path, f"store = {json.dumps(store)}\nname = \"{name}\"\n"
                            "epsilon = 0.75\ncreate = true\n", "other.toml")
    assert main(["privatize", src, "-o", str(tmp_path / "o3.csv"), "--spec", other]) == 2
    assert "another cap" in capsys.readouterr().err


def test_cli_budget_create_creates_the_sqlite_file(tmp_path, capsys):
    path = tmp_path / "new.db"
    assert main(["budget", "create", "survey", "--store", str(path), "--epsilon", "1",
                 "--delta", "1e-6"]) == 0
    assert path.exists() and str(path) in capsys.readouterr().err
    # again with the same cap: nothing changes; with another: an error
    assert main(["budget", "create", "survey", "--store", str(path), "--epsilon", "1",
                 "--delta", "1e-6", "-q"]) == 0
    assert main(["budget", "create", "survey", "--store", str(path), "--epsilon", "2"]) == 2
    assert "another cap" in capsys.readouterr().err


# --- C: PostgreSQL passwords never shown ------------------------------------------------------
SECRETS = ("Pw1userinfoSecret", "Pw2paramSecret", "Pw3sslSecret")


def _secret_url(base: str) -> str:
    """``base`` (a postgresql:// URL with parameters) with a password in the user
    information and as ``password=`` and ``sslpassword=`` parameters."""
    url = base.replace("postgresql://", f"postgresql://postgres:{SECRETS[0]}@", 1)
    sep = "&" if "?" in url else "?"
    return url + f"{sep}password={SECRETS[1]}&sslpassword={SECRETS[2]}"


def _clean(*texts: str) -> None:
    for t in texts:
        for s in SECRETS:
            assert s not in t, t


def test_passwords_are_masked_on_an_unreachable_server(tmp_path, capsys):
    pytest.importorskip("psycopg")
    url = _secret_url("postgresql:///nodb?host=/nonexistent-bndp-socket")
    for call in (lambda: bndp.Budget.open(url, "x"),
                 lambda: bndp.Budget.create(url, "x", epsilon=1.0)):
        with pytest.raises(ConnectionError) as err:
            call()
        _clean(str(err.value), repr(err.value))
        assert "postgresql://postgres:***@" in str(err.value)
    # psycopg's own message quoting a secret (an invalid percent-encoding in the password)
    bad = "postgresql://u:Pw1userinfoSecret%zz@/db?host=/nonexistent-bndp-socket"
    with pytest.raises(ValueError, match="not a valid PostgreSQL URL") as err:
        bndp.Budget.open(bad, "x")
    _clean(str(err.value))
    with pytest.raises(ValueError, match="unknown URL scheme") as err:
        bndp.Budget.open("mysql://u:Pw1userinfoSecret@host/db", "x")
    _clean(str(err.value))
    src = _csv(tmp_path)
    for argv, code in (
            (["budget", "show", "x", "--store", url], 1),
            (["budget", "show", "x", "--store", url, "--json"], 1),
            (["budget", "create", "x", "--store", url, "--epsilon", "1"], 1),
            (["budget", "show", "x", "--store", bad], 2),
            (["privatize", src, "-o", str(tmp_path / "o.csv"), "--column", "age:0:120",
              "--epsilon", "1", "--sensitivity", "1", "--budget-store", url,
              "--budget-name", "x"], 1)):
        assert main(argv) == code
        out, err = capsys.readouterr()
        _clean(out, err)
        assert err.startswith("bndp: error: ") and err.count("\n") == 1


def test_passwords_are_masked_on_the_real_server(postgres_url, tmp_path, capsys):
    url = _secret_url(postgres_url)   # the test server trusts: the passwords are ignored
    name = _name()
    b = bndp.Budget.create(url, name, epsilon=1.0)
    b.spend(0.25, label="first")
    _clean(b.store, repr(b), repr(bndp.Budget.open(url, name)))
    assert "postgres:***@" in b.store and "password=***" in b.store
    assert "sslpassword=***" in b.store
    with pytest.raises(ValueError, match="another cap") as err:
        bndp.Budget.open(url, name, epsilon=2.0)
    _clean(str(err.value))
    with pytest.raises(bndp.BudgetError) as err:
        bndp.Budget.open(url, name + "x")
    _clean(str(err.value))
    with pytest.raises(ValueError, match="already exists") as err:
        bndp.Budget.create(url, name, epsilon=1.0)
    _clean(str(err.value))
    # the command line: show (text and JSON), a privatize run's summary and its JSON record
    assert main(["budget", "show", name, "--store", url, "--json"]) == 0
    out, err = capsys.readouterr()
    _clean(out, err)
    assert json.loads(out)["store"] == b.store
    assert main(["budget", "show", name, "--store", url]) == 0
    _clean(*capsys.readouterr())
    src = _csv(tmp_path)
    summary = tmp_path / "summary.json"
    assert main(["privatize", src, "-o", str(tmp_path / "o.csv"), "--column", "age:0:120",
                 "--epsilon", "0.25", "--sensitivity", "1", "--budget-store", url,
                 "--budget-name", name, "--summary-json", str(summary)]) == 0
    out, err = capsys.readouterr()
    _clean(out, err, summary.read_text())
    assert "recorded under budget" in err
    assert main(["budget", "create", name, "--store", url, "--epsilon", "3"]) == 2
    assert main(["budget", "show", name + "x", "--store", url]) == 4
    _clean(*capsys.readouterr())
