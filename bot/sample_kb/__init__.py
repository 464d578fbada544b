"""The bundled demo knowledge base, shipped inside the package as data.

`handbook/` holds a snapshot of the TTS Handbook (`pages/`) and `SOURCE.md`, which says
where it comes from and under which licence. Being package data, it is there in an
installed wheel as in a checkout, so `kb demo` works from any folder.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def handbook_root() -> Path:
    """The folder holding the bundled handbook's `SOURCE.md` and `pages/`."""
    root = resources.files(__name__).joinpath("handbook")
    if not isinstance(root, Path):
        # Only a zipped install gives anything else; pip always installs onto disk.
        raise RuntimeError(f"the bundled handbook is not on disk ({root}); reinstall with pip")
    return root
