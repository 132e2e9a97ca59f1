"""The benchmark guard (benchmarks/guard.py, benchmarks/BASELINE, benchmarks/bench_guard.py):
the baseline names a release commit, the guard's asv command compares only the core
benchmarks in interleaved rounds, and every core benchmark runs against this bndp."""

import importlib
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "benchmarks")

if not os.path.isfile(os.path.join(BENCH, "guard.py")):
    pytest.skip("needs the source tree", allow_module_level=True)


@pytest.fixture
def guard(monkeypatch):
    monkeypatch.syspath_prepend(ROOT)
    return importlib.import_module("benchmarks.guard")


def test_baseline_names_a_full_commit_and_a_version(guard):
    commit, version = guard.read_baseline()
    assert re.fullmatch(r"[0-9a-f]{40}", commit)
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    if shutil.which("git") and os.path.isdir(os.path.join(ROOT, ".git")):
        r = subprocess.run(["git", "cat-file", "-t", commit], cwd=ROOT, capture_output=True,
                           text=True)
        if r.returncode == 0:               # a shallow clone may lack the release's commit
            assert r.stdout.strip() == "commit"


def test_baseline_file_without_a_field_is_refused(guard, tmp_path):
    p = tmp_path / "BASELINE"
    p.write_text("# only a comment\ncommit 0123456789abcdef0123456789abcdef01234567\n")
    with pytest.raises(ValueError, match="'version <version>' line"):
        guard.read_baseline(str(p))


def test_asv_command_compares_the_core_suite_in_interleaved_rounds(guard):
    cmd = guard.asv_command("abc123", "HEAD", factor=1.2, rounds=3, repeat=4)
    assert cmd[:2] == ["asv", "continuous"]
    assert cmd[-2:] == ["abc123", "HEAD"]
    assert "--interleave-rounds" in cmd
    assert cmd[cmd.index("--factor") + 1] == "1.2"
    assert cmd[cmd.index("--bench") + 1] == r"^bench_guard\."
    attrs = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-a"]
    assert attrs == ["rounds=3", "repeat=4"]
    assert re.match(guard.BENCH, "bench_guard.Kernels.time_truncated_normal")
    assert not re.match(guard.BENCH, "bench_budget.TimeLedger.time_charge")


@pytest.mark.parametrize("args", [["--factor", "1.0"], ["--rounds", "0"], ["--repeat", "0"]])
def test_guard_refuses_settings_that_cannot_guard(guard, args, monkeypatch, capsys):
    monkeypatch.setattr(guard.shutil, "which", lambda name: "/usr/bin/asv")
    monkeypatch.setattr(guard.subprocess, "call", lambda *a, **k: pytest.fail("ran asv"))
    with pytest.raises(SystemExit) as e:
        guard.main(args)
    assert e.value.code == 2
    assert "--factor must be > 1" in capsys.readouterr().err


def test_guard_returns_asvs_status(guard, monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(guard.shutil, "which", lambda name: "/usr/bin/asv")
    monkeypatch.setattr(guard.subprocess, "call", lambda cmd, cwd: calls.append(cmd) or 1)
    assert guard.main(["HEAD"]) == 1
    commit, version = guard.read_baseline()
    assert calls[0][-2:] == [commit, "HEAD"]
    out = capsys.readouterr().out
    assert f"against {version}" in out and "FAILED (asv exit status 1)" in out


def test_every_core_benchmark_runs(monkeypatch):
    # one call of each benchmark of the guard's suite against this bndp (the suite also runs
    # against the baseline release: asv builds it in CI)
    pytest.importorskip("pandas")
    pytest.importorskip("narwhals")
    monkeypatch.syspath_prepend(ROOT)
    mod = importlib.import_module("benchmarks.bench_guard")
    mod.N = 2000                                 # the same code on fewer rows
    ran = []
    for cls in (mod.Kernels, mod.DefaultRelease, mod.OneValue, mod.Calibration, mod.Planning,
                mod.Privatize):
        for param in getattr(cls, "params", [None]):
            args = () if param is None else (param,)
            obj = cls()
            getattr(obj, "setup", lambda *a: None)(*args)
            for name in sorted(vars(cls)):
                if name.startswith("time_"):
                    getattr(obj, name)(*args)
                    ran.append(f"{cls.__name__}.{name}({param})")
    assert len(ran) == 17, ran
    assert sys.modules["benchmarks.bench_guard"] is mod
