"""The benchmark guard (benchmarks/guard.py, benchmarks/BASELINE, benchmarks/bench_guard.py):
the baseline names a release commit, the guard's asv command compares only the core
benchmarks in interleaved rounds, and every core benchmark runs against this bndp."""

import importlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

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
    cmd = guard.asv_command("abc123", "HEAD", rounds=3, repeat=4)
    assert cmd[:2] == ["asv", "continuous"]
    assert cmd[-2:] == ["abc123", "HEAD"]
    assert "--interleave-rounds" in cmd and "--record-samples" in cmd
    # asv's own regression test (medians and its significance test) does not decide
    assert float(cmd[cmd.index("--factor") + 1]) >= 100
    assert cmd[cmd.index("--bench") + 1] == r"^bench_guard\."
    attrs = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-a"]
    assert attrs == ["rounds=3", "repeat=4"]
    assert re.match(guard.BENCH, "bench_guard.Kernels.time_truncated_normal")
    assert not re.match(guard.BENCH, "bench_budget.TimeLedger.time_charge")


# Samples as a loaded 2-core machine gives them, 4 rounds of 5 (CPU seconds): most
# processes run at the work's own cost, some rounds run inflated by 1.3-2x (another job on
# the sibling core), on either commit. BASE is 22 ms of work.
BASE = [0.0224, 0.0226, 0.0231, 0.0225, 0.0228,
        0.0291, 0.0301, 0.0297, 0.0288, 0.0310,
        0.0223, 0.0229, 0.0227, 0.0232, 0.0226,
        0.0452, 0.0440, 0.0461, 0.0447, 0.0455]
SAME = [0.0301, 0.0295, 0.0290, 0.0306, 0.0298,
        0.0227, 0.0224, 0.0230, 0.0226, 0.0229,
        0.0446, 0.0451, 0.0439, 0.0458, 0.0449,
        0.0225, 0.0231, 0.0228, 0.0224, 0.0227]
SLOWER = [x * 1.25 for x in (0.0296, 0.0304, 0.0299, 0.0293, 0.0301,
                             0.0224, 0.0228, 0.0226, 0.0231, 0.0225,
                             0.0224, 0.0229, 0.0227, 0.0225, 0.0232,
                             0.0290, 0.0301, 0.0297, 0.0288, 0.0294)]


def test_a_25_percent_slowdown_fails_the_guard_through_inflated_rounds(guard):
    # asv's test misses it (the medians differ by 1.25, but its Mann-Whitney test on samples
    # this spread is not significant at its p < 0.002); the fastest samples carry it whole
    row, = guard.judge({"k": BASE}, {"k": SLOWER}, factor=1.15, repeat=5)
    assert row["failed"] and row["ratio"] == pytest.approx(1.25 * 0.0224 / 0.0223)
    assert row["shift"] == pytest.approx(1.25)
    assert len(row["rounds"]) == 4
    assert max(row["rounds"]) > 1.6 and min(row["rounds"]) < 1.0   # per round: no verdict
    # the median of the per-round ratios would miss it: two of its four rounds pair an
    # inflated baseline process with a clean one
    assert statistics.median(row["rounds"]) < 1.15


def test_an_unchanged_commit_passes_the_guard_through_inflated_rounds(guard):
    row, = guard.judge({"k": BASE}, {"k": SAME}, factor=1.15, repeat=5)
    assert not row["failed"] and row["ratio"] == pytest.approx(0.0224 / 0.0223)
    assert max(row["rounds"]) > 1.3 and min(row["rounds"]) < 0.7


def _rounds(minima, repeat=5):
    # ``repeat`` samples a process, its fastest first
    return [m * (1 + 0.01 * j) for m in minima for j in range(repeat)]


# A one-value benchmark on the loaded CI VM (the dd8bdad run, a comment-only change, ms a
# sample): its processes run at about 1.4 or 2.5-2.9 ms; the baseline had one process in the
# fast state in 8, the commit under test none. The fastest samples read 1.66.
ONE_FAST_BASE = _rounds([1.40, 2.80, 2.77, 2.88, 2.50, 2.88, 1.88, 2.90])
NO_FAST_HEAD = _rounds([2.52, 2.68, 3.11, 2.51, 2.49, 2.33, 2.65, 2.41])


def test_one_fast_baseline_process_does_not_fail_the_guard(guard):
    row, = guard.judge({"k": ONE_FAST_BASE}, {"k": NO_FAST_HEAD}, factor=1.15, repeat=5)
    assert row["ratio"] == pytest.approx(2.33 / 1.40)
    assert row["shift"] < 1.0 and not row["failed"]


