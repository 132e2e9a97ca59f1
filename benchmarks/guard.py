"""The benchmark guard: this commit's core benchmarks against the last release's.

Runs ``asv continuous`` on the commit named in ``benchmarks/BASELINE`` (the last release) and
on this commit (``HEAD`` unless given), both built by asv from ``asv.conf.json``, over the
benchmarks of ``benchmarks/bench_guard.py`` only, in interleaved rounds, then judges the
samples asv recorded itself: a benchmark fails the guard when it failed to run on either
commit, or when both of two estimates of its slowdown exceed ``--factor``: the fastest
sample of the commit under test over the baseline's fastest, and the median, over every
pair of processes (one per commit), of the ratio of their fastest samples (the
Hodges-Lehmann estimate of the shift between the two commits' processes). A benchmark
that fails so is run again on both commits
(``--confirm`` more interleaved rounds, their samples added to the first ones) and judged on
all its samples. Exit status 1 when one fails, 0 otherwise. CI (``.ci/run``) calls
it after the tests; README, "Benchmarks", says how to read it and how to move the baseline.

    python benchmarks/guard.py                 # HEAD against the baseline release
    python benchmarks/guard.py --factor 1.15 my-branch

asv imports every module of ``benchmarks/``: this one defines no benchmark and runs nothing
on import.
"""

from __future__ import annotations

import argparse
import glob
import itertools
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

#: A benchmark fails the guard when its fastest sample over all rounds is slower than FACTOR
#: times the baseline's and the median ratio of its processes' fastest samples to the
#: baseline's is too. README, "Benchmarks", gives the measurements behind it.
FACTOR = 1.15
#: Interleaved rounds (each a fresh process per commit and benchmark) and samples a round.
ROUNDS = 4
REPEAT = 5
#: Interleaved rounds of the second run of a benchmark over the factor.
CONFIRM = 4
BENCH = r"^bench_guard\."
#: asv's own regression test is shown but does not decide: a factor no ratio of medians
#: can reach keeps its exit status to failures to run.
ASV_FACTOR = 1000.0


def read_baseline(path: str = os.path.join(HERE, "BASELINE")) -> tuple[str, str]:
    """The ``commit`` and ``version`` lines of ``benchmarks/BASELINE`` (``#`` starts a
    comment); ValueError naming the file when either is missing."""
    fields: dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                key, _, value = line.partition(" ")
                fields[key] = value.strip()
    if not fields.get("commit") or not fields.get("version"):
        raise ValueError(f"{path}: needs a 'commit <hash>' line and a 'version <version>' line")
    return fields["commit"], fields["version"]


def asv_command(baseline: str, head: str, *, rounds: int = ROUNDS, repeat: int = REPEAT,
                bench: str = BENCH, append: bool = False) -> list[str]:
    """The ``asv continuous`` command line of the guard: both commits, interleaved rounds,
    every sample recorded (``--record-samples``; ``append``: added to those of the last run,
    ``--append-samples``), asv's table of medians printed."""
    return [
        "asv", "continuous", "--interleave-rounds",
        "--append-samples" if append else "--record-samples",
        "-a", f"rounds={rounds}", "-a", f"repeat={repeat}",
        "--factor", repr(ASV_FACTOR), "--split", "--no-only-changed", "--show-stderr",
        "--bench", bench, baseline, head,
    ]


