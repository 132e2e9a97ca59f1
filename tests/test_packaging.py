"""Packaging: metadata, extras, stubs, lazy imports, mypy, and a wheel that installs and works."""

import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

import bndp


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")

from .conftest import FULL, bndp_import_root  # noqa: E402

tomllib = pytest.importorskip("tomllib")


@pytest.fixture(scope="module")
def project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def _names(reqs):
    return {re.split(r"[\[<>=!~ ;]", r, maxsplit=1)[0].lower() for r in reqs}


def test_core_depends_only_on_numpy_scipy_the_secure_generator_and_narwhals(project):
    # randomgen provides the AES-CTR / ChaCha20 BitGenerators of the secure default stream;
    # narwhals (pure Python, no dependencies) lets bndp.privatize take any data frame after
    # the README's own install command; no data-engine package (pandas, pyarrow, pyspark,
    # dask, matplotlib) is a core dependency
    deps = project["project"]["dependencies"]
    assert _names(d for d in deps if "python_version" not in d) == {
        "numpy", "scipy", "randomgen", "narwhals"}
    # the TOML reader of the CLI's --spec, only where the standard library lacks tomllib
    assert [d for d in deps if "python_version" in d] == ["tomli>=2.0; python_version < '3.11'"]


def test_optional_extras(project):
    extras = {k: _names(v) for k, v in project["project"]["optional-dependencies"].items()}
    assert "pyspark" in extras["spark"] and "pandas" in extras["spark"]
    assert "dask" in extras["dask"] and "pandas" in extras["dask"]
    assert extras["plot"] == {"matplotlib"}
    assert extras["arrow"] == {"pyarrow"}
    assert extras["frames"] == {"narwhals"}  # kept for existing install commands
    assert {"pyspark", "dask", "pandas", "pyarrow", "matplotlib", "pytest", "mpmath", "polars",
            "narwhals"} <= extras["test"]


def test_console_script_and_package_data(project):
    assert project["project"]["scripts"]["bndp"] == "bndp.cli:main"
    data = project["tool"]["setuptools"]["package-data"]["bndp"]
    assert "py.typed" in data and "*.pyi" in data and "data/*.csv" in data


def test_cibuildwheel_covers_three_platforms(project):
    cb = project["tool"]["cibuildwheel"]
    assert "cp311-*" in cb["build"] and cb["test-command"]
    assert {"linux", "macos", "windows"} <= set(cb)


def test_license_is_an_spdx_expression_with_its_file(project):
    meta = project["project"]
    assert meta["license"] == "BSD-3-Clause"
    assert meta["license-files"] == ["LICENSE"]
    with open(os.path.join(ROOT, "LICENSE"), encoding="utf-8") as f:
        text = f.read()
    assert text.startswith("BSD 3-Clause License")
    assert "Copyright (c) the bndp developers" in text
    assert "Neither the name of the copyright holder" in text


def test_license_file_goes_into_the_wheel_and_the_sdist(tmp_path):
    # The metadata comes from pyproject.toml alone (setup.py only adds the extension), so a
    # copy of the tree without the extension builds in seconds through the same PEP 517
    # backend pip uses. The full builds are checked by the slow tests below.
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip("license-files needs setuptools >= 77")
    tree = tmp_path / "tree"
    shutil.copytree(os.path.join(SRC, "bndp"), tree / "src" / "bndp",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.c",
                                                  "*.html"))
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy2(os.path.join(ROOT, name), tree / name)
    (tree / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    built = []
    for hook in ("build_wheel", "build_sdist"):  # one process each, as a frontend does
        code = ("import sys\nfrom setuptools import build_meta as b\n"
                f"print('BUILT', b.{hook}(sys.argv[1]))\n")
        r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "dist")], cwd=tree,
                           capture_output=True, text=True, timeout=300, env=env)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        assert "TOML table is deprecated" not in r.stdout + r.stderr
        built += [line.split()[1] for line in r.stdout.splitlines() if line.startswith("BUILT ")]
    whl_name, sdist_name = built
    whl = zipfile.ZipFile(tmp_path / "dist" / whl_name)
    names = whl.namelist()
    assert f"bndp-{bndp.__version__}.dist-info/licenses/LICENSE" in names
    meta = whl.read(f"bndp-{bndp.__version__}.dist-info/METADATA").decode()
    assert "License-Expression: BSD-3-Clause" in meta and "License-File: LICENSE" in meta
    import tarfile

    with tarfile.open(tmp_path / "dist" / sdist_name) as tf:
        members = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
        text = tf.extractfile(f"bndp-{bndp.__version__}/LICENSE").read().decode()
    assert "LICENSE" in members and "BSD 3-Clause License" in text


