"""The examples in the public docstrings, the README and docs/*.md run; the docstring examples
print what they claim."""

import ast
import doctest
import importlib.util
import os
import re
import shutil
import sys
import warnings

import pytest

import bndp.calibrate.bounded
import bndp.calibrate.concentrated
import bndp.calibrate.gaussian
import bndp.mechanisms.gaussian
import bndp.mechanisms.laplace


@pytest.mark.parametrize("module", [bndp.calibrate.bounded, bndp.calibrate.gaussian,
                                    bndp.calibrate.concentrated, bndp.mechanisms.laplace,
                                    bndp.mechanisms.gaussian])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


def test_cli_demo_runs(capsys):
    from bndp.cli import main

    assert main(["demo", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "bounded Laplace" in out and "bounded Gaussian" in out
    assert "every released value lies in [0, 120]" in out


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
DOC_FILES = (["README.md"] if os.path.exists(os.path.join(ROOT, "README.md")) else []) + (
    sorted("docs/" + f for f in os.listdir(DOCS) if f.endswith(".md"))
    if os.path.isdir(DOCS) else [])

# the optional engines a block may import, and the module that must be installed for each
ENGINES = {"pandas": "pandas", "pyarrow": "pyarrow", "pyspark": "pyspark", "bndp.spark": "pyspark",
           "dask": "dask", "bndp.dask": "dask", "matplotlib": "matplotlib", "torch": "torch",
           "bndp.torch": "torch", "opacus": "opacus", "sklearn": "sklearn"}


def python_blocks(path):
    """The ```python blocks of a Markdown file, with the line each one starts on."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return [(text.count("\n", 0, m.start(1)), m.group(1))
            for m in re.finditer(r"^```python\n(.*?)^```", text, flags=re.S | re.M)]


def missing_engines(block):
    """Optional packages (or the Java runtime Spark needs) that a block imports and this
    environment lacks: such a block is skipped, every other one must run."""
    need = set()
    for node in ast.walk(ast.parse(block)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            for prefix, module in ENGINES.items():
                if name == prefix or name.startswith(prefix + "."):
                    need.add(module)
    missing = {m for m in need if importlib.util.find_spec(m) is None}
    if "pyspark" in need and shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        missing.add("java")  # as tests/test_spark.py decides
    return sorted(missing)


def test_doc_files_are_found():
    if not DOC_FILES:
        pytest.skip("needs the source tree")
    assert "README.md" in DOC_FILES and "docs/verification.md" in DOC_FILES
    assert all(python_blocks(os.path.join(ROOT, f)) for f in ("README.md", "docs/etl.md"))


# the README's blocks each run on their own (test_readme_blocks_run_each_on_its_own), which
# is stronger than running them in order
@pytest.mark.parametrize("doc", [d for d in DOC_FILES if d != "README.md"])
def test_python_blocks_run_as_written(doc, tmp_path, monkeypatch):
    """Every ```python block of the README and docs/*.md runs, each file's blocks in order in
    one namespace, as a reader pasting them top to bottom would run them (in an empty
    working directory, so files the examples write land there)."""
    blocks = python_blocks(os.path.join(ROOT, doc))
    if not blocks:
        pytest.skip(f"{doc} has no python block")
    from .conftest import worker_env

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    # Spark and Dask process workers must import the same bndp as this test
    worker_env(monkeypatch.setenv)
    namespace = {"__name__": "__doc_example__"}
    ran, skipped = 0, []
    try:
        for line, block in blocks:
            missing = missing_engines(block)
            if missing:
                skipped.append((line + 1, missing))
                continue
            code = compile("\n" * line + block, os.path.join(ROOT, doc), "exec")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # engines' own deprecation chatter
                exec(code, namespace)
            ran += 1
    finally:
        if "pyspark" in sys.modules:
            from pyspark.sql import SparkSession

            active = SparkSession.getActiveSession()
            if active is not None:
                active.stop()
    if not ran:
        pytest.skip(f"{doc}: every block needs something missing: {skipped}")


README_BLOCKS = (python_blocks(os.path.join(ROOT, "README.md"))
                 if "README.md" in DOC_FILES else [])


@pytest.mark.parametrize("line, block", README_BLOCKS,
                         ids=[f"line{line + 1}" for line, _ in README_BLOCKS])
def test_readme_blocks_run_each_on_its_own(line, block, tmp_path, monkeypatch):
    """Each ```python block of the README runs alone, in a fresh namespace, as a reader
    pasting only that block would run it: it defines (and imports) what it uses."""
    from .conftest import worker_env

    missing = missing_engines(block)
    if missing:
        pytest.skip(f"README.md line {line + 1} needs {missing}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    worker_env(monkeypatch.setenv)
    code = compile("\n" * line + block, os.path.join(ROOT, "README.md"), "exec")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(code, {"__name__": "__doc_example__"})
    finally:
        if "pyspark" in sys.modules:
            from pyspark.sql import SparkSession

            active = SparkSession.getActiveSession()
            if active is not None:
                active.stop()


def test_readme_gives_the_docs_build_and_the_extras():
    if "README.md" not in DOC_FILES:
        pytest.skip("needs the source tree")
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = " ".join(f.read().split())
    assert "python -m sphinx -W -b html docs docs/_build/html" in text
    for extra in ("bndp[arrow]", "bndp[plot]", "bndp[spark]", "bndp[dask]", "bndp[torch]",
                  ".[docs]", ".[bench]"):
        assert extra in text, extra


# -- the reference site renders its formulas offline (issue 23) -----------------------------
CDN = re.compile(r"(?i)(?:https?:)?//[^\s\"']*(?:cdn|jsdelivr|unpkg|cloudflare|googleapis|"
                 r"mathjax\.org|polyfill\.io)")


def _conf_assignments():
    """The top-level assignments of docs/conf.py, literal values only (read with ast: the
    file is not executed, it writes the reference pages)."""
    path = os.path.join(DOCS, "conf.py")
    if not os.path.exists(path):
        pytest.skip("needs the source tree")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    values = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name):
            try:
                values[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return text, values


def test_docs_config_loads_mathjax_from_the_site():
    """MathJax comes from the site's own _static (sphinx-mathjax-offline ships it), and no
    string of conf.py names a CDN."""
    text, conf = _conf_assignments()
    assert "sphinx.ext.mathjax" in conf["extensions"]
    assert "sphinx-mathjax-offline" in conf["extensions"]
    path = conf["mathjax_path"]
    assert not re.match(r"(?i)([a-z]+:)?//", path), path  # relative: inside _static
    assert path == "mathjax/tex-chtml.js"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            assert not CDN.search(node.value), node.value
    for key in ("mathjax3_config", "mathjax2_config", "katex_js_path", "katex_css_path"):
        assert not CDN.search(repr(conf.get(key, ""))), key


def test_docs_extra_installs_the_offline_mathjax():
    tomllib = pytest.importorskip("tomllib")
    path = os.path.join(ROOT, "pyproject.toml")
    if not os.path.exists(path):
        pytest.skip("needs the source tree")
    with open(path, "rb") as f:
        docs = tomllib.load(f)["project"]["optional-dependencies"]["docs"]
    assert any(re.match(r"sphinx-mathjax-offline\b", r) for r in docs), docs


def test_math_page_builds_without_a_cdn(tmp_path):
    """A one-formula site built with conf.py's math settings: the page loads MathJax from
    _static/mathjax (present after the build), and no script or stylesheet from elsewhere.
    Needs the docs extra (CI builds the full site after the tests, with -W)."""
    pytest.importorskip("sphinx")
    if importlib.util.find_spec("sphinx-mathjax-offline") is None:
        pytest.skip("needs sphinx-mathjax-offline (the docs extra)")
    from sphinx.application import Sphinx

    _, conf = _conf_assignments()
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        "extensions = ['sphinx.ext.mathjax', 'sphinx-mathjax-offline']\n"
        f"mathjax_path = {conf['mathjax_path']!r}\n", encoding="utf-8")
    (src / "index.rst").write_text("Math\n====\n\n.. math:: e^{i\\pi} + 1 = 0\n",
                                   encoding="utf-8")
    out = tmp_path / "html"
    app = Sphinx(str(src), str(src), str(out), str(tmp_path / "doctrees"), "html",
                 status=None, warning=None, freshenv=True, warningiserror=True)
    app.build()
    html = (out / "index.html").read_text(encoding="utf-8")
    assert '_static/mathjax/tex-chtml.js"' in html
    assert (out / "_static" / "mathjax" / "tex-chtml.js").is_file()
    for tag in re.findall(r"<(?:script|link)\b[^>]*>", html):
        assert not re.search(r"(?i)(?:src|href)=\"(?:[a-z]+:)?//", tag), tag


def test_gallery_plots_use_no_deprecated_call(tmp_path):
    """docs/gallery/plots.py (the reference site's figures) draws without a DeprecationWarning
    (it passed the mechanisms' bounds by position before)."""
    import subprocess
    pytest.importorskip("matplotlib")
    from .conftest import bndp_import_root
    script = os.path.join(DOCS, "gallery", "plots.py")
    env = {**os.environ, "PYTHONPATH": bndp_import_root(), "MPLBACKEND": "Agg"}
    r = subprocess.run([sys.executable, "-W", "error::DeprecationWarning:__main__", script,
                        str(tmp_path)], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert len(list(tmp_path.glob("*.png"))) >= 3
