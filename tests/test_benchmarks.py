"""The asv suite in benchmarks/: asv imports every module there at discovery, so each module
must import without side effects (whatever the command line), the side-by-side comparison
scripts must not look like benchmarks to asv, and every public sampler, calibration and
release path has a benchmark."""

import glob
import inspect
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import bndp

from .conftest import bndp_import_root

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "benchmarks")

if not os.path.isdir(BENCH):
    pytest.skip("needs the source tree", allow_module_level=True)

MODULES = sorted(os.path.splitext(os.path.basename(p))[0]
                 for p in glob.glob(os.path.join(BENCH, "*.py")) if not p.endswith("__init__.py"))
COMPARE = [m for m in MODULES if m.startswith("compare")]
SUITES = [m for m in MODULES if m.startswith("bench_")]

# the names asv collects (asv_runner.benchmarks: time, timeraw, mem, peakmem, track), as a
# module-level function or a method of a module-level class
ASV_NAME = re.compile(r"^(time_|timeraw_|mem_|peakmem_|track_|Time[A-Z_]|Mem[A-Z_]|"
                      r"PeakMem[A-Z_]|Track[A-Z_])")


#: packages a suite may import without the bench extra carrying them (see
#: test_bench_extra_carries_what_the_suites_import)
OPTIONAL = {"pyspark", "torch"}


def _env():
    return dict(os.environ, PYTHONPATH=bndp_import_root() + os.pathsep + ROOT)


def test_every_benchmark_module_imports_without_side_effects():
    # asv imports each module in a process whose argv is asv's own ("discover", a path...):
    # a script that parses sys.argv on import breaks discovery of the whole suite
    assert "compare" in COMPARE and "compare_random" in COMPARE and SUITES
    code = ("import importlib, sys\n"
            "sys.argv = ['benchmark.py', 'discover', '/nonexistent/dir', '/tmp/result.json']\n"
            f"for name in {MODULES!r}:\n"
            "    importlib.import_module('benchmarks.' + name)\n"
            "print('imported', len(sys.argv))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env=_env(), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == ["imported", "4"]  # and nothing printed on import


def _asv_names(module):
    found = []
    for name, obj in vars(module).items():
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj) and ASV_NAME.match(name):
            found.append(name)
        elif inspect.isclass(obj):
            found += [f"{name}.{m}" for m in vars(obj) if ASV_NAME.match(m)]
            if ASV_NAME.match(name):
                found.append(name)
    return found


def test_comparison_scripts_define_nothing_asv_would_run(monkeypatch):
    import importlib

    monkeypatch.syspath_prepend(ROOT)
    monkeypatch.setattr(sys, "argv", ["benchmark.py", "discover"])
    for name in COMPARE:
        mod = importlib.import_module("benchmarks." + name)
        assert callable(getattr(mod, "main", None)), name
        assert _asv_names(mod) == [], name
    # the asv suites themselves do define benchmarks (the pattern is not vacuous)
    assert _asv_names(importlib.import_module("benchmarks.bench_core"))


def _suite_source():
    text = ""
    for name in SUITES:
        with open(os.path.join(BENCH, name + ".py"), encoding="utf-8") as f:
            text += f.read()
    return text


def test_every_public_sampler_calibration_and_release_path_has_a_benchmark():
    import bndp.accounting
    import bndp.calibrate
    import bndp.special

    verify_module = sys.modules["bndp.verify"]
    src = _suite_source()
    want = set()
    for name in bndp.__all__:
        obj = getattr(bndp, name)
        if inspect.isclass(obj) and issubclass(obj, bndp.Mechanism) and obj is not bndp.Mechanism:
            want.add(name)  # every mechanism class
        elif inspect.isfunction(obj) and name != "default_rng":
            # the top-level functions (bndp.sample, bndp.privatize, truncated_normal, ...):
            # called as bndp.NAME( or imported by name
            want.add(f"bndp.{name}(" if name in ("sample", "privatize") else name)
    assert {"bndp.sample(", "truncated_normal", "audit"} <= want
    for mod in (bndp.calibrate, bndp.accounting, verify_module, bndp.special):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if callable(obj) and not (inspect.isclass(obj) and name.endswith(("Result",
                                                                              "Certificate"))):
                want.add(name)
    # the release paths of the command line, Dask and Spark
    want |= {'"privatize"', "bndp.dask", "bndp.spark"}
    assert {"BoundedLaplace", "StochasticSign", "gaussian_sigma", "rdp_to_dp",
            "PerInstanceAccountant", "privacy_profile", "lambertw"} <= want
    missing = sorted(w for w in want
                     if not re.search((r"\b" if w[0].isalpha() else "") + re.escape(w), src))
    assert missing == []