def test_stub_lists_every_def_of_the_compiled_core():
    # every module of the compiled core (bndp._core.<name>, built from _core/<name>.pyx) has
    # a stub listing each of its def wrappers, and the built module has them all
    import importlib

    core = os.path.join(SRC, "bndp", "_core")
    names = sorted(f[:-4] for f in os.listdir(core) if f.endswith(".pyx"))
    assert len(names) > 1 and "testing" in names
    assert os.path.exists(os.path.join(SRC, "bndp", "py.typed"))
    for name in names:
        with open(os.path.join(core, name + ".pyx")) as f:
            pyx = f.read()
        with open(os.path.join(core, name + ".pyi")) as f:
            pyi = f.read()
        defs = set(re.findall(r"^def ([a-z]\w*)\(", pyx, flags=re.M))
        # (a def, or a name annotated with a callable Protocol shared by samplers of one shape)
        stubs = set(re.findall(r"^def ([a-z]\w*)\(", pyi, flags=re.M))
        stubs |= set(re.findall(r"^([a-z]\w*): _[A-Z]\w*$", pyi, flags=re.M))
        assert defs <= stubs, (name, defs - stubs)
        module = importlib.import_module("bndp._core." + name)
        assert all(callable(getattr(module, n)) for n in stubs), name


def test_import_does_not_load_optional_engines():
    code = ("import sys, bndp\n"
            "bad = [m for m in ('pandas', 'pyarrow', 'pyspark', 'dask', 'matplotlib') "
            "if m in sys.modules]\n"
            "assert not bad, bad\n"
            "assert callable(bndp.sample)\n")
    env = dict(os.environ, PYTHONPATH=bndp_import_root())
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr


def test_lazy_engine_attributes():
    pytest.importorskip("dask.dataframe")
    assert bndp.dask.privatize.__module__ == "bndp.integrations.dask"
    with pytest.raises(AttributeError):
        bndp.no_such_name  # noqa: B018


@pytest.mark.slow
def test_mypy_clean_on_the_package():
    pytest.importorskip("mypy")
    r = subprocess.run([sys.executable, "-m", "mypy"], capture_output=True, text=True, cwd=ROOT,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_wheel_builds_installs_and_passes_tests_in_a_fresh_venv(tmp_path):
    # `pip wheel .` exactly as a user runs it (isolated build: pip fetches Cython, NumPy and
    # SciPy for the build itself), then a fresh venv with no site packages that installs the
    # wheel and its dependencies from the registry, runs the CLI demo and a part of the tests
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    wheels = tmp_path / "wheels"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps",
                        "-w", str(wheels), "-q"],
                       capture_output=True, text=True, timeout=1200, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (whl,) = list(wheels.glob("bndp-*.whl"))
    names = zipfile.ZipFile(whl).namelist()
    for want in ("bndp/py.typed", "bndp/_core/fill.pyi", "bndp/_core/common.pxd",
                 "bndp/data/people.csv", "bndp/cli/__init__.py",
                 "bndp/integrations/spark.py", "bndp/integrations/dask.py",
                 f"bndp-{bndp.__version__}.dist-info/licenses/LICENSE"):
        assert want in names, want
    assert any(re.match(r"bndp/_core/fill\..*(so|pyd)$", n) for n in names)
    assert any(re.match(r"bndp/_core/testing\..*(so|pyd)$", n) for n in names)
    assert not any(n.endswith((".pyx", ".pxi", ".c")) for n in names)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = str(venv / ("Scripts" if os.name == "nt" else "bin") / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", str(whl), "pytest", "mpmath"],
                   check=True, timeout=1200, env=env)
    work = tmp_path / "work"
    shutil.copytree(os.path.join(ROOT, "tests"), work / "tests",
                    ignore=shutil.ignore_patterns("__pycache__"))
    r = subprocess.run([py, "-c", "import bndp, sys; print(bndp.__file__)"], cwd=work,
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0 and str(venv) in r.stdout, r.stdout + r.stderr
    bndp_exe = str(venv / ("Scripts" if os.name == "nt" else "bin") / "bndp")
    r = subprocess.run([bndp_exe, "demo", "--seed", "1"], capture_output=True, text=True,
                       env=env, cwd=work)
    assert r.returncode == 0 and "bounded Laplace" in r.stdout, r.stderr
    r = subprocess.run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests/test_samplers.py", "tests/test_calibrate_laplace.py",
                        "tests/test_docs.py"], cwd=work, capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert " passed" in r.stdout


