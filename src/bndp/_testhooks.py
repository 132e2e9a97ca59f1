"""A test-only hook: ``BNDP_TEST_CRASH_AT=STEP`` kills the process (SIGKILL, no cleanup) when a
release reaches ``STEP``: ``planned`` (spec planned, budget checked), ``drawn`` (every column
drawn, before the charge), ``charged`` (the charge committed, before the output is handed
back or put in place) or ``writing`` (the command line, after its first block is written).
The crash tests use it to show what a ledger holds after a crash at each step."""

from __future__ import annotations

import os
import signal

__all__ = ["crash_point", "STEPS"]

STEPS = ("planned", "drawn", "charged", "writing")


def crash_point(step: str) -> None:
    """Kill this process now if ``BNDP_TEST_CRASH_AT`` names ``step``."""
    if os.environ.get("BNDP_TEST_CRASH_AT") == step:
        os.kill(os.getpid(), signal.SIGKILL)
