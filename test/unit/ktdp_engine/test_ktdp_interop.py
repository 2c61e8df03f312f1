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


def _aliases(text: str) -> str:
    """The `#set = ...` lines ktir prints before a module (`ktir.dialects.ktdp.aliases`)."""
    return "".join(line + "\n" for line in text.splitlines() if line.startswith("#"))


@pytest.mark.parametrize("kernel", KERNELS, ids=[k.stem for k in KERNELS])
def test_a_kernel_round_trips_through_upstream_mlir(kernel: Path) -> None:
    # Without ktdp registered, upstream keeps a future's type as opaque text: it reads a group
    # set's alias there but prints no definition for it, so the aliases go back in front.
    generic = _ktir_generic(kernel.read_text(encoding="utf-8"), kernel.name)
    once = _upstream(generic)
    again = _upstream(_ktir_generic(_aliases(generic) + once, "<upstream>"))
    assert again == once


def test_a_group_set_with_inequalities_is_read_by_upstream_through_its_alias() -> None:
    kernel = KERNELS[0].parent / "groups.mlir"
    generic = _ktir_generic(kernel.read_text(encoding="utf-8"), kernel.name)
    assert generic.startswith("#set = affine_set<(d0) : (d0 >= 0, -d0 + 1 >= 0)>\n")
    assert "groups = #set>" in _upstream(generic)  # in place, the `>` of `>=` would end the type
