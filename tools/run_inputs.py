"""
What `ktir-run` reads besides the IR, for both of its modes (`tools/ktir_run.py`, and
`tools/ktdp_run.py` for ktdp kernels): `.npz` archives of named arrays, and `RunError`, the
one-line failure of a file or an input.
"""

from __future__ import annotations

import numpy as np


class RunError(Exception):
    """A user-facing failure outside the IR (a file, the inputs); printed as one line."""


def read_arrays(path: str, what: str) -> dict[str, np.ndarray]:
    """The arrays of an .npz file, by name; a `RunError` naming the file if it cannot be read."""
    try:
        archive = np.load(path)
        if not isinstance(archive, np.lib.npyio.NpzFile):  # a plain .npy array
            raise RunError(f"{what} '{path}' is not an .npz archive of named arrays")
        with archive:
            return {name: archive[name] for name in archive.files}  # read now: errors surface here
    except (OSError, ValueError) as error:
        raise RunError(f"cannot read {what} '{path}': {error}") from error
