"""One BLAS thread while the simulators compute values (`ktir.reference.blas`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from threadpoolctl import threadpool_info

from ktir.reference.blas import one_blas_thread

UNIT = Path(__file__).resolve().parents[1]

DIGEST = """
import hashlib, sys
import numpy as np
sys.path.insert(0, {unit!r})
from helpers import compiled, matmul
import ktir.sim
rng = np.random.default_rng(0)
x, w = (rng.standard_normal((1024, 1024)).astype(np.float16) for _ in range(2))
out = ktir.sim.simulate(compiled(matmul(1024, 1024, 1024), 32), [x, w]).outputs[0]
print(hashlib.sha256(out.tobytes()).hexdigest())
"""


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_the_limit_holds_inside_and_is_restored_after() -> None:
    before = _blas_threads()
    with one_blas_thread():
        assert _blas_threads() and set(_blas_threads()) == {1}
    assert _blas_threads() == before


@pytest.mark.slow
def test_a_simulated_matmul_has_the_same_bits_whatever_the_blas_threads() -> None:
    """
    OpenBLAS gives a 1024^3 product other bits with 2 threads than with 1 (its edge rows go
    through other kernels), so without the limit the simulator's outputs would depend on the
    machine's cores.
    """
    digests = set()
    for threads in ("1", "2"):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads}
        script = DIGEST.format(unit=str(UNIT))
        result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr[-2000:]
        digests.add(result.stdout.strip())
    assert len(digests) == 1
