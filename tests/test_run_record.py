"""``bndp privatize --summary-json``: a record of every run that read its arguments, failed
runs included (status, exit status, the one-line error, its kind, what was charged and the
budget's amounts read after the failure), written atomically, and never where the path
itself is the problem."""

from __future__ import annotations

import json
import os

import pytest

import bndp
from bndp.cli import _io, _run_record, main
from bndp.cli import privatize as cli_privatize

pytest.importorskip("pyarrow")

SECRET = 4321.98765          # a private value outside [0, 120]: in no record


def _csv(tmp_path, rows=("23", "41", "61")):
    src = tmp_path / "in.csv"
    src.write_text("age,name\n" + "".join(f"{r},x\n" for r in rows))
    return src


def _run(tmp_path, capsys, *extra, src=None, summary=None):
    src = src or _csv(tmp_path)
    summary = summary or tmp_path / "run.json"
    code = main(["privatize", str(src), "-o", str(tmp_path / "out.csv"),
                 "--summary-json", str(summary), *extra])
    err = capsys.readouterr().err
    rec = json.loads(summary.read_text()) if summary.is_file() else None
    return code, err, rec


COLUMN = ("--column", "age:0:120", "--epsilon", "0.25", "--sensitivity", "1")


def _budget(tmp_path, epsilon=0.75):
    store = str(tmp_path / "ledger.db")
    bndp.Budget.create(store, "nightly", epsilon=epsilon)
    return store, ("--budget-store", store, "--budget-name", "nightly")


def _error_line(err):
    lines = [ln for ln in err.splitlines() if ln.startswith("bndp: error: ")]
    assert len(lines) == 1, err
    return lines[0][len("bndp: error: "):]


def _check_failure(rec, code, err, kind):
    assert rec is not None, "no record of the failed run"
    assert rec["status"] == "error" and rec["exit_code"] == code and code != 0
    assert rec["error_kind"] == kind
    assert rec["error"] == _error_line(err)        # the message printed on stderr
    assert rec["charged"] is None


def test_success_record_keeps_its_fields_and_says_ok(tmp_path, capsys):
    store, budget = _budget(tmp_path)
    code, err, rec = _run(tmp_path, capsys, *COLUMN, *budget, "--release-id", "d1")
    assert code == 0, err
    assert (rec["status"], rec["exit_code"], rec["error"], rec["error_kind"]) == (
        "ok", 0, None, None)
    assert rec["charged"] == [0.25, 0.0]
    for key in ("label", "release_id", "version", "seeded", "columns", "budget", "input",
                "output", "format", "output_format", "rows", "seconds"):
        assert key in rec
    assert rec["rows"] == 3 and rec["columns"]["age"]["epsilon"] == 0.25
    assert rec["budget"]["remaining"] == [0.5, 0.0]
    assert set(rec["seconds"]) == {"plan", "draw_and_write", "total"}


def test_success_without_budget_charges_nothing(tmp_path, capsys):
    code, err, rec = _run(tmp_path, capsys, *COLUMN)
    assert code == 0, err
    assert rec["status"] == "ok" and rec["charged"] is None and "budget" not in rec


def test_usage_error_exit_2(tmp_path, capsys):
    code, err, rec = _run(tmp_path, capsys, "--column", "age:0:120", "--epsilon", "0.25")
    assert code == 2
    _check_failure(rec, code, err, "usage")
    assert "--sensitivity" in rec["error"]
    assert rec["budget"] is None and rec["input"].endswith("in.csv")
    assert rec["version"] == bndp.__version__
    assert not (tmp_path / "out.csv").exists()


def test_data_error_exit_3_names_no_value_and_reads_the_budget(tmp_path, capsys):
    store, budget = _budget(tmp_path)
    src = _csv(tmp_path, ("23", repr(SECRET), "61"))
    code, err, rec = _run(tmp_path, capsys, *COLUMN, *budget, "--on-outside", "raise",
                          src=src)
    assert code == 3
    _check_failure(rec, code, err, "data")
    assert "row 2" in rec["error"]
    text = json.dumps(rec)
    for form in (repr(SECRET), f"{SECRET:g}", f"{SECRET:.2f}", str(int(SECRET))):
        assert form not in text
    # the budget, opened by the run, read after the failure: nothing was charged
    assert rec["budget"] == {"epsilon": 0.75, "delta": 0.0, "spent": [0.0, 0.0],
                             "remaining": [0.75, 0.0]}
    assert bndp.Budget.open(store, "nightly").history == []


