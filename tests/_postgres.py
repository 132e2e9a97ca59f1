"""A throw-away PostgreSQL cluster for the ledger tests: ``initdb`` and ``pg_ctl`` in a
temporary folder, listening only on a Unix socket in that folder (run as the ``postgres``
user when the tests run as root, as PostgreSQL refuses root)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile

ENV_URL = "BNDP_TEST_POSTGRES_URL"


def bindir() -> str | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or None."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return os.path.dirname(found)
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.exists(os.path.join(d, "initdb")) and os.path.exists(os.path.join(d, "pg_ctl")):
            return d
    return None


def _as_postgres(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    return ["runuser", "-u", "postgres", "--"] + cmd


class Cluster:
    def __init__(self, bin_dir: str) -> None:
        self.bin = bin_dir
        self.root = tempfile.mkdtemp(prefix="bndp-pg-")
        self.data = os.path.join(self.root, "data")
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        self.url = f"postgresql:///postgres?host={self.root}&user=postgres"

    def _run(self, *args: str) -> None:
        subprocess.run(_as_postgres(list(args)), check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=120)

    def start(self) -> "Cluster":
        self._run(os.path.join(self.bin, "initdb"), "-D", self.data, "-A", "trust",
                  "-U", "postgres", "--no-sync")
        self._run(os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-w", "-l",
                  os.path.join(self.root, "log"), "-o",
                  f"-k {self.root} -c listen_addresses='' -c max_connections=50", "start")
        return self

    def stop(self) -> None:
        try:
            self._run(os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", "immediate",
                      "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