def test_a_slowdown_of_a_bimodal_benchmark_fails_the_guard(guard):
    # the same processes' states on the commit under test, its work 1.25x: both estimates
    # move, whichever processes ran fast
    head = _rounds([1.25 * m for m in (2.80, 1.42, 2.85, 2.51, 2.77, 1.39, 2.90, 2.50)])
    row, = guard.judge({"k": ONE_FAST_BASE}, {"k": head}, factor=1.15, repeat=5)
    assert row["ratio"] > 1.2 and row["shift"] > 1.2 and row["failed"]


def test_shift_is_the_median_over_pairs_of_processes(guard):
    assert guard.process_minima([3.0, 1.0, 2.0, 5.0, 4.0, 6.0], repeat=2) == [1.0, 2.0, 4.0]
    assert guard.process_minima([3.0, 2.0], repeat=5) == [2.0]
    # pairs (head / base): 2/1, 4/1, 2/4, 4/4: median of the logs 2 and 1 (ratios 2, 4, 0.5, 1)
    assert guard.shift([1.0, 4.0], [2.0, 4.0], repeat=1) == pytest.approx(2 ** 0.5)


def test_a_benchmark_that_did_not_run_fails_the_guard(guard):
    rows = guard.judge({"a": BASE, "b": BASE}, {"a": None, "b": SAME})
    assert [(r["name"], r["failed"]) for r in rows] == [("a", True), ("b", False)]
    assert rows[0]["ratio"] != rows[0]["ratio"]                  # NaN
    assert "FAILED to run" in guard.report(rows, 1.15)


def test_only_the_benchmarks_asked_for_are_judged(guard):
    # a results file keeps the benchmarks of earlier runs: those --bench left out are not
    # judged, whatever their stale samples say
    base = {"bench_guard.K.time_k": BASE, "bench_guard.P.time_p(laplace)": BASE}
    head = {"bench_guard.K.time_k": SAME, "bench_guard.P.time_p(laplace)": SLOWER}
    rows = guard.judge(base, head, bench=r"^bench_guard\.K\.")
    assert [r["name"] for r in rows] == ["bench_guard.K.time_k"]
    rows = guard.judge(base, head, bench=r"^(bench_guard\.P\.time_p)$")
    assert [(r["name"], r["failed"]) for r in rows] == [("bench_guard.P.time_p(laplace)", True)]


def _asv_results(path, samples, failed=True):
    # an asv 0.6 results file: one unparameterized benchmark, one with a parameter (which
    # failed for its second value when ``failed``)
    cols = ["result", "params", "version", "samples"]
    results = {
        "bench_guard.K.time_k": [[min(samples)], [], "v", [samples]],
        "bench_guard.P.time_p": [[0.001, None], [["'laplace'", "'gaussian'"]], "v",
                                 [[0.001, 0.0011], None if failed else [0.002]]],
    }
    path.write_text(json.dumps({"version": 2, "result_columns": cols, "results": results}))
    return str(path)


def test_read_samples_keys_parameters_and_marks_failures(guard, tmp_path):
    got = guard.read_samples(_asv_results(tmp_path / "r.json", BASE))
    assert got == {"bench_guard.K.time_k": BASE, "bench_guard.P.time_p(laplace)": [0.001, 0.0011],
                   "bench_guard.P.time_p(gaussian)": None}
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not an asv results file"):
        guard.read_samples(str(tmp_path / "bad.json"))


@pytest.mark.parametrize("head, asv_status, status", [(SAME, 0, 0), (SLOWER, 0, 1),
                                                      (SAME, 1, 1)])
def test_guard_judges_the_samples_asv_recorded(guard, monkeypatch, tmp_path, capsys, head,
                                               asv_status, status):
    base_hash, head_hash = "a" * 40, "b" * 40
    (tmp_path / "asv.conf.json").write_text(json.dumps({"results_dir": "res"}))
    (tmp_path / "res" / "vm").mkdir(parents=True)
    calls = []

    def fake_asv(cmd, cwd):
        calls.append(cmd)
        _asv_results(tmp_path / "res" / "vm" / f"{base_hash[:8]}-env.json", BASE, False)
        _asv_results(tmp_path / "res" / "vm" / f"{head_hash[:8]}-env.json", head, False)
        return asv_status

    def fake_git(cmd, **kw):
        name = cmd[-1].split("^")[0]
        return subprocess.CompletedProcess(cmd, 0, (head_hash if name == "HEAD" else base_hash)
                                           + "\n", "")

    monkeypatch.setattr(guard, "ROOT", str(tmp_path))
    monkeypatch.setattr(guard.shutil, "which", lambda name: "/usr/bin/asv")
    monkeypatch.setattr(guard.subprocess, "call", fake_asv)
    monkeypatch.setattr(guard.subprocess, "run", fake_git)
    assert guard.main(["HEAD"]) == status
    assert calls[0][-2:] == [base_hash, head_hash]
    out = capsys.readouterr().out
    _, version = guard.read_baseline()
    assert f"against {version}" in out
    assert ("FAILED (bench_guard.K.time_k)" in out) == (head is SLOWER)
    assert ("FAILED (asv exit status 1)" in out) == bool(asv_status)