def test_budget_exceeded_exit_4_records_what_remains(tmp_path, capsys):
    store, budget = _budget(tmp_path, epsilon=0.3)
    assert _run(tmp_path, capsys, *COLUMN, *budget)[0] == 0
    code, err, rec = _run(tmp_path, capsys, *COLUMN, *budget)
    assert code == 4
    _check_failure(rec, code, err, "budget")
    assert rec["budget"]["spent"] == [0.25, 0.0]
    assert rec["budget"]["remaining"][0] == pytest.approx(0.05)
    assert rec["budget"]["remaining"] == list(bndp.Budget.open(store, "nightly").remaining)
    assert len(bndp.Budget.open(store, "nightly").history) == 1


def test_missing_budget_exit_4_opens_and_creates_nothing(tmp_path, capsys):
    store, _ = _budget(tmp_path)
    code, err, rec = _run(tmp_path, capsys, *COLUMN, "--budget-store", store,
                          "--budget-name", "weekly")
    assert code == 4
    _check_failure(rec, code, err, "budget")
    assert rec["budget"] is None                   # never opened, so not read
    assert [b for b in ("nightly", "weekly") if _exists(store, b)] == ["nightly"]


def _exists(store, name):
    try:
        bndp.Budget.open(store, name)
    except bndp.BudgetError:
        return False
    return True


def test_missing_store_exit_1_creates_no_store(tmp_path, capsys):
    store = tmp_path / "missing.db"
    code, err, rec = _run(tmp_path, capsys, *COLUMN, "--budget-store", str(store),
                          "--budget-name", "nightly")
    assert code == 1
    _check_failure(rec, code, err, "io")
    assert rec["budget"] is None and not store.exists()


def test_release_recorded_exit_5(tmp_path, capsys):
    store, budget = _budget(tmp_path)
    assert _run(tmp_path, capsys, *COLUMN, *budget, "--release-id", "2024-06-01")[0] == 0
    code, err, rec = _run(tmp_path, capsys, *COLUMN, *budget, "--release-id", "2024-06-01")
    assert code == 5
    _check_failure(rec, code, err, "release_recorded")
    assert rec["release_id"] == "2024-06-01"
    assert rec["budget"]["remaining"] == [0.5, 0.0]
    assert len(bndp.Budget.open(store, "nightly").history) == 1


def test_io_error_exit_1(tmp_path, capsys):
    code, err, rec = _run(tmp_path, capsys, *COLUMN, src=tmp_path / "missing.csv")
    assert code == 1
    _check_failure(rec, code, err, "io")
    assert "missing.csv" in rec["error"]


def test_a_failure_replaces_the_previous_record_atomically(tmp_path, capsys):
    store, budget = _budget(tmp_path, epsilon=0.3)
    assert _run(tmp_path, capsys, *COLUMN, *budget)[2]["status"] == "ok"
    code, err, rec = _run(tmp_path, capsys, *COLUMN, *budget)     # over the budget
    assert code == 4 and rec["status"] == "error"
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".summary.")]


def test_a_record_cut_short_leaves_the_previous_one(tmp_path, capsys, monkeypatch):
    store, budget = _budget(tmp_path, epsilon=0.3)
    ok = _run(tmp_path, capsys, *COLUMN, *budget)[2]

    def dump(obj, f, **kwargs):          # the disk fills up halfway through the record
        f.write('{"status": "err')
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(json, "dump", dump)
    code = main(["privatize", str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.csv"),
                 "--summary-json", str(tmp_path / "run.json"), *COLUMN, *budget])
    err = capsys.readouterr().err
    monkeypatch.undo()
    assert code == 4 and "could not be written" in err
    assert json.loads((tmp_path / "run.json").read_text()) == ok
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".summary.")]


def test_interrupted_run_is_recorded(tmp_path, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_privatize, "_privatize_csv", interrupted)
    code, err, rec = _run(tmp_path, capsys, *COLUMN)
    assert code == 130
    assert (rec["status"], rec["exit_code"], rec["error_kind"], rec["charged"]) == (
        "error", 130, "interrupted", None)


def test_failure_after_the_charge_records_the_charge(tmp_path, capsys, monkeypatch):
    store, budget = _budget(tmp_path)

    def put_in_place(self, final):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_io.Staged, "put_in_place", put_in_place)
    code, err, rec = _run(tmp_path, capsys, *COLUMN, *budget)
    assert code == 1
    assert (rec["status"], rec["error_kind"]) == ("error", "io")
    assert rec["error"] == _error_line(err) and "No space left" in rec["error"]
    assert rec["charged"] == [0.25, 0.0]           # committed before the failure
    assert rec["budget"]["spent"] == [0.25, 0.0]
    assert len(bndp.Budget.open(store, "nightly").history) == 1


