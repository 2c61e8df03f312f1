"""`ktir-run` on a ktdp kernel imports what running it needs, not the compiler or ktir's op classes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]

NOT_NEEDED = (
    "torch",
    "ktir.frontend",
    "ktir.passes",
    "ktir.sim.engine",
    "ktir.dialects.ktir.core",
    "ktir.dialects.ktir.elementwise",
    "ktir.dialects.ktir.structured",
    "ktir.reference.executor",
)
"""Modules a plain ktdp kernel (the RFC's add) runs without: the compiler, ktir's simulator, its
graph- and core-level op classes and the reference executor."""

PROBE = """
import sys
from ktir.tools.ktir_run import main
code = main(sys.argv[1:])
print(code, *sorted(name for name in sys.modules if name in {not_needed}))
"""


def test_a_ktdp_kernel_runs_without_the_compiler_or_ktir_op_classes(tmp_path: Path) -> None:
    values = np.arange(96 * 64, dtype=np.float16).reshape(96, 64) / 64
    np.savez(tmp_path / "in.npz", a=values, b=values, c=np.zeros_like(values))
    kernel = ROOT / "test" / "lit" / "Inputs" / "ktdp" / "add.mlir"
    arguments = [str(kernel), "--function", "add", "--inputs", str(tmp_path / "in.npz")]
    arguments += ["-o", str(tmp_path / "out.npz"), "-q"]
    probe = PROBE.format(not_needed=set(NOT_NEEDED))
    done = subprocess.run(
        [sys.executable, "-c", probe, *arguments], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert done.stdout.splitlines()[-1] == "0"  # exit code 0 and none of NOT_NEEDED imported
    with np.load(tmp_path / "out.npz") as outputs:
        assert outputs.files == ["c"]  # what the kernel stores to, not its inputs back
        np.testing.assert_array_equal(outputs["c"], values + values)
