"""bndp's exception and warning types are declared in one module, :mod:`bndp.exceptions`,
exported from ``bndp``; their fields carry what a front end needs to word them."""

from __future__ import annotations

import ast
import pathlib
import pickle

import numpy as np
import pandas as pd
import pytest

import bndp
import bndp.exceptions

SRC = pathlib.Path(bndp.__file__).parent

#: exception classes allowed outside bndp.exceptions, with the reason
ALLOWED_ELSEWHERE = {
    # the command line's own errors: they carry its exit statuses, and the library never
    # raises them
    ("cli/_errors.py", "CLIError"),
    ("cli/_errors.py", "DataError"),
    ("cli/_errors.py", "FileError"),
    ("cli/_errors.py", "_Terminated"),
    # a control-flow signal of a scale search, caught in the function that raises it
    ("_laws/constrained.py", "_OverBudget"),
}

_BASES = {"Exception", "BaseException", "Warning", "UserWarning", "RuntimeWarning",
          "ValueError", "TypeError", "DeprecationWarning", "FutureWarning", "RuntimeError",
          "ArithmeticError", "LookupError", "KeyError", "OSError"}


def _exception_classes() -> list[tuple[str, str]]:
    """Every class of bndp's sources that derives from an exception or warning type: the
    built-in ones, or one of bndp's own (found by name, to a fixed point)."""
    classes = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else
                         b.attr if isinstance(b, ast.Attribute) else "" for b in node.bases}
                classes.append((path.relative_to(SRC).as_posix(), node.name, bases))
    names = set(_BASES)
    found: set[tuple[str, str]] = set()
    while True:
        more = {(f, n) for f, n, bases in classes if bases & names} - found
        if not more:
            return sorted(found)
        found |= more
        names |= {n for _, n in more}


def test_every_exception_type_is_declared_in_bndp_exceptions():
    found = _exception_classes()
    assert ("exceptions.py", "SpecError") in found          # the walk sees them
    outside = {(f, n) for f, n in found if f != "exceptions.py"} - ALLOWED_ELSEWHERE
    assert outside == set()


def test_public_types_are_exported_from_bndp():
    for f, name in _exception_classes():
        if f == "exceptions.py" and not name.startswith("_"):
            assert name in bndp.exceptions.__all__
            assert name in bndp.__all__ and getattr(bndp, name) is getattr(bndp.exceptions, name)


def test_old_import_places_still_work():
    from bndp._ledger._backends import StoreNotFound
    from bndp._release import ColumnDataError, SpecError
    from bndp.estimation import ScaledModelWarning

    assert SpecError is bndp.SpecError and ColumnDataError is bndp.ColumnDataError
    assert StoreNotFound is bndp.StoreNotFound
    assert ScaledModelWarning is bndp.ScaledModelWarning


SPEC = {"age": {"lower": 0.0, "upper": 120.0, "sensitivity": 1.0, "epsilon": 1.0}}


@pytest.mark.parametrize("entry, cls, key, detail", [
    ({"epsilon": -1.0}, bndp.SpecError, None, "`epsilon` must be finite and >= 0; got -1.0"),
    ({"epsilon": "1"}, bndp.SpecTypeError, "epsilon", "must be a real number; got '1'"),
    ({"colour": 1}, bndp.SpecError, "colour", "unknown key for mechanism 'laplace'"),
    ({"on_outside": "wrap"}, bndp.SpecError, "on_outside", "`on_outside` must be"),
])
def test_spec_errors_carry_their_column_key_and_detail(entry, cls, key, detail):
    spec = {"age": {**SPEC["age"], **entry}}
    with pytest.raises(cls) as info:
        bndp.privatize(pd.DataFrame({"age": [30.0]}), spec)
    err = info.value
    assert (err.column, err.key) == ("age", key)
    assert err.detail.startswith(detail)
    where = "spec column 'age'" + ("" if key is None else f", key {key!r}")
    assert str(err) == f"{where}: {err.detail}"                   # the message as before
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is cls and (again.column, again.key, again.detail, str(again)) == (
        err.column, err.key, err.detail, str(err))


def test_spec_error_without_fields_is_its_message():
    err = bndp.SpecError("`spec` must name at least one column")
    assert (err.column, err.key, err.detail) == (None, None, None)
    assert str(err) == "`spec` must name at least one column"
    with pytest.raises(bndp.SpecError, match="at least one column"):
        bndp.privatize(pd.DataFrame({"age": [30.0]}), {})


def test_column_data_error_is_picklable_with_its_fields():
    with pytest.raises(bndp.ColumnDataError) as info:
        bndp.privatize(pd.DataFrame({"age": [30.0, np.nan]}), SPEC)
    err = pickle.loads(pickle.dumps(info.value))
    assert (err.kind, err.column, err.row) == ("missing", "age", 1)


def test_store_not_found(tmp_path):
    with pytest.raises(bndp.StoreNotFound, match="does not exist"):
        bndp.Budget.open(str(tmp_path / "nodir" / "b.db"), "survey")