@pytest.mark.slow
def test_sdist_carries_the_sources_the_build_needs(tmp_path):
    # The source distribution must build the extension from the Cython sources: every file
    # the modules cimport (their .pxd files) and the C headers, no stale generated .c file.
    if not os.path.isdir(os.path.join(ROOT, ".git")) or shutil.which("git") is None:
        pytest.skip("needs the git checkout")
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    tree = tmp_path / "tree"
    for f in files:
        dst = tree / f
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.join(ROOT, f), dst)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "setup.py", "-q", "sdist", "-d", str(tmp_path / "dist")],
                       cwd=tree, capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    import tarfile
    (sdist,) = list((tmp_path / "dist").glob("bndp-*.tar.gz"))
    names = {n.split("/", 1)[1] for n in tarfile.open(sdist).getnames() if "/" in n}
    core = os.path.join(ROOT, "src", "bndp", "_core")
    needed = {"setup.py", "pyproject.toml", "MANIFEST.in", "LICENSE"}
    src = ""
    for f in os.listdir(core):
        if f.endswith((".pyx", ".pxd")):
            needed.add("src/bndp/_core/" + f)
            src += open(os.path.join(core, f)).read()
    needed |= {"src/bndp/" + m for m in re.findall(r'^cdef extern from "([^"]+)"', src,
                                                   flags=re.M)}
    needed |= {"src/bndp/" + m for m in re.findall(r'^ *#include "([^"]+)"', src, flags=re.M)}
    assert "src/bndp/_simd.h" in needed and "src/bndp/_core/common.pxd" in needed
    assert needed <= names, needed - names
    assert not any(n.startswith("src/bndp/_core/") and n.endswith(".c") for n in names)


@pytest.mark.slow
def test_manylinux_wheel_from_auditwheel_installs_and_works(tmp_path):
    # tools/build_manylinux.sh: build, `auditwheel repair`, install the repaired wheel in a
    # fresh venv, smoke test and part of the tests there (about two minutes, so only in the
    # full run)
    if not FULL:
        pytest.skip("builds and repairs a wheel (about two minutes); set BNDP_FULL=1")
    if not sys.platform.startswith("linux"):
        pytest.skip("manylinux wheels are built on Linux")
    pytest.importorskip("auditwheel")
    pytest.importorskip("build")
    if shutil.which("patchelf") is None:
        pytest.skip("auditwheel repair needs patchelf")
    env = dict({k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
               PYTHON=sys.executable)
    r = subprocess.run(["bash", os.path.join(ROOT, "tools", "build_manylinux.sh"),
                        str(tmp_path / "out")], capture_output=True, text=True, env=env,
                       timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (whl,) = list((tmp_path / "out").glob("bndp-*.whl"))
    assert re.search(r"-manylinux_2_\d+_x86_64\.whl$|-manylinux_2_\d+_aarch64\.whl$", whl.name)
    assert "smoke test passed" in r.stdout and " passed" in r.stdout
