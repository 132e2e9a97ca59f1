"""The package's layers stay clean (issue 23): read from the source with :mod:`ast`, so that
function-local imports count as much as top-level ones.

Nodes are bndp's top-level modules and subpackages (``bndp.api``, ``bndp.mechanisms``,
``bndp._columns``, ...; imports inside one subpackage stay inside its node) and the root
package ``bndp`` itself (``from bndp import X`` where X is no submodule)."""

from __future__ import annotations

import ast
import os

import pytest

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "bndp")

# what the mechanisms must never import: adapters and engines sit above them
ABOVE_MECHANISMS = ("bndp.integrations", "bndp.frames", "bndp.cli", "bndp.spark", "bndp.dask",
                    "bndp.torch", "bndp.verify", "bndp.api", "bndp._release", "bndp.reproduce")


def _modules() -> dict[str, str]:
    """Dotted module name -> path, for every Python module of the package; compiled
    extension modules (those of ``bndp._core``) are listed by their Cython source, with no path."""
    mods: dict[str, str] = {}
    root = os.path.dirname(SRC)
    for dirpath, dirnames, filenames in os.walk(SRC):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "__pycache__"))]
        for f in filenames:
            stem, ext = os.path.splitext(f)
            if ext not in (".py", ".pyx"):
                continue
            parts = os.path.relpath(os.path.join(dirpath, stem), root).split(os.sep)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join(parts)
            if ext == ".py":
                mods[name] = os.path.join(dirpath, f)
            else:
                mods.setdefault(name, "")
    return mods


MODULES = _modules()


def _node(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _imports(module: str) -> list[tuple[str, int]]:
    """(imported bndp module, line) for every import statement of ``module``, anywhere in
    its body; ``from pkg import name`` counts as an import of ``pkg.name`` when that is a
    module, else of ``pkg``."""
    path = MODULES[module]
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    is_pkg = os.path.basename(path) == "__init__.py"
    package = module if is_pkg else module.rpartition(".")[0]
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out += [(a.name, n.lineno) for a in n.names]
        elif isinstance(n, ast.ImportFrom):
            if n.level:
                base = package.split(".")[: len(package.split(".")) - (n.level - 1)]
                target = ".".join(base + ([n.module] if n.module else []))
            else:
                target = n.module or ""
            for a in n.names:
                sub = f"{target}.{a.name}"
                out.append((sub if sub in MODULES else target, n.lineno))
    return list(dict.fromkeys((t, line) for t, line in out
                              if t == "bndp" or t.startswith("bndp.")))


def _graph() -> dict[str, dict[str, list[str]]]:
    """Layer -> imported layer -> the import sites ("module:line")."""
    g: dict[str, dict[str, list[str]]] = {}
    for m, path in MODULES.items():
        if not path:
            continue
        for t, line in _imports(m):
            a, b = _node(m), _node(t)
            if a != b:
                g.setdefault(a, {}).setdefault(b, []).append(f"{m}:{line}")
    return g


def _find_cycle(g: dict[str, dict[str, list[str]]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(v: str) -> list[str] | None:
        state[v] = 1
        stack.append(v)
        for w in sorted(g.get(v, {})):
            if state.get(w) == 1:
                return stack[stack.index(w):] + [w]
            if w not in state:
                found = visit(w)
                if found:
                    return found
        stack.pop()
        state[v] = 2
        return None

    for v in sorted(g):
        if v not in state:
            found = visit(v)
            if found:
                return found
    return None


def test_the_graph_is_read():
    g = _graph()
    # a few edges that must be seen, function-local ones included
    assert "bndp.mechanisms" in g["bndp.verify"]
    assert "bndp._columns" in g["bndp.mechanisms"]
    assert "bndp.integrations" in g["bndp.frames"]  # the engine hand-off, function-local
    assert "bndp._core" in g["bndp.calibrate"]  # the compiled core is a node too


def test_no_import_cycle_between_layers():
    g = _graph()
    cycle = _find_cycle(g)
    if cycle:
        sites = [f"{a} -> {b} ({', '.join(g[a][b][:3])})" for a, b in zip(cycle, cycle[1:])]
        pytest.fail("import cycle between layers:\n  " + "\n  ".join(sites))


def test_mechanisms_import_no_adapter_or_engine():
    bad = []
    for m in MODULES:
        if not (m == "bndp.mechanisms" or m.startswith("bndp.mechanisms.")) or not MODULES[m]:
            continue
        for t, line in _imports(m):
            if any(t == a or t.startswith(a + ".") for a in ABOVE_MECHANISMS):
                bad.append(f"{m}:{line} imports {t}")
    assert not bad, bad


def test_estimation_sits_above_the_release_and_below_the_command_line():
    g = _graph()
    # the estimator reads the laws (mechanisms) and the spec parser (_release); it is
    # post-processing: nothing below it, and no sampler or release path, imports it
    assert "bndp.mechanisms" in g["bndp.estimation"]
    assert "bndp.estimation" in g["bndp.cli"]
    below = [a for a, outs in g.items() if "bndp.estimation" in outs
             and a not in ("bndp", "bndp.cli")]
    assert below == [], below
    assert "bndp.estimation" not in g.get("bndp._release", {})


def test_the_reproductions_sit_on_top_and_load_only_on_demand():
    g = _graph()
    # the papers' harness is a subpackage that reads the public layers ...
    assert MODULES["bndp.reproduce"].endswith("__init__.py")
    assert {"bndp.accounting", "bndp.calibrate", "bndp.mechanisms"} <= set(g["bndp.reproduce"])
    # ... and that no layer imports but the `bndp reproduce` command, inside its function
    users = {a: outs["bndp.reproduce"] for a, outs in g.items() if "bndp.reproduce" in outs}
    assert set(users) == {"bndp.cli"}, users
    for site in users["bndp.cli"]:
        module, _, line = site.rpartition(":")
        with open(MODULES[module], encoding="utf-8") as f:
            tree = ast.parse(f.read())
        top = {n.lineno for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))}
        assert int(line) not in top, f"{site}: a top-level import of bndp.reproduce"


def test_the_budget_is_charged_in_one_module():
    charging = set()
    for m, path in MODULES.items():
        if not path or m == "bndp.budget":  # the Budget itself (its doctests are text)
            continue
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for n in ast.walk(tree):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr == "charge"):
                charging.add(m)
    assert charging == {"bndp._release.charge"}, charging


