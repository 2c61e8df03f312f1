"""
Every ktdp kernel of the lit inputs is valid upstream MLIR in ktir's generic form, and ktir reads
back what upstream MLIR prints: printing that through ktir and upstream again is a fixed point.
"""

from __future__ import annotations

import re
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


def _unresolved_aliases(ktir_text: str, upstream_text: str) -> str:
    """
    ktir's alias definitions (`#set3 = affine_set<...>`, printed before its module) of the names
    upstream's text uses but does not define: a future's group set, which upstream without ktdp
    registered keeps as the type's opaque text (the maps and sets it reads, it aliases itself).
    """
    defined = {line.split(" = ")[0] for line in upstream_text.splitlines() if line.startswith("#")}
    used = set(re.findall(r"#(?:map|set)[0-9]*\b", upstream_text)) - defined
    lines = ktir_text.splitlines()
    return "".join(line + "\n" for line in lines if line.startswith("#") and line.split(" = ")[0] in used)


@pytest.mark.parametrize("kernel", KERNELS, ids=[k.stem for k in KERNELS])
def test_a_kernel_round_trips_through_upstream_mlir(kernel: Path) -> None:
    # Without ktdp registered, upstream keeps a future's type as opaque text: it reads a group
    # set's alias there but prints no definition for it, so that alias goes back in front.
    generic = _ktir_generic(kernel.read_text(encoding="utf-8"), kernel.name)
    once = _upstream(generic)
    again = _upstream(_ktir_generic(_unresolved_aliases(generic, once) + once, "<upstream>"))
    assert again == once


def test_a_group_set_with_inequalities_is_read_by_upstream_through_its_alias() -> None:
    kernel = KERNELS[0].parent / "groups.mlir"
    generic = _ktir_generic(kernel.read_text(encoding="utf-8"), kernel.name)
    assert "\n#set3 = affine_set<(d0) : (d0 >= 0, -d0 + 1 >= 0)>\n" in generic
    assert "groups = #set3>" in _upstream(generic)  # in place, the `>` of `>=` would end the type
