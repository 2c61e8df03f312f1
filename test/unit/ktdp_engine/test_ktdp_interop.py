"""
Every ktdp kernel of the lit inputs is valid upstream MLIR in ktir's generic form, and ktir reads
back what upstream MLIR prints: printing that through ktir and upstream again is a fixed point.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ktir.ir.context import make_context
from ktir.ir.diagnostics import module_text, parse_module, verify_module

ir = pytest.importorskip("mlir.ir", reason="needs the upstream MLIR Python bindings (the 'mlir' extra)")

KERNELS = sorted((Path(__file__).resolve().parents[2] / "lit" / "Inputs" / "ktdp").glob("*.mlir"))


def _upstream(text: str) -> str:
    """Parse and verify with upstream MLIR (unregistered dialects allowed); its generic form."""
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(text)
        assert module.operation.verify()
        return str(module.operation.get_asm(print_generic_op_form=True))


def _ktir_generic(text: str, name: str) -> str:
    module = parse_module(make_context(), text, name)
    assert not verify_module(module)
    return module_text(module, generic=True)


@pytest.mark.parametrize("kernel", KERNELS, ids=[k.stem for k in KERNELS])
def test_a_kernel_round_trips_through_upstream_mlir(kernel: Path) -> None:
    once = _upstream(_ktir_generic(kernel.read_text(encoding="utf-8"), kernel.name))
    again = _upstream(_ktir_generic(once, "<upstream>"))
    assert again == once