def test_the_grid_laws_sit_below_the_mechanisms():
    g = _graph()
    # bndp._laws holds the grid laws and their plans; the mechanisms, the one-call sampler
    # and the release pipeline build on it, and it imports none of them
    assert MODULES["bndp._laws"].endswith("__init__.py")
    assert "bndp._laws" in g["bndp.mechanisms"]
    assert {"bndp._core", "bndp.calibrate"} <= set(g["bndp._laws"])
    above = ("bndp.mechanisms", "bndp.accounting", "bndp.budget") + ABOVE_MECHANISMS
    bad = [f"{b} ({', '.join(sites)})" for b, sites in g["bndp._laws"].items()
           if any(b == a or b.startswith(a + ".") for a in above)]
    assert not bad, bad


def _assigned_constants(path: str) -> set[str]:
    """Upper-case names a module assigns at its top level."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = set()
    for n in tree.body:
        targets = n.targets if isinstance(n, ast.Assign) else (
            [n.target] if isinstance(n, ast.AnnAssign) else [])
        for t in targets:
            for e in (t.elts if isinstance(t, ast.Tuple) else [t]):
                if isinstance(e, ast.Name) and e.id.isupper():
                    out.add(e.id)
    return out


def test_each_grid_law_constant_is_defined_once():
    consts = _assigned_constants(MODULES["bndp._laws.constants"])
    assert {"LAPLACE", "GAUSSIAN", "REL_TOL", "SENS_STEPS", "WHOLE_RANGE_WIDTH_STEPS",
            "WINDOW_WIDTH_STEPS"} <= consts
    again = {m: sorted(consts & _assigned_constants(p)) for m, p in MODULES.items()
             if p and m != "bndp._laws.constants"}
    again = {m: names for m, names in again.items() if names}
    assert not again, again


def test_calibration_sits_below_the_mechanisms_and_the_accounting():
    g = _graph()
    # bndp.calibrate (bounded, unbounded Gaussian, concentrated DP) reads only the core, the
    # validation, the scale search and the removal helpers; the mechanisms, the laws and
    # the accounting import it
    assert MODULES["bndp.calibrate"].endswith("__init__.py")
    assert set(g["bndp.calibrate"]) <= {"bndp._core", "bndp._validation", "bndp._scale_search",
                                        "bndp._deprecate"}, \
        g["bndp.calibrate"]
    for user in ("bndp.mechanisms", "bndp._laws", "bndp.accounting"):
        assert "bndp.calibrate" in g[user], user


def test_one_scale_search_in_python():
    g = _graph()
    # the grid laws and the calibrations search scales with bndp._scale_search, which
    # imports nothing of bndp
    assert "bndp._scale_search" in g["bndp._laws"] and "bndp._scale_search" in g["bndp.calibrate"]
    assert "bndp._scale_search" not in g


def test_no_source_module_over_800_lines():
    # every hand-written module of the package (Python, Cython, C headers) stays under 800
    # lines; the generated _core.c is not one
    long = []
    for root, _, files in os.walk(SRC):
        for f in files:
            if f.endswith((".py", ".pyx", ".pxi", ".pxd", ".h", ".pyi")):
                path = os.path.join(root, f)
                with open(path, encoding="utf-8") as fh:
                    n = sum(1 for _ in fh)
                if n > 800:
                    long.append(f"{os.path.relpath(path, SRC)}: {n} lines")
    assert not long, long
