"""The ``bndp`` logger's INFO record of a release names the budget charged, the charge, what
remains and whether the noise was seeded: in its message and as record attributes
(``bndp_budget``, ``bndp_charge``, ``bndp_remaining``, ``bndp_seeded``) that a JSON log
formatter writes as fields; never a value of the data."""

from __future__ import annotations

import json
import logging
import os

import pytest

import bndp
from bndp.cli import main

pd = pytest.importorskip("pandas")

SPEC = {"age": dict(mechanism="laplace", epsilon=0.25, sensitivity=1.0, lower=0.0,
                    upper=120.0)}
SECRET = 98.7654321          # a private value: in no log record
FIELDS = ("bndp_budget", "bndp_charge", "bndp_remaining", "bndp_seeded")


class JSONFormatter(logging.Formatter):
    """A JSON log formatter as a pipeline would have one: the message and every ``bndp_``
    attribute as a field."""

    def format(self, record):
        out = {"message": record.getMessage()}
        out.update({k: v for k, v in vars(record).items() if k.startswith("bndp_")})
        return json.dumps(out)


def _frame():
    return pd.DataFrame({"age": [23.0, SECRET, 61.0]})


def _released(caplog):
    recs = [r for r in caplog.records if r.name == "bndp" and r.levelno == logging.INFO]
    assert len(recs) == 1
    caplog.clear()
    rec = recs[0]
    fields = json.loads(JSONFormatter().format(rec))
    for form in (repr(SECRET), f"{SECRET:g}", f"{SECRET:.2f}"):
        assert form not in json.dumps(fields)
    return rec, fields


def test_no_budget(caplog):
    caplog.set_level(logging.INFO, logger="bndp")
    bndp.privatize(_frame(), SPEC)
    rec, fields = _released(caplog)
    assert {k: fields[k] for k in FIELDS} == {"bndp_budget": None, "bndp_charge": None,
                                              "bndp_remaining": None, "bndp_seeded": False}
    assert rec.getMessage().endswith("; no budget charged")
    assert "bndp_release" in fields                 # the release's record, as before


def test_in_memory_budget(caplog):
    caplog.set_level(logging.INFO, logger="bndp")
    b = bndp.Budget(epsilon=1.0)
    bndp.privatize(_frame(), SPEC, budget=b)
    rec, fields = _released(caplog)
    assert fields["bndp_budget"] == "in-memory"
    assert fields["bndp_charge"] == [0.25, 0.0]
    assert fields["bndp_remaining"] == [0.75, 0.0] == list(b.remaining)
    assert fields["bndp_seeded"] is False
    assert ("; charged to an in-memory budget: epsilon=0.25 delta=0, remaining "
            "epsilon=0.75 delta=0") in rec.getMessage()
    bndp.privatize(_frame(), {"age": dict(SPEC["age"], epsilon=0.5)}, budget=b)
    rec, fields = _released(caplog)
    assert fields["bndp_charge"] == [0.5, 0.0] and fields["bndp_remaining"] == [0.25, 0.0]


def test_persistent_budget_seeded(store, caplog):
    """SQLite, and PostgreSQL where a server is given (the URL is in no field)."""
    name = f"nightly-{os.getpid()}-{id(caplog)}"
    bndp.Budget.create(store, name, epsilon=2.0, delta=1e-6)
    b = bndp.Budget.open(store, name)
    caplog.set_level(logging.INFO, logger="bndp")
    spec = {"age": dict(SPEC["age"], delta=1e-7)}
    bndp.privatize(_frame(), spec, budget=b, rng=5, allow_seeded=True, release_id="d1")
    rec, fields = _released(caplog)
    assert fields["bndp_budget"] == name
    assert fields["bndp_charge"] == [0.25, 1e-7]
    assert fields["bndp_remaining"] == list(bndp.Budget.open(store, name).remaining)
    assert fields["bndp_remaining"][0] == 1.75
    assert fields["bndp_seeded"] is True
    msg = rec.getMessage()
    assert "id=d1 from a seeded (reproducible) generator" in msg
    assert (f"; charged to budget {name!r}: epsilon=0.25 delta=1e-07, remaining "
            "epsilon=1.75") in msg
    assert store not in msg + json.dumps(fields)
    bndp.privatize(_frame(), SPEC, budget=b)
    rec, fields = _released(caplog)
    assert fields["bndp_seeded"] is False and "seeded" not in rec.getMessage()
    assert fields["bndp_remaining"][0] == 1.5


def test_unreadable_remaining_keeps_the_release(tmp_path, caplog, monkeypatch):
    """Reading what remains comes after the charge is committed: if the store cannot be read
    then, the release is still returned and logged, without the remaining amounts."""
    store = str(tmp_path / "ledger.db")
    b = bndp.Budget.create(store, "nightly", epsilon=2.0)

    def unreadable(self):
        raise OSError("the store went away")

    monkeypatch.setattr(bndp.budget.PersistentBudget, "remaining", property(unreadable))
    caplog.set_level(logging.INFO, logger="bndp")
    out = bndp.privatize(_frame(), SPEC, budget=b)
    monkeypatch.undo()
    assert out.shape == (3, 1) and len(b.history) == 1
    rec, fields = _released(caplog)
    assert fields["bndp_budget"] == "nightly" and fields["bndp_charge"] == [0.25, 0.0]
    assert fields["bndp_remaining"] is None
    assert rec.getMessage().endswith("epsilon=0.25 delta=0, remaining unknown (not read)")


def _cli(tmp_path, *extra):
    src = tmp_path / "in.csv"
    src.write_text(f"age\n23\n{SECRET!r}\n61\n")
    return main(["privatize", str(src), "-o", str(tmp_path / "out.csv"), "-q", "--column",
                 "age:0:120", "--epsilon", "0.25", "--sensitivity", "1", *extra])


def test_cli_persistent_budget(tmp_path, caplog):
    pytest.importorskip("pyarrow")
    store = str(tmp_path / "ledger.db")
    bndp.Budget.create(store, "nightly", epsilon=1.0)
    caplog.set_level(logging.INFO, logger="bndp")
    assert _cli(tmp_path, "--budget-store", store, "--budget-name", "nightly") == 0
    rec, fields = _released(caplog)
    assert {k: fields[k] for k in FIELDS} == {"bndp_budget": "nightly",
                                              "bndp_charge": [0.25, 0.0],
                                              "bndp_remaining": [0.75, 0.0],
                                              "bndp_seeded": False}
    assert "charged to budget 'nightly'" in rec.getMessage()


def test_cli_spec_in_memory_budget_and_no_budget(tmp_path, caplog):
    pytest.importorskip("pyarrow")
    spec = tmp_path / "release.toml"
    spec.write_text('[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 0.25\n'
                    '[budget]\nepsilon = 0.5\n')
    src = tmp_path / "in.csv"
    src.write_text("age\n23\n61\n")
    caplog.set_level(logging.INFO, logger="bndp")
    assert main(["privatize", str(src), "-o", str(tmp_path / "out.csv"), "-q", "--spec",
                 str(spec)]) == 0
    rec, fields = _released(caplog)
    assert (fields["bndp_budget"], fields["bndp_charge"], fields["bndp_remaining"]) == (
        "in-memory", [0.25, 0.0], [0.25, 0.0])
    assert _cli(tmp_path) == 0
    rec, fields = _released(caplog)
    assert fields["bndp_budget"] is None and fields["bndp_charge"] is None
    assert "no budget charged" in rec.getMessage()