def _fake_runs(guard, monkeypatch, tmp_path, heads):
    # asv continuous once per entry of ``heads``: the head's samples after that run (a run
    # with --append-samples adds to the samples of the one before); the baseline's are BASE
    base_hash, head_hash = "a" * 40, "b" * 40
    (tmp_path / "asv.conf.json").write_text(json.dumps({"results_dir": "res"}))
    (tmp_path / "res" / "vm").mkdir(parents=True)
    calls = []

    def fake_asv(cmd, cwd):
        head = heads[len(calls)]
        calls.append(cmd)
        base = BASE * len(calls)
        _asv_results(tmp_path / "res" / "vm" / f"{base_hash[:8]}-env.json", base, False)
        _asv_results(tmp_path / "res" / "vm" / f"{head_hash[:8]}-env.json", head, False)
        return 0

    monkeypatch.setattr(guard, "ROOT", str(tmp_path))
    monkeypatch.setattr(guard.shutil, "which", lambda name: "/usr/bin/asv")
    monkeypatch.setattr(guard.subprocess, "call", fake_asv)
    monkeypatch.setattr(guard.subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(
        cmd, 0, (head_hash if cmd[-1].startswith("HEAD") else base_hash) + "\n", ""))
    return calls


# every round of the commit under test inflated 1.7x by load: over the factor on its own
INFLATED = [x * 1.7 for x in SAME]


def test_a_benchmark_over_the_factor_is_run_again_and_judged_on_all_samples(
        guard, monkeypatch, tmp_path, capsys):
    calls = _fake_runs(guard, monkeypatch, tmp_path, [INFLATED, INFLATED + SAME])
    assert guard.main(["--confirm", "3"]) == 0
    assert len(calls) == 2
    again = calls[1]
    assert "--append-samples" in again and "--record-samples" not in again
    assert again[again.index("--bench") + 1] == guard.confirm_regex(["bench_guard.K.time_k"])
    assert [again[i + 1] for i, a in enumerate(again) if a == "-a"] == ["rounds=3", "repeat=5"]
    out = capsys.readouterr().out
    assert "1 over the factor, run again" in out and "passed" in out.splitlines()[-1]


def _asv_selects(regex, benchmarks):
    # asv's --bench rule (asv 0.6, benchmarks.Benchmarks): a parameterized benchmark is
    # matched as ``name(p1, p2)``, its parameters as the reprs asv discovered, never by its
    # bare name; any other by its name
    import itertools
    out = []
    for name, params in benchmarks.items():
        if params:
            out += [f"{name}({', '.join(c)})" for c in itertools.product(*params)
                    if re.search(regex, f"{name}({', '.join(c)})")]
        elif re.search(regex, name):
            out.append(name)
    return out


SUITE = {"bench_guard.OneValue.time_sample_relative": [["'laplace'", "'gaussian'"]],
         "bench_guard.OneValue.time_mechanism_relative": [["'laplace'", "'gaussian'"]],
         "bench_guard.Calibration.time_bounded_gaussian_sigma_1000": [],
         "bench_guard.Calibration.time_bounded_gaussian_sigma_1000_x": []}


def test_the_second_run_selects_parameterized_benchmarks(guard):
    # the first CI run of the guard's confirmation asked asv for a parameterized benchmark
    # by its bare name, which asv never matches: the benchmark was not run again
    regex = guard.confirm_regex(["bench_guard.Calibration.time_bounded_gaussian_sigma_1000",
                                 "bench_guard.OneValue.time_sample_relative"])
    assert _asv_selects(regex, SUITE) == [
        "bench_guard.OneValue.time_sample_relative('laplace')",
        "bench_guard.OneValue.time_sample_relative('gaussian')",
        "bench_guard.Calibration.time_bounded_gaussian_sigma_1000"]


def test_the_second_run_regex_agrees_with_asv_itself(guard):
    asv_benchmarks = pytest.importorskip("asv.benchmarks")

    class Conf:
        benchmark_dir = "benchmarks"

    found = [dict(name=n, params=p) for n, p in SUITE.items()]
    regex = guard.confirm_regex(["bench_guard.OneValue.time_sample_relative"])
    b = asv_benchmarks.Benchmarks(Conf(), found, regex=regex)
    assert sorted(b) == ["bench_guard.OneValue.time_sample_relative"]
    assert b.benchmark_selection["bench_guard.OneValue.time_sample_relative"] == [0, 1]


