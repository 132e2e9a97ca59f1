"""The quick subset of the tests (``pytest -m quick``, README's Set-up): the marker is
registered, it selects tests from every file of ``QUICK_FILES`` and from no other, and the
README gives its command."""

import os
import subprocess
import sys

from .conftest import QUICK_FILES, bndp_import_root

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_quick_files_exist():
    missing = [f for f in sorted(QUICK_FILES) if not os.path.exists(os.path.join(ROOT, "tests", f))]
    assert missing == []


def test_quick_marker_selects_the_quick_files_only():
    env = dict(os.environ)
    env["PYTHONPATH"] = bndp_import_root() + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "quick",
                        "-p", "no:cacheprovider", "--strict-markers"], capture_output=True,
                       text=True, cwd=ROOT, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    ids = [ln for ln in r.stdout.splitlines() if "::" in ln]
    files = {ln.split("::")[0].rsplit("/", 1)[-1] for ln in ids}
    assert len(ids) > 100
    assert files == set(QUICK_FILES)


def test_readme_and_pyproject_give_the_quick_subset():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        pyproject = f.read()
    assert "python -m pytest -m quick" in readme
    assert '"quick: ' in pyproject
