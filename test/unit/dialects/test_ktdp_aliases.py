"""Affine maps and sets print as MLIR's `#map` / `#set` aliases, defined first (dialects/ktdp/aliases.py)."""

from __future__ import annotations

from xdsl.dialects.builtin import AffineMapAttr, AffineSetAttr
from xdsl.ir.affine import AffineConstraintExpr, AffineConstraintKind, AffineExpr, AffineMap, AffineSet

from ktir.dialects.ktdp.syntax import alias_of, aliases
from ktir.ir.context import make_context
from ktir.ir.diagnostics import module_text, parse_module

VIEW = "affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)>"
ROW = "affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>"
GLOBAL = "memory_space = #ktdp.memory_space<global>"
KERNEL = f"""
func.func @copy(%a: index, %b: index) attributes {{grid = [2]}} {{
  %id = ktdp.get_compute_tile_id : index
  %va = ktdp.construct_memory_view %a, sizes: [2, 64], strides: [64, 1] {{coordinate_set = {VIEW}, {GLOBAL}}}
      : memref<2x64xf16>
  %vb = ktdp.construct_memory_view %b, sizes: [2, 64], strides: [64, 1] {{coordinate_set = {VIEW}, {GLOBAL}}}
      : memref<2x64xf16>
  %ta = ktdp.construct_access_tile %va[%id, 0]
      {{access_tile_order = affine_map<(d0, d1) -> (d0, d1)>, access_tile_set = {ROW}}}
      : memref<2x64xf16> -> !ktdp.access_tile<1x64xindex>
  %tb = ktdp.construct_access_tile %vb[%id, 0]
      {{access_tile_order = affine_map<(d0, d1) -> (d1, d0)>, access_tile_set = {ROW}}}
      : memref<2x64xf16> -> !ktdp.access_tile<1x64xindex>
  %x = ktdp.load %ta : <1x64xindex> -> tensor<1x64xf16>
  ktdp.store %x, %tb : tensor<1x64xf16>, <1x64xindex>
  return
}}
"""

DEFINITIONS = [
    "#set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)>",
    "#map = affine_map<(d0, d1) -> (d0, d1)>",
    "#set1 = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>",
    "#map1 = affine_map<(d0, d1) -> (d1, d0)>",
]


def test_each_distinct_map_and_set_is_one_alias_numbered_per_kind_in_order_of_first_use() -> None:
    text = module_text(parse_module(make_context(), KERNEL, "copy.mlir"))
    assert text.splitlines()[:4] == DEFINITIONS
    assert text.count("coordinate_set = #set,") == 2  # both views share one set
    assert "{access_tile_order = #map1, access_tile_set = #set1}" in text
    assert "affine_set<" not in text.split("builtin.module")[1]  # nothing in place after them


def test_the_aliased_text_reads_back_to_the_same_module_in_both_forms() -> None:
    module = parse_module(make_context(), KERNEL, "copy.mlir")
    for generic in (False, True):
        text = module_text(module, generic=generic)
        again = parse_module(make_context(), text, "<printed>")
        assert module_text(again, generic=generic) == text
        assert again.is_structurally_equivalent(module)


def test_outside_a_printing_maps_print_in_place() -> None:
    identity = AffineMapAttr(AffineMap.identity(2))
    positive = AffineConstraintExpr(AffineConstraintKind.ge, AffineExpr.dimension(0), AffineExpr.constant(0))
    rows = AffineSetAttr(AffineSet(2, 0, (positive,)))
    assert alias_of(identity) is None
    with aliases() as table:
        assert alias_of(identity) == "#map"
        assert alias_of(AffineMapAttr(AffineMap.identity(2))) == "#map"  # by value
        assert alias_of(rows) == "#set"  # sets are numbered apart from maps
        assert alias_of(AffineMapAttr(AffineMap.constant_map(0))) == "#map1"
    assert list(table.values()) == ["#map", "#set", "#map1"]
    assert alias_of(identity) is None