def test_a_slowdown_stays_over_the_factor_when_run_again(guard, monkeypatch, tmp_path):
    calls = _fake_runs(guard, monkeypatch, tmp_path, [SLOWER, SLOWER + SLOWER])
    assert guard.main([]) == 1
    assert len(calls) == 2


def test_confirm_0_judges_the_first_run_alone(guard, monkeypatch, tmp_path):
    calls = _fake_runs(guard, monkeypatch, tmp_path, [INFLATED])
    assert guard.main(["--confirm", "0"]) == 1
    assert len(calls) == 1


@pytest.mark.parametrize("args", [["--factor", "1.0"], ["--rounds", "0"], ["--repeat", "0"],
                                  ["--confirm", "-1"]])
def test_guard_refuses_settings_that_cannot_guard(guard, args, monkeypatch, capsys):
    monkeypatch.setattr(guard.shutil, "which", lambda name: "/usr/bin/asv")
    monkeypatch.setattr(guard.subprocess, "call", lambda *a, **k: pytest.fail("ran asv"))
    with pytest.raises(SystemExit) as e:
        guard.main(args)
    assert e.value.code == 2
    assert "--factor must be > 1" in capsys.readouterr().err


def test_guard_fails_when_asv_wrote_no_results(guard, monkeypatch, tmp_path, capsys):
    (tmp_path / "asv.conf.json").write_text(json.dumps({"results_dir": "res"}))
    monkeypatch.setattr(guard, "ROOT", str(tmp_path))
    monkeypatch.setattr(guard.shutil, "which", lambda name: "/usr/bin/asv")
    monkeypatch.setattr(guard.subprocess, "call", lambda cmd, cwd: 2)
    monkeypatch.setattr(guard.subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(
        cmd, 0, "c" * 40 + "\n", ""))
    assert guard.main([]) == 1
    assert "asv wrote no results" in capsys.readouterr().out


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(ROOT)
    return importlib.import_module("benchmarks.bench_guard")


class _Machine:
    """A clock whose every cost is multiplied by the machine's state (1: fast)."""

    def __init__(self):
        self.now, self.state = 0.0, 1.0

    def clock(self):
        return self.now

    def costing(self, units, then=None):
        def run():
            self.now += units * self.state
            if then:
                then()
        return run


def test_relative_time_cancels_a_state_that_slows_everything_alike(bench):
    m = _Machine()
    reference, work = m.costing(2.0), m.costing(3.0)
    start = bench.virtual_clock()
    fast = bench.relative(work, reference, m.clock)
    assert fast == pytest.approx(1.5 * bench.REFERENCE_SECONDS)
    m.state = 1.7                                   # the slow state: every cost 1.7x
    assert bench.relative(work, reference, m.clock) == pytest.approx(fast)
    # the work 1.25x slower moves it 1.25x, in either state
    assert bench.relative(m.costing(3.75), reference, m.clock) == pytest.approx(1.25 * fast)
    # the clock asv reads advanced by each
    assert bench.virtual_clock() - start == pytest.approx(3.25 * fast)


def test_relative_time_leaves_out_a_triple_a_change_of_state_cuts_through(bench):
    m = _Machine()
    calls = []

    def flip():                          # the state changes after the third work's run
        calls.append(1)
        if len(calls) == 3:
            m.state = 1.7

    step = bench.relative(m.costing(3.0, flip), m.costing(2.0), m.clock, triples=5)
    # that triple's ratio is 3 / ((2 + 3.4) / 2), the other four 1.5 (two fast, two slow)
    assert step == pytest.approx(1.5 * bench.REFERENCE_SECONDS)


def test_one_value_benchmarks_are_timed_by_the_relative_clock(bench):
    for cls in (bench.OneValue, bench.CalibrationCalls):
        assert cls.timer is bench.virtual_clock and cls.number == 1
    assert bench.Kernels.timer is time.process_time
    assert bench.Calibration.timer is time.process_time
    # the reference calls nothing of bndp: the same work on every commit
    names = bench.reference_loop.__code__.co_names + bench._reference_call.__code__.co_names
    assert "bndp" not in names


def test_every_core_benchmark_runs(monkeypatch):
    # one call of each benchmark of the guard's suite against this bndp (the suite also runs
    # against the baseline release: asv builds it in CI)
    pytest.importorskip("pandas")
    pytest.importorskip("narwhals")
    monkeypatch.syspath_prepend(ROOT)
    mod = importlib.import_module("benchmarks.bench_guard")
    mod.N = 2000                                 # the same code on fewer rows
    ran = []
    for cls in (mod.Kernels, mod.DefaultRelease, mod.OneValue, mod.CalibrationCalls,
                mod.Calibration, mod.Planning, mod.Privatize):
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
