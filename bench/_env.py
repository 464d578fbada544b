"""Imported first by every benchmark script, before numpy or torch load.

It sets thread counts and offline mode the way `kb` does (bot/cli.py): numpy's BLAS on
one thread so torch owns the two cores, and no model hub. It also puts the repository
root on sys.path, since `python bench/<script>.py` puts only bench/ there.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

for name, value in {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OMP_WAIT_POLICY": "PASSIVE",
    "TOKENIZERS_PARALLELISM": "false",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TRANSFORMERS_VERBOSITY": "error",
}.items():
    os.environ.setdefault(name, value)
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
