"""The public API's docstrings: every example runs, and every public object has the numpydoc
sections the reference site shows (Parameters, Returns, Examples).

"Public" is read from the code, so objects added later are covered without editing this
file: every name in ``bndp.__all__`` and in the ``__all__`` of each public submodule (a
module of the ``bndp`` package whose name does not start with ``_``; see
:data:`NOT_API` for the exceptions). The doctests run over every module that defines one
of these objects, and over the public modules themselves.
"""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import inspect
import os
import pkgutil
import re
import shutil
import sys
import warnings

import pytest

import bndp

#: Submodules that are not part of the importable API: the command-line program (documented
#: by ``bndp --help``) and the module runner.
NOT_API = {"bndp.cli", "bndp.__main__"}

OPTIONFLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def public_modules() -> list:
    """``bndp`` and its public submodules that declare ``__all__``."""
    names = ["bndp"]
    for info in pkgutil.iter_modules(bndp.__path__, "bndp."):
        leaf = info.name.rsplit(".", 1)[1]
        if leaf.startswith("_") or info.name in NOT_API:
            continue
        names.append(info.name)
    mods = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:  # an optional engine (pyspark, dask) that is not installed
            continue
        mod = sys.modules[name]  # not getattr: bndp.verify (the function) shadows the module
        if hasattr(mod, "__all__"):
            mods.append(mod)
    return mods


def public_objects() -> dict:
    """``{qualified public name: object}`` for every function and class in the ``__all__``
    of a public module (modules and data constants excluded; an object exported by several
    modules is listed once)."""
    seen: dict = {}
    out: dict = {}
    for mod in public_modules():
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or not callable(obj):
                continue
            if id(obj) in seen:
                continue
            seen[id(obj)] = True
            out[f"{mod.__name__}.{name}"] = obj
    return out


def doctest_modules() -> list:
    """Modules whose doctests run: the public modules and every module defining a public
    object."""
    names = {m.__name__ for m in public_modules()}
    names |= {obj.__module__ for obj in public_objects().values()}
    return sorted(names)


# --------------------------------------------------------------------------------------
# numpydoc section parsing (no numpydoc dependency: the sections are plain text)
# --------------------------------------------------------------------------------------

_HEADER = re.compile(r"^(?P<title>[A-Z][A-Za-z ]+)\n-{3,}\n", re.M)


def sections(doc: str | None) -> dict:
    """``{section title: body}`` of a numpydoc docstring (dedented)."""
    text = inspect.cleandoc(doc or "") + "\n"
    heads = list(_HEADER.finditer(text))
    out = {}
    for i, h in enumerate(heads):
        if len(text[h.start():h.end()].splitlines()[1]) != len(h.group("title")):
            continue  # an underline of another length is not a numpydoc header
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        out[h.group("title")] = text[h.end():end]
    return out


def documented_names(body: str) -> set:
    """Names documented in a Parameters/Attributes section: the unindented entry lines
    ``name : type`` or ``name1, name2 : type`` (``*args``/``**kwargs`` without stars)."""
    names = set()
    for line in body.splitlines():
        if not line or line[0].isspace():
            continue
        head = line.split(" : ", 1)[0]
        for part in head.split(","):
            part = part.strip().lstrip("*")
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
                names.add(part)
    return names