def test_an_unwritable_record_does_not_hide_the_error(tmp_path, capsys, monkeypatch):
    def refuse(path, record):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(_run_record, "write_json", refuse)
    code, err, rec = _run(tmp_path, capsys, "--column", "age:0:120", "--epsilon", "0.25")
    assert code == 2 and rec is None
    assert "--sensitivity" in _error_line(err)
    assert "the record of the failed run could not be written" in err


@pytest.mark.parametrize("where", ["missing_dir", "directory", "input", "spec", "store",
                                   "spec_store"])
def test_no_record_where_the_path_is_the_problem(tmp_path, capsys, where):
    """The record is not written over the run's files, nor where it cannot go; the run
    fails as before, its files untouched."""
    src = _csv(tmp_path)
    spec = tmp_path / "release.toml"
    store = tmp_path / "ledger.db"
    bndp.Budget.create(str(store), "nightly", epsilon=1.0)
    extra: tuple = COLUMN
    if where == "spec_store":
        # the spec names the store and fails before the budget is opened
        spec.write_text('[columns]\nage = 5\n[budget]\nstore = "ledger.db"\n'
                        'name = "nightly"\n')
        extra = ("--spec", str(spec))
    elif where == "spec":
        spec.write_text('[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\n'
                        'epsilon = 0.25\n')
        extra = ("--spec", str(spec))
    elif where == "store":
        extra = COLUMN + ("--budget-store", str(store), "--budget-name", "nightly")
    summary = {"missing_dir": tmp_path / "nodir" / "run.json", "directory": tmp_path,
               "input": src, "spec": spec, "store": store, "spec_store": store}[where]
    before = {p: p.read_bytes() for p in (src, spec, store) if p.is_file()}
    code = main(["privatize", str(src), "-o", str(tmp_path / "out.csv"),
                 "--summary-json", str(summary), *extra])
    capsys.readouterr()
    assert code in (1, 2)
    assert {p: p.read_bytes() for p in before} == before
    assert not (tmp_path / "nodir").exists()
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".summary.")]
    assert bndp.Budget.open(str(store), "nightly").history == []


def test_the_record_s_exit_code_is_main_s(tmp_path, capsys):
    """The exit status of each failure, as the record says it, is the one main returns."""
    store, budget = _budget(tmp_path, epsilon=0.3)
    cases = [(COLUMN[:4], 2), ((*COLUMN, "--budget-name", "x"), 2),
             ((*COLUMN, "--on-outside", "raise"), 3), ((*COLUMN, *budget, "--epsilon", "1"), 4)]
    src = _csv(tmp_path, ("23", "130"))
    for extra, expected in cases:
        code, err, rec = _run(tmp_path, capsys, *extra, src=src)
        assert code == expected == rec["exit_code"], (extra, err)
        assert rec["error_kind"] == _run_record.ERROR_KINDS[code]


def test_no_record_when_the_command_line_cannot_be_read(tmp_path, capsys):
    """An error of the command line itself (argparse's) ends the run before its arguments
    are read: no record."""
    with pytest.raises(SystemExit) as exc:
        main(["privatize", str(_csv(tmp_path)), "-o", str(tmp_path / "out.csv"),
              "--summary-json", str(tmp_path / "run.json"), *COLUMN, "--workers", "0"])
    assert exc.value.code == 2 and "--workers" in capsys.readouterr().err
    assert not (tmp_path / "run.json").exists()


def test_broken_pipe_after_the_charge(tmp_path, capsys, monkeypatch):
    """Written to stdout (``-o -``) whose reader closed it: exit 141, the charge committed
    before the copy, so the record says what was charged."""
    store, budget = _budget(tmp_path)

    def closed(*args, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli_privatize.shutil, "copyfileobj", closed)
    summary = tmp_path / "run.json"
    code = main(["privatize", str(_csv(tmp_path)), "-o", "-", "--summary-json", str(summary),
                 *COLUMN, *budget])
    monkeypatch.undo()
    capsys.readouterr()
    rec = json.loads(summary.read_text())
    assert code == 141
    assert (rec["status"], rec["exit_code"], rec["error_kind"], rec["output"]) == (
        "error", 141, "broken_pipe", "<stdout>")
    assert rec["charged"] == [0.25, 0.0] and rec["budget"]["remaining"] == [0.5, 0.0]
