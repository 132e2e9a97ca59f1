"""The benchmark guard: this commit's core benchmarks against the last release's.

Runs ``asv continuous`` on the commit named in ``benchmarks/BASELINE`` (the last release) and
on this commit (``HEAD`` unless given), both built by asv from ``asv.conf.json``, over the
benchmarks of ``benchmarks/bench_guard.py`` only, in interleaved rounds, and exits with
asv's status: 1 when a benchmark got slower than ``--factor`` times the baseline (and the
difference is significant in asv's statistics), or failed. CI (``.ci/run``) calls it after
the tests; README, "Benchmarks", says how to read it and how to move the baseline.

    python benchmarks/guard.py                 # HEAD against the baseline release
    python benchmarks/guard.py --factor 1.15 my-branch

asv imports every module of ``benchmarks/``: this one defines no benchmark and runs nothing
on import.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

#: A benchmark fails the guard when its median got slower than FACTOR times the baseline's
#: and asv's statistics call the difference significant. A kernel made to do 1.25x its work
#: read 1.19 on a heavily loaded 2-core VM (README, "Benchmarks", gives the measurements):
#: the factor sits below that, and asv's significance test keeps the noise of an unchanged
#: commit from failing the guard.
FACTOR = 1.15
#: Interleaved rounds (each a fresh process per commit and benchmark) and samples a round.
ROUNDS = 4
REPEAT = 5
BENCH = r"^bench_guard\."


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


def asv_command(baseline: str, head: str, *, factor: float = FACTOR, rounds: int = ROUNDS,
                repeat: int = REPEAT, bench: str = BENCH) -> list[str]:
    """The ``asv continuous`` command line of the guard."""
    return [
        "asv", "continuous", "--interleave-rounds",
        "-a", f"rounds={rounds}", "-a", f"repeat={repeat}",
        "--factor", repr(factor), "--split", "--no-only-changed", "--show-stderr",
        "--bench", bench, baseline, head,
    ]


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
    p.add_argument("--bench", default=BENCH, help="benchmarks to compare (a regex)")
    a = p.parse_args(argv)
    if shutil.which("asv") is None:
        p.error("asv is not installed (python -m pip install asv virtualenv)")
    if not a.factor > 1.0 or a.rounds < 1 or a.repeat < 1:
        p.error("--factor must be > 1, --rounds and --repeat at least 1")
    cmd = asv_command(a.baseline, a.head, factor=a.factor, rounds=a.rounds, repeat=a.repeat,
                      bench=a.bench)
    print("benchmark guard:", " ".join(cmd), flush=True)
    start = time.monotonic()
    rc = subprocess.call(cmd, cwd=os.path.dirname(HERE))
    verdict = "passed" if rc == 0 else f"FAILED (asv exit status {rc})"
    print(f"benchmark guard against {version} ({a.baseline[:10]}): {verdict} "
          f"in {time.monotonic() - start:.0f} s", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