def signature_names(obj) -> list:
    """Parameter names the docstring must document (``self``/``cls`` left out); a class
    without an introspectable signature (an exception type) takes ``*args``."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return ["args"]
    return [p.name for p in sig.parameters.values() if p.name not in ("self", "cls")]


def is_record(cls) -> bool:
    """A dataclass or NamedTuple: its fields are documented as Attributes."""
    return dataclasses.is_dataclass(cls) or (issubclass(cls, tuple) and hasattr(cls, "_fields"))


# --------------------------------------------------------------------------------------
# (a) the examples run
# --------------------------------------------------------------------------------------

def _java() -> bool:
    return shutil.which("java") is not None or bool(os.environ.get("JAVA_HOME"))


@pytest.fixture(scope="module")
def spark_session():
    pytest.importorskip("pyspark")
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    if not _java():
        pytest.skip("Spark needs a Java runtime (17+)")
    from .conftest import bndp_import_root

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    # executors are separate Python processes: they must import this checkout's bndp
    os.environ["PYTHONPATH"] = bndp_import_root() + os.pathsep + os.environ.get("PYTHONPATH", "")
    from pyspark.sql import SparkSession

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = (SparkSession.builder.master("local[1]").appName("bndp-doctest")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.execution.arrow.pyspark.enabled", "true")
             .config("spark.driver.memory", "1g")
             .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def _run_doctests(module, extraglobs=None):
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=OPTIONFLAGS)
    tests = [t for t in finder.find(module, module.__name__, extraglobs=extraglobs) if t.examples]
    for t in tests:
        runner.run(t)
    return runner.summarize(verbose=False), tests


@pytest.mark.parametrize("name", [m for m in doctest_modules() if not m.endswith(".spark")])
def test_doctests(name):
    module = sys.modules[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        result, _ = _run_doctests(module)
    assert result.failed == 0, f"{result.failed} doctest example(s) of {name} failed (see above)"


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")
def test_spark_doctests(spark_session):
    names = [m for m in doctest_modules() if m.endswith(".spark")]
    assert names
    for name in names:
        result, _ = _run_doctests(sys.modules[name], extraglobs={"spark": spark_session})
        assert result.failed == 0, f"{result.failed} doctest example(s) of {name} failed"


def test_every_public_object_has_a_running_example():
    """Each public object's own docstring holds at least one example, and the doctest
    finder collects it (so :func:`test_doctests` runs it)."""
    finder = doctest.DocTestFinder()
    missing = []
    for qual, obj in public_objects().items():
        mod = sys.modules[obj.__module__]
        found = {t.name for t in finder.find(mod, mod.__name__) if t.examples}
        own = f"{obj.__module__}.{obj.__qualname__}"
        if own not in found:
            missing.append(qual)
    assert not missing, f"no runnable example in the docstring of: {', '.join(missing)}"


# --------------------------------------------------------------------------------------
# (b) the sections
# --------------------------------------------------------------------------------------

def test_public_surface_is_found():
    objs = public_objects()
    # the surface this test is known to cover (more may be added; none may disappear)
    for name in ["bndp.BoundedLaplace", "bndp.BoundedGaussian", "bndp.ConstrainedLaplace",
                 "bndp.sample", "bndp.default_rng", "bndp.BudgetError",
                 "bndp.calibrate.bounded_laplace_epsilon", "bndp.accounting.gaussian_rdp",
                 "bndp.verify.privacy_profile", "bndp.special.lambertw",
                 "bndp.verify.LossCertificate"]:
        assert name in objs
    assert len(objs) >= 42


def _section_problems(qual: str, obj) -> list:
    secs = sections(obj.__doc__)
    problems = []
    params = signature_names(obj)
    if inspect.isclass(obj) and is_record(obj):
        fields = [f.name for f in dataclasses.fields(obj)] if dataclasses.is_dataclass(obj) \
            else list(obj._fields)
        have = documented_names(secs.get("Attributes", ""))
        if "Attributes" not in secs:
            problems.append("Attributes (the record's fields)")
        elif set(fields) - have:
            problems.append(f"Attributes entries for {sorted(set(fields) - have)}")
    elif params:
        have = documented_names(secs.get("Parameters", ""))
        if "Parameters" not in secs:
            problems.append("Parameters")
        elif set(params) - have:
            problems.append(f"Parameters entries for {sorted(set(params) - have)}")
    if not inspect.isclass(obj) and "Returns" not in secs and "Yields" not in secs:
        problems.append("Returns")
    if ">>>" not in secs.get("Examples", ""):
        problems.append("Examples")
    return problems


def test_every_public_object_has_numpydoc_sections():
    bad = {}
    for qual, obj in public_objects().items():
        problems = _section_problems(qual, obj)
        if problems:
            bad[qual] = problems
    assert not bad, "missing numpydoc sections:\n" + "\n".join(
        f"  {k}: {', '.join(v)}" for k, v in sorted(bad.items()))


def test_public_methods_have_docstrings():
    """Methods and properties of the public classes appear in the reference: each one says
    what it does."""
    bad = []
    for qual, obj in public_objects().items():
        if not inspect.isclass(obj) or is_record(obj) or issubclass(obj, BaseException):
            continue
        for name, member in vars(obj).items():
            if name.startswith("_"):
                continue
            fn = member.fget if isinstance(member, property) else \
                getattr(member, "__func__", member)
            if not callable(fn):
                continue
            if not (inspect.getdoc(fn) or "").strip():
                bad.append(f"{qual}.{name}")
    assert not bad, f"public methods without a docstring: {', '.join(bad)}"


# --------------------------------------------------------------------------------------
# the checker itself
# --------------------------------------------------------------------------------------

def test_section_checker_catches_what_it_should():
    def f(a, b=1):
        """Do something.

        Parameters
        ----------
        a : float
            A.

        Examples
        --------
        >>> f(1)
        """

    class Rec:
        """A class.

        Parameters
        ----------
        x, y : float
        *args : object

        Examples
        --------
        >>> Rec
        """

        def __init__(self, x, y, *args):
            pass

    assert _section_problems("f", f) == ["Parameters entries for ['b']", "Returns"]
    assert _section_problems("Rec", Rec) == []
    assert documented_names("x, y : float\n    text : not a name\n*args : object\n") == \
        {"x", "y", "args"}
    assert set(sections(f.__doc__)) == {"Parameters", "Examples"}
    g = lambda a: a  # noqa: E731  (no docstring at all)
    assert _section_problems("g", g) == ["Parameters", "Returns", "Examples"]