def test_bench_extra_carries_what_the_suites_import():
    # every package a suite imports is a core dependency or in the bench extra (and in the
    # matrix of the environments asv builds); pyspark and torch alone are optional (pyspark
    # needs Java, torch is the torch extra's multi-gigabyte install), and their benchmarks
    # skip without them (test_torch_benchmark_skips_without_torch; Spark's in bench_etl)
    import ast
    import json

    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]

    def names(reqs):
        return {re.split(r"[\[<>=!~ ;]", r, maxsplit=1)[0].lower() for r in reqs}

    bench = names(project["optional-dependencies"]["bench"])
    core = names(project["dependencies"]) | {"bndp"}
    imported = set()
    for name in SUITES:
        with open(os.path.join(BENCH, name + ".py"), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
    third_party = {m for m in imported if m not in sys.stdlib_module_names}
    assert {"pandas", "pyarrow", "dask"} <= third_party
    assert third_party - core - OPTIONAL <= bench, third_party - core - bench
    assert "asv" in bench
    with open(os.path.join(ROOT, "asv.conf.json"), encoding="utf-8") as f:
        matrix = names(json.load(f)["matrix"]["req"])
    assert bench - {"asv"} <= matrix, bench - matrix


def test_torch_benchmark_skips_without_torch():
    # with the package unimportable, the benchmark's setup raises NotImplementedError (asv's
    # skip) instead of failing the run
    code = ("import sys\n"
            "sys.modules['torch'] = None\n"         # `import torch` raises ImportError
            "from benchmarks.bench_torch import TensorInput\n"
            "for p in TensorInput.params[0]:\n"
            "    for k in TensorInput.params[1]:\n"
            "        try:\n"
            "            TensorInput().setup(p, k)\n"
            "        except NotImplementedError:\n"
            "            continue\n"
            "        raise SystemExit(f'{p}/{k} did not skip')\n"
            "print('skipped')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env=_env(), timeout=300)
    assert r.returncode == 0 and r.stdout.split() == ["skipped"], r.stdout + r.stderr[-3000:]


@pytest.mark.skipif(shutil.which("asv") is None, reason="needs asv (the bench extra)")
def test_asv_check_discovers_the_suite(tmp_path):
    # `asv check --python=same` imports the suite as `asv run` does and checks every
    # benchmark's signature; asv drops PYTHONPATH and takes ASV_PYTHONPATH instead
    env = dict(os.environ, ASV_PYTHONPATH=bndp_import_root(), HOME=str(tmp_path))
    env.pop("PYTHONPATH", None)
    r = subprocess.run(["asv", "check", "--python=same"], cwd=ROOT, capture_output=True,
                       text=True, env=env, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "No problems found" in out


def test_compare_grid_sections_run(monkeypatch, capsys):
    # the default-law sections of compare.py on small inputs: they construct the mechanisms
    # as users do (keywords) and print a ratio per goal
    monkeypatch.syspath_prepend(BENCH)
    import compare

    compare.grid_section(4000, 1)
    compare.grid_ratio_section(20000, 1, pairs=200)
    out = capsys.readouterr().out
    assert "x continuous" in out and out.count("\n") >= 8


def test_estimate_coverage_script_runs(monkeypatch, capsys, tmp_path):
    # benchmarks/estimate_coverage.py on a small setting: one line per variant, with the
    # quantities docs/estimates.md reads off it, and the saved per-repetition records
    monkeypatch.syspath_prepend(BENCH)
    import estimate_coverage

    save = tmp_path / "records.npy"
    estimate_coverage.main(["laplace", "1", "rows", "skewed", "--reps", "3", "--n", "1500",
                            "--boot", "8", "--variants", "{}", '{"resolution": 0.25}',
                            "--save", str(save)])
    rec = np.load(save)
    assert rec.shape == (3, 11)
    assert np.all((rec[:, 4] <= rec[:, 1]) & (rec[:, 1] <= rec[:, 5]))   # estimate inside
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("laplace eps=1 rows skewed n=1500: 3 repetitions")
    assert len(out) == 3 and all("coverage" in line and "bias left" in line
                                 and "centre sd" in line and "normal coverage from these" in line
                                 for line in out[1:])
    assert '"resolution": 0.25' in out[2]
    # --seed: another independent run of the setting
    estimate_coverage.main(["laplace", "1", "rows", "skewed", "--reps", "2", "--n", "1500",
                            "--boot", "4", "--seed", "2", "--save", str(save)])
    assert ", seed 2" in capsys.readouterr().out.splitlines()[0]
    assert not np.array_equal(np.load(save)[:, 0], rec[:2, 0])     # other true columns


def test_estimate_coverage_statistics(monkeypatch, capsys, tmp_path):
    # --statistics: the quantiles', variance's and histogram bins' coverage lines, and per
    # repetition the true values, estimates and both intervals, each estimate inside the
    # library's interval and the records' intervals those of the estimate
    monkeypatch.syspath_prepend(BENCH)
    import estimate_coverage

    save = tmp_path / "stats.npy"
    estimate_coverage.main(["gaussian", "1", "fixed", "skewed", "--reps", "3", "--n", "1500",
                            "--boot", "8", "--statistics", "--save", str(save)])
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0].strip() for line in out[2:]] == ["quantiles", "variance",
                                                                 "histogram"]
    assert all("| basic" in line for line in out[2:])
    rec = np.load(save)
    nq, nh = estimate_coverage.QS.size, estimate_coverage.EDGES.size - 1
    assert rec.shape == (3, 6 + 6 * (nq + 1 + nh))
    S = rec[:, 6:]
    t, est, a, b = (S[:, nq * i:nq * (i + 1)] for i in range(4))
    assert np.all((a <= est) & (est <= b)) and np.all(np.diff(t, axis=1) >= 0)
    v = S[:, 6 * nq:6 * nq + 6]
    assert np.all((v[:, 2] <= v[:, 1]) & (v[:, 1] <= v[:, 3]))
    h = S[:, 6 * nq + 6:]
    assert np.allclose(h[:, :nh].sum(axis=1), 1.0)