def read_samples(path: str) -> dict[str, list[float] | None]:
    """The samples of every benchmark in one asv results file, keyed by the benchmark's name
    and, for a parameterized one, its parameters (``Class.time_x(laplace)``); None for a
    benchmark that failed or has no samples. ValueError when the file is not asv's results
    format."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    try:
        columns = data["result_columns"]
        rows = data["results"]
    except (KeyError, TypeError):
        raise ValueError(f"{path}: not an asv results file") from None
    out: dict[str, list[float] | None] = {}
    for name, row in rows.items():
        r = dict(zip(columns, row))
        params = r.get("params") or []
        combos = list(itertools.product(*params)) if params else [()]
        samples = r.get("samples") or [None] * len(combos)
        for combo, s in zip(combos, samples):
            key = name + (f"({', '.join(str(p).strip(chr(39)) for p in combo)})" if combo
                          else "")
            good = [x for x in s or [] if x is not None and math.isfinite(x)]
            out[key] = good or None
    return out


def results_file(commit: str, since: float, root: str | None = None) -> str:
    """The asv results file of ``commit`` (a full hash) written at or after ``since`` (a
    ``time.time()``) under ``root`` (the checkout: its ``asv.conf.json`` names the results
    folder); ValueError when asv wrote none."""
    root = ROOT if root is None else root
    results_dir = ".asv/results"
    try:
        with open(os.path.join(root, "asv.conf.json"), encoding="utf-8") as f:
            results_dir = json.load(f).get("results_dir", results_dir)
    except (OSError, ValueError):
        pass
    found = [p for p in glob.glob(os.path.join(root, results_dir, "*", f"{commit[:8]}-*.json"))
             if os.path.getmtime(p) >= since - 1.0]
    if not found:
        raise ValueError(f"asv wrote no results for {commit[:10]} in {results_dir}")
    return max(found, key=os.path.getmtime)


def process_minima(samples: list[float], repeat: int = REPEAT) -> list[float]:
    """The fastest sample of each process (each round of ``repeat`` samples, the order asv
    records them in); one for fewer than ``repeat`` samples."""
    n = max(1, len(samples) // repeat)
    return [min(samples[i * repeat:(i + 1) * repeat] if i < n - 1 else samples[i * repeat:])
            for i in range(n)]


def shift(base: list[float], head: list[float], repeat: int = REPEAT) -> float:
    """The median, over every pair of a baseline process and a process of the commit under
    test, of the ratio of their fastest samples: the slowdown that most processes show
    (Hodges-Lehmann). One process that ran unusually fast (or slow) on one side is in one
    pair of every ``k`` (``k`` its side's processes), which moves the median by at most that
    share of the pairs; a slowdown of the code moves every pair."""
    logs = sorted(math.log(h / b) for b in process_minima(base, repeat)
                  for h in process_minima(head, repeat))
    return math.exp(statistics.median(logs))


def judge(base: dict[str, list[float] | None], head: dict[str, list[float] | None], *,
          factor: float = FACTOR, repeat: int = REPEAT, bench: str = "") -> list[dict]:
    """One row per benchmark of ``base`` or ``head`` whose name (without its parameters)
    matches the regex ``bench`` as asv matches ``--bench`` (a results file keeps the
    benchmarks of earlier runs): ``ratio`` (the fastest sample of ``head`` over the fastest
    of ``base``, NaN when either has no sample), ``shift`` (:func:`shift`), the per-round
    ratios of the fastest samples (``repeat`` samples a round; their spread, shown, not
    judged) and ``failed`` (both ``ratio`` and ``shift`` are above ``factor``, or a side has
    no sample).

    Either estimate alone fails unchanged code on a loaded machine: the fastest samples
    when only the baseline had a process that ran in a machine's fast state (a one-value
    benchmark's processes run at either about 1.4 or 2.5-2.9 ms a sample), the median
    when most processes of the commit under test ran inflated by load. A slowdown of the
    code is in every sample and moves both."""
    rows = []
    names = [n for n in set(base) | set(head) if re.search(bench, n.split("(", 1)[0])]
    for name in sorted(names):
        a, b = base.get(name), head.get(name)
        if not a or not b:
            rows.append(dict(name=name, ratio=math.nan, shift=math.nan, rounds=[],
                             failed=True))
            continue
        ratio = min(b) / min(a)
        moved = shift(a, b, repeat)
        n = min(len(a), len(b)) // repeat
        per_round = [min(b[i * repeat:(i + 1) * repeat]) / min(a[i * repeat:(i + 1) * repeat])
                     for i in range(n)]
        rows.append(dict(name=name, ratio=ratio, shift=moved, rounds=per_round,
                         failed=ratio > factor and moved > factor))
    return rows


def confirm_regex(names: list[str]) -> str:
    """The ``--bench`` regex that selects exactly the benchmarks ``names`` (without their
    parameters), every parameter combination of a parameterized one: asv matches a
    parameterized benchmark's regex against ``name(param, ...)`` (the parameters as their
    reprs: ``Class.time_x('laplace')``), never against its bare name."""
    return "^(" + "|".join(re.escape(n) for n in names) + r")(\(.*\))?$"


def report(rows: list[dict], factor: float) -> str:
    """The guard's table: ratio, shift, per-round ratios, verdict per benchmark."""
    lines = [f"{'benchmark':<62} {'ratio':>6} {'shift':>6}  per round  "
             f"verdict (factor {factor})"]
    for r in rows:
        rounds = " ".join(f"{x:.2f}" for x in r["rounds"])
        verdict = ("FAILED to run" if math.isnan(r["ratio"]) else
                   "SLOWER" if r["failed"] else "ok")
        lines.append(f"{r['name']:<62} {r['ratio']:6.3f} {r['shift']:6.3f}  {rounds}  "
                     f"{verdict}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    commit, version = read_baseline()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("head", nargs="?", default="HEAD", help="the commit to check (HEAD)")
    p.add_argument("--baseline", default=commit,
                   help=f"the commit to compare against (benchmarks/BASELINE: {version})")
    p.add_argument("--factor", type=float, default=FACTOR,
                   help=f"slowdown that fails the guard (default {FACTOR})")
    p.add_argument("--rounds", type=int, default=ROUNDS)
    p.add_argument("--repeat", type=int, default=REPEAT)
    p.add_argument("--confirm", type=int, default=CONFIRM,
                   help=f"rounds of the second run of a slower benchmark ({CONFIRM}; 0: none)")
    p.add_argument("--bench", default=BENCH, help="benchmarks to compare (a regex)")
    a = p.parse_args(argv)
    if shutil.which("asv") is None:
        p.error("asv is not installed (python -m pip install asv virtualenv)")
    if not a.factor > 1.0 or a.rounds < 1 or a.repeat < 1 or a.confirm < 0:
        p.error("--factor must be > 1, --rounds and --repeat at least 1, --confirm at least 0")
    hashes = []
    for name in (a.baseline, a.head):
        r = subprocess.run(["git", "rev-parse", "--verify", f"{name}^{{commit}}"], cwd=ROOT,
                           capture_output=True, text=True)
        if r.returncode != 0:
            p.error(f"not a commit: {name}")
        hashes.append(r.stdout.strip())
    cmd = asv_command(hashes[0], hashes[1], rounds=a.rounds, repeat=a.repeat, bench=a.bench)
    print("benchmark guard:", " ".join(cmd), flush=True)
    start, wall = time.time(), time.monotonic()
    rc = subprocess.call(cmd, cwd=ROOT)
    try:
        base, head = (read_samples(results_file(h, start)) for h in hashes)
    except ValueError as e:
        print(f"benchmark guard: {e} (asv exit status {rc})", flush=True)
        return 1
    rows = judge(base, head, factor=a.factor, repeat=a.repeat, bench=a.bench)
    slower = [r["name"] for r in rows if r["failed"] and not math.isnan(r["ratio"])]
    if slower and a.confirm:
        print(report(rows, a.factor), flush=True)
        names = sorted({n.split("(", 1)[0] for n in slower})
        bench = confirm_regex(names)
        print(f"benchmark guard: {len(names)} over the factor, run again "
              f"({a.confirm} rounds)", flush=True)
        cmd = asv_command(hashes[0], hashes[1], rounds=a.confirm, repeat=a.repeat,
                          bench=bench, append=True)
        print("benchmark guard:", " ".join(cmd), flush=True)
        rc2 = subprocess.call(cmd, cwd=ROOT)
        try:
            base, head = (read_samples(results_file(h, start)) for h in hashes)
        except ValueError as e:
            print(f"benchmark guard: {e} (asv exit status {rc2})", flush=True)
            return 1
        rc = rc or rc2
        rows = judge(base, head, factor=a.factor, repeat=a.repeat, bench=a.bench)
    print(report(rows, a.factor), flush=True)
    bad = [r["name"] for r in rows if r["failed"]]
    verdict = "passed" if not bad and rc == 0 else (
        f"FAILED ({', '.join(bad) or 'asv exit status ' + str(rc)})")
    print(f"benchmark guard against {version} ({a.baseline[:10]}): {verdict} "
          f"in {time.monotonic() - wall:.0f} s", flush=True)
    return 1 if bad or rc else 0


if __name__ == "__main__":
    sys.exit(main())
