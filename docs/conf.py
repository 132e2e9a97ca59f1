"""Sphinx configuration of bndp's reference site.

Build (from the repository root, with ``pip install ".[docs]"``)::

    python -m sphinx -W -b html docs docs/_build/html

The API reference is written at build time from the package itself: every public module
(``bndp`` and each submodule without a leading underscore that declares ``__all__``) gets a
page listing the objects of its ``__all__``, and autosummary generates one page per object
from its numpydoc docstring. Objects added to an ``__all__`` appear without editing the docs.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
import sys
import warnings

import bndp

HERE = os.path.dirname(os.path.abspath(__file__))

project = "bndp"
author = "the bndp developers"
copyright = "the bndp developers"
release = bndp.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax itself, shipped in the wheel (docs extra) and copied to _static/mathjax: the
    # formulas render offline, with no script from a CDN (see the HTML section below)
    "sphinx-mathjax-offline",
    "numpydoc",
    "myst_parser",
    "matplotlib.sphinxext.plot_directive",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "reference/generated/*.md",
                    "reproductions_build.py"]

# -- API reference -------------------------------------------------------------------------
autosummary_generate = True
autosummary_ignore_module_all = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"          # the numpydoc Parameters sections carry the types
numpydoc_show_class_members = False  # the class template documents the members inline
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# Citation labels such as [HABM20]_ are defined in several docstrings. The site keeps one
# bibliography (reference/citations, written below from the definitions in the package):
# the definitions are taken out of the docstrings before numpydoc reads them, so that every
# [LABEL]_ resolves to that page.

# numpydoc drops the text of a section it does not know: make that an error.
warnings.filterwarnings("error", message="Unknown section", category=UserWarning)

# -- Markdown guides -----------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

# -- Gallery (plots drawn at build time) ---------------------------------------------------
plot_include_source = False
plot_html_show_source_link = True
plot_html_show_formats = False
plot_formats = [("png", 110)]
plot_rcparams = {"figure.figsize": (7.0, 4.2), "font.size": 10}
plot_basedir = HERE

# -- HTML ----------------------------------------------------------------------------------
# MathJax from the site itself, never from a CDN: sphinx-mathjax-offline copies its MathJax
# 3 build to _static/mathjax after a successful build; the path is set here as well so that
# the pages point there even if that package's own default changes (tests/test_docs.py).
mathjax_path = "mathjax/tex-chtml.js"
html_theme = "pydata_sphinx_theme"
html_title = f"bndp {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"gallery": [], "reference/citations": []}


# -- generate the API pages from __all__ ---------------------------------------------------
NOT_API = {"bndp.cli", "bndp.__main__"}  # the CLI is documented by `bndp --help`


def public_modules() -> list:
    names = ["bndp"]
    for info in pkgutil.iter_modules(bndp.__path__, "bndp."):
        if info.name.rsplit(".", 1)[1].startswith("_") or info.name in NOT_API:
            continue
        names.append(info.name)
    mods = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:  # an optional engine that is not installed
            continue
        mod = sys.modules[name]  # bndp.verify (the function) shadows the module
        if hasattr(mod, "__all__"):
            mods.append(mod)
    return mods


def _home(mods: list) -> dict:
    """Where each public object is documented: the first public module (``bndp`` first)
    that exports it, under a name that is not also a module's name (``bndp.verify`` the
    function is documented as ``bndp.verify.verify``)."""
    home: dict = {}
    for mod in mods:
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or id(obj) in home:
                continue
            full = f"{mod.__name__}.{name}"
            if full in sys.modules and sys.modules[full] is not obj:
                continue  # shadows a module: documented in that module instead
            home[id(obj)] = mod.__name__
    return home


def _title(text: str, ch: str = "=") -> str:
    return f"{text}\n{ch * len(text)}\n"


def write_reference() -> None:
    out = os.path.join(HERE, "reference")
    os.makedirs(out, exist_ok=True)
    mods = public_modules()
    home = _home(mods)
    pages = []
    for mod in mods:
        own = [n for n in mod.__all__
               if not inspect.ismodule(getattr(mod, n)) and home.get(id(getattr(mod, n))) == mod.__name__]
        data = [n for n in mod.__all__ if not callable(getattr(mod, n))
                and not inspect.ismodule(getattr(mod, n)) and not n.startswith("__")]
        funcs = [n for n in own if n not in data and not n.startswith("__")]
        if not funcs and not data and mod.__name__ != "bndp":
            continue  # only re-exports (e.g. bndp.mechanisms): documented where they live
        pages.append(mod.__name__)
        lines = [_title(f"``{mod.__name__}``"),
                 f".. automodule:: {mod.__name__}\n   :no-members:\n   :no-index:\n",
                 f".. currentmodule:: {mod.__name__}\n"]
        classes = [n for n in funcs if inspect.isclass(getattr(mod, n))]
        functions = [n for n in funcs if n not in classes]
        for heading, names in (("Classes", classes), ("Functions", functions)):
            if names:
                lines.append(_title(heading, "-"))
                lines.append(".. autosummary::\n   :toctree: generated\n   :nosignatures:\n")
                lines.extend(f"   {n}" for n in names)
                lines.append("")
        if data:
            lines.append(_title("Constants", "-"))
            for n in data:
                lines.append(f".. autodata:: {n}\n")
        with open(os.path.join(out, f"{mod.__name__}.rst"), "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
    index = [_title("API reference"),
             "Every object listed in the ``__all__`` of ``bndp`` and of its public modules, "
             "documented from its docstring. Mechanisms and the one-call ``bndp.sample`` are "
             "in the top-level namespace; calibration, accounting and verification have their "
             "own modules; ``bndp.spark``, ``bndp.dask`` and ``bndp.torch`` need the ``spark``, "
             "``dask`` and ``torch`` extras.\n",
             ".. toctree::\n   :maxdepth: 1\n"]
    index.extend(f"   {p}" for p in pages)
    with open(os.path.join(out, "index.rst"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(index) + "\n")


_CITATION = re.compile(r"^(\s*)\.\. \[[A-Za-z][\w-]*\] ")


def strip_citations(app, what, name, obj, options, lines) -> None:
    """Remove citation definitions (and a References section left empty) from a docstring;
    the citations page holds them."""
    out: list = []
    indent = None
    for line in lines:
        m = _CITATION.match(line)
        if m:
            indent = len(m.group(1))
            continue
        if indent is not None and line.strip() and len(line) - len(line.lstrip()) > indent:
            continue  # continuation of a definition
        indent = None
        out.append(line)
    text = "\n".join(out)
    text = re.sub(r"(?m)^\s*References\n\s*-{10}\s*\n(?=\s*(\n|$|[A-Z][a-z ]+\n\s*---))", "",
                  text)
    lines[:] = text.rstrip("\n").split("\n") + [""]


def rendered_docstrings() -> list:
    """The docstrings the reference shows: public modules, public objects and their public
    members."""
    docs = []
    mods = public_modules()
    for mod in mods:
        docs.append(mod.__doc__ or "")
        for n in mod.__all__:
            obj = getattr(mod, n)
            if inspect.ismodule(obj):
                continue
            docs.append(getattr(obj, "__doc__", "") or "")
            if inspect.isclass(obj):
                for k, v in vars(obj).items():
                    if not k.startswith("_"):
                        fn = v.fget if isinstance(v, property) else getattr(v, "__func__", v)
                        docs.append(getattr(fn, "__doc__", "") or "")
    for f in os.listdir(HERE):
        if f.endswith(".md"):
            with open(os.path.join(HERE, f), encoding="utf-8") as fh:
                docs.append(fh.read())
    return docs


def write_citations() -> None:
    """The references page: every citation defined in a docstring of the package (the first
    definition of each label), so that ``[LABEL]_`` resolves from any docstring."""
    import re

    root = os.path.dirname(os.path.abspath(bndp.__file__))
    found: dict = {}
    pattern = re.compile(r"^( *)\.\. \[([A-Za-z][\w-]*)\] (.*(?:\n\1   \S.*)*)", re.M)
    for dirpath, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                text = fh.read()
            for m in pattern.finditer(text):
                body = " ".join(line.strip() for line in m.group(3).splitlines())
                found.setdefault(m.group(2), body)
    cited = set()
    for doc in rendered_docstrings():
        cited.update(re.findall(r"\[([A-Za-z][\w-]*)\]_", doc))
    missing = sorted(cited - set(found))
    if missing:
        raise RuntimeError(f"cited but defined nowhere in the package: {missing}")
    lines = [_title("References"), "Papers cited in the reference.\n"]
    lines.extend(f".. [{label}] {found[label]}\n" for label in sorted(cited, key=str.lower))
    with open(os.path.join(HERE, "reference", "citations.rst"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))


def setup(app):
    app.connect("autodoc-process-docstring", strip_citations, priority=100)


write_reference()
write_citations()

# -- Reproductions: the papers' tables and figures, from bndp.reproduce ----------------------
sys.path.insert(0, HERE)
import reproductions_build  # noqa: E402

reproductions_build.write(HERE)
