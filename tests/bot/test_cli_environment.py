"""What the `kb` process sets in its environment before torch loads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROBE = "import os, sys, bot.cli; print(os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules)"


def probe(**env: str) -> str:
    base = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**base, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        check=True,
    )
    return result.stdout.strip()


def test_torch_openmp_threads_sleep_rather_than_spin_unless_the_operator_says_otherwise() -> None:
    # Read by torch's OpenMP runtime when torch loads, so it must be set before that.
    assert probe() == "PASSIVE False"
    assert probe(OMP_WAIT_POLICY="ACTIVE") == "ACTIVE False"
