"""SuperDSC export: `ktir.export.superdsc.kernel_spec` and the `ktir-emit-superdsc` pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

import ktir
from ktir.dialects.ktir.core import WORK_DIVISION_ATTR
from ktir.export.superdsc import kernel_spec
from ktir.hardware.target import SPYRE
from ktir.ir.context import make_context
from ktir.ir.diagnostics import DiagnosticError, parse_module
from ktir.ir.state import set_core_order
from ktir.ir.values import functions_of

LAYOUTS = "ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul"


def compiled(body: str, args: str, result: str, cores: int) -> ModuleOp:
    """A one-function module with layouts and a work division on `cores` cores."""
    text = f"func.func @f({args}) -> {result} {{\n{body}\n}}\n"
    module = parse_module(make_context(), text, "m.mlir")
    return ktir.run_pipeline(module, f"{LAYOUTS},ktir-divide-work{{cores={cores}}}")


def kernels(module: ModuleOp) -> list[Operation]:
    """The ops that carry a work division, in program order."""
    return [op for op in functions_of(module)[0].body.block.ops if WORK_DIVISION_ATTR in op.attributes]


def spec_of(module: ModuleOp, index: int = 0) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(key, top level, the one dscs_ entry) of kernel `index`."""
    ((key, top),) = kernel_spec(kernels(module)[index], index, SPYRE.cores).items()
    ((_, dsc),) = top["dscs_"][0].items()
    return key, top, dsc


def addresses(dsc: dict[str, Any]) -> list[list[int]]:
    """Per tensor, each core's start address."""
    return [
        [int(a) for a in node["startAddressCoreCorelet_"]["data_"].values()] for node in dsc["scheduleTree_"]
    ]


def alphas_and_factors(coord: dict[str, Any]) -> tuple[list[int], list[int]]:
    """The affine alphas and fold factors of one `coordInfo` entry."""
    folds = coord["folds"]
    return [f["Affine"]["alpha_"] for f in folds["dim_prop_func"]], [
        a["factor_"] for a in folds["dim_prop_attr"]
    ]


ABS = """
  %y = ktir.abs %x : tensor<4x64xf16> -> tensor<4x64xf16>
  return %y : tensor<4x64xf16>"""


def seed_abs() -> ModuleOp:
    """The reference's worked example: (4, 64) fp16 abs on 2 cores."""
    return compiled(ABS, "%x: tensor<4x64xf16>", "tensor<4x64xf16>", cores=2)


# --- the seed example: (4, 64) fp16 abs on 2 cores ----------------------------------------------


def test_seed_abs_splits_rows_over_two_cores() -> None:
    key, top, dsc = spec_of(seed_abs())
    assert key == "0_abs"  # the code's key, not the doc's "abs"
    assert top["numWkSlicesPerDim_"] == {"mb": 2, "out": 1}  # the doc's {c0: 2, c1: 1}
    assert top["numCoresUsed_"] == 2 and top["coreFoldProp_"] == {"factor_": 2, "label_": "core"}
    assert top["coreIdToWkSlice_"] == {"0": {"mb": 0, "out": 0}, "1": {"mb": 1, "out": 0}}
    assert dsc["N_"] == {"name_": "n", "mb_": 4, "out_": 64}
    stage = dsc["dataStageParam_"]["0"]
    assert stage["ss_"] == stage["el_"] == {"name_": "core", "mb_": 2, "out_": 64}
    assert dsc["coreIdsUsed_"] == [0, 1]


def test_seed_abs_start_addresses_and_tensors() -> None:
    _, _, dsc = spec_of(seed_abs())
    assert addresses(dsc) == [[0, 256], [512, 768]]
    assert [lds["dsType_"] for lds in dsc["labeledDs_"]] == ["OUTPUT", "OUTPUT"]  # the doc says INPUT
    assert [lds["scale_"] for lds in dsc["labeledDs_"]] == [[1, 1], [1, 1]]
    assert {lds["wordLength"] for lds in dsc["labeledDs_"]} == {2}
    assert {lds["dataFormat_"] for lds in dsc["labeledDs_"]} == {"SEN169_FP16"}
    assert dsc["primaryDsInfo_"] == {
        "OUTPUT": {"layoutDimOrder_": ["mb", "out"], "stickDimOrder_": ["out"], "stickSize_": [64]}
    }
    (compute,) = dsc["computeOp_"]
    assert compute["exUnit"] == "sfp"  # the doc says pt
    assert compute["opFuncName"] == "abs"
    assert (compute["inputLabeledDs"], compute["outputLabeledDs"]) == (["Tensor0-idx0"], ["Tensor1-idx1"])


def test_seed_abs_coordinate_folds_match_the_reference() -> None:
    _, _, dsc = spec_of(seed_abs())
    for node in dsc["scheduleTree_"]:
        coords = node["coordinates_"]["coordInfo"]
        assert node["component_"] == "hbm" and node["backGapCore_"] == {}
        assert alphas_and_factors(coords["mb"]) == ([2, 0, 0, 1], [2, 1, 1, 2])
        assert alphas_and_factors(coords["out"]) == ([64, 0, 0, 64, 1], [1, 1, 1, 1, 64])
        assert (coords["mb"]["elemArr"], coords["out"]["elemArr"]) == (1, 2)


# --- matmul ------------------------------------------------------------------------------------

MATMUL = """
  %z = ktir.matmul %x, %y {{ktir.work_division_hint = {hint}}}
      : tensor<128x256xf16>, tensor<256x192xf16> -> tensor<128x192xf16>
  return %z : tensor<128x192xf16>"""
MATMUL_ARGS = "%x: tensor<128x256xf16>, %y: tensor<256x192xf16>"


def test_matmul_runs_on_pt_with_matmul_labels() -> None:
    module = compiled(MATMUL.format(hint="{m = 2 : i64}"), MATMUL_ARGS, "tensor<128x192xf16>", cores=8)
    key, top, dsc = spec_of(module)
    assert key == "0_matmul" and dsc["computeOp_"][0]["exUnit"] == "pt"
    assert top["numWkSlicesPerDim_"] == {"mb": 2, "out": 1, "in": 1}  # (m, n, k)
    assert dsc["N_"] == {"name_": "n", "mb_": 128, "out_": 192, "in_": 256}
    assert [lds["dsType_"] for lds in dsc["labeledDs_"]] == ["INPUT", "KERNEL", "OUTPUT"]
    assert {label: info["layoutDimOrder_"] for label, info in dsc["primaryDsInfo_"].items()} == {
        "INPUT": ["mb", "in"],
        "KERNEL": ["in", "out"],
        "OUTPUT": ["mb", "out"],
    }
    assert [info["stickDimOrder_"] for info in dsc["primaryDsInfo_"].values()] == [["in"], ["out"], ["out"]]


def test_matmul_k_split_puts_k_partners_on_neighbouring_cores() -> None:
    hint = "{m = 2 : i64, k = 2 : i64}"
    module = compiled(MATMUL.format(hint=hint), MATMUL_ARGS, "tensor<128x192xf16>", cores=8)
    _, top, dsc = spec_of(module)
    assert top["numCoresUsed_"] == 4 and top["numWkSlicesPerDim_"] == {"mb": 2, "out": 1, "in": 2}
    assert top["coreIdToWkSlice_"] == {
        "0": {"mb": 0, "out": 0, "in": 0},
        "1": {"mb": 0, "out": 0, "in": 1},
        "2": {"mb": 1, "out": 0, "in": 0},
        "3": {"mb": 1, "out": 0, "in": 1},
    }
    assert dsc["dataStageParam_"]["0"]["ss_"] == {"name_": "core", "mb_": 64, "out_": 192, "in_": 128}
    # x [4 sticks, 128 rows, 64] and y [3, 256, 64] fp16 from 0; the output after them, at 163840.
    # K partners (cores 0/1, 2/3) read different K halves and write the same output rows.
    assert addresses(dsc) == [
        [0, 32768, 8192, 40960],
        [65536, 81920, 65536, 81920],
        [163840, 163840, 172032, 172032],
    ]


def test_a_recorded_core_order_sets_the_core_table() -> None:
    """A hand-off's producer takes N first (`ktir.core_order`, ktir.cores.handoff)."""
    hint = "{m = 2 : i64, n = 3 : i64}"
    module = compiled(MATMUL.format(hint=hint), MATMUL_ARGS, "tensor<128x192xf16>", cores=8)
    set_core_order(kernels(module)[0], ["n", "m", "k"])
    _, top, _ = spec_of(module)
    assert [top["coreIdToWkSlice_"][str(c)] for c in range(3)] == [
        {"mb": 0, "out": 0, "in": 0},
        {"mb": 0, "out": 1, "in": 0},  # by default core 1 would take the second M slice
        {"mb": 0, "out": 2, "in": 0},
    ]


def test_matmul_k_is_padded_to_whole_sticks() -> None:
    body = """
  %z = ktir.matmul %x, %y : tensor<8x67xf16>, tensor<67x128xf16> -> tensor<8x128xf16>
  return %z : tensor<8x128xf16>"""
    module = compiled(body, "%x: tensor<8x67xf16>, %y: tensor<67x128xf16>", "tensor<8x128xf16>", cores=4)
    _, _, dsc = spec_of(module, index=1)  # kernel 0 is ktir-pad-matmul's pad of y
    assert dsc["N_"] == {"name_": "n", "mb_": 8, "out_": 128, "in_": 128}


# --- fp32 abs over 32 cores ----------------------------------------------------------------------


def test_fp32_abs_over_32_cores() -> None:
    body = """
  %y = ktir.abs %x : tensor<256x128x512xf32> -> tensor<256x128x512xf32>
  return %y : tensor<256x128x512xf32>"""
    module = compiled(body, "%x: tensor<256x128x512xf32>", "tensor<256x128x512xf32>", cores=32)
    _, top, dsc = spec_of(module)
    assert top["numWkSlicesPerDim_"] == {"mb": 32, "x": 1, "out": 1}  # the reference's c0 split 32
    assert top["coreIdToWkSlice_"]["31"] == {"mb": 31, "x": 0, "out": 0}
    assert dsc["N_"] == {"name_": "n", "mb_": 256, "x_": 128, "out_": 512}
    assert dsc["dataStageParam_"]["0"]["ss_"] == {"name_": "core", "mb_": 8, "x_": 128, "out_": 512}
    # Device [128, 16, 256, 32]: dims inner to outer are rows (mb), sticks (out), then x.
    assert dsc["primaryDsInfo_"] == {
        "OUTPUT": {"layoutDimOrder_": ["mb", "out", "x"], "stickDimOrder_": ["out"], "stickSize_": [32]}
    }
    assert {(lds["wordLength"], lds["dataFormat_"]) for lds in dsc["labeledDs_"]} == {(4, "IEEE_FP32")}
    # 8 rows of one 128-byte stick per core along device dim 2; the output follows 64 MiB in.
    inputs, outputs = addresses(dsc)
    assert inputs == [1024 * c for c in range(32)]
    assert outputs == [64 * 1024**2 + 1024 * c for c in range(32)]


# --- reductions and broadcasts --------------------------------------------------------------------


def test_max_over_padded_lanes_masks_them() -> None:
    body = """
  %m = ktir.max %x dims [1] : tensor<4x100xf16> -> tensor<4xf16>
  return %m : tensor<4xf16>"""
    _, _, dsc = spec_of(compiled(body, "%x: tensor<4x100xf16>", "tensor<4xf16>", cores=4))
    assert dsc["N_"] == {"name_": "n", "mb_": 4, "out_": 128}  # 100 lanes padded to 2 sticks
    assert [lds["scale_"] for lds in dsc["labeledDs_"]] == [[1, 1], [1, -2]]
    assert dsc["coordinateMasking_"] == {"out": [[100, 28]]} and dsc["maskingConstId_"] == 0
    assert dsc["constantInfo_"]["0"]["data_"]["data_"] == {"[0, 0, 0]": [-65504.0]}
    (compute,) = dsc["computeOp_"]
    assert compute["opFuncName"] == "max"
    assert compute["inputLabeledDs"] == ["Tensor0-idx0", "Tensor1-idx1"]  # accumulates into its output


def test_sum_off_the_lanes_is_nonstick_and_in_host_order() -> None:
    body = """
  %s = ktir.sum %x dims [1] : tensor<8x32x64xf16> -> tensor<8x64xf16>
  return %s : tensor<8x64xf16>"""
    key, top, dsc = spec_of(compiled(body, "%x: tensor<8x32x64xf16>", "tensor<8x64xf16>", cores=4))
    assert key == "0_sum" and dsc["computeOp_"][0]["opFuncName"] == "sumnonstick"
    # The reference iterates the input's dims in order: 8 (mb), reduced 32 (x), 64 (out).
    assert dsc["N_"] == {"name_": "n", "mb_": 8, "x_": 32, "out_": 64}
    assert top["numWkSlicesPerDim_"] == {"mb": 4, "x": 1, "out": 1}
    assert [lds["scale_"] for lds in dsc["labeledDs_"]] == [[1, 1, 1], [1, 1, -1]]
    assert dsc["coordinateMasking_"] == {} and dsc["maskingConstId_"] == -1


def test_broadcast_operand_keeps_one_address() -> None:
    body = """
  %a = ktir.add %x, %b : tensor<8x64xf16>, tensor<64xf16> -> tensor<8x64xf16>
  return %a : tensor<8x64xf16>"""
    _, _, dsc = spec_of(
        compiled(body, "%x: tensor<8x64xf16>, %b: tensor<64xf16>", "tensor<8x64xf16>", cores=4)
    )
    assert [lds["scale_"] for lds in dsc["labeledDs_"]] == [[1, 1], [1, -1], [1, 1]]
    assert [node["layoutDimOrder_"] for node in dsc["scheduleTree_"]] == [
        ["mb", "out"],
        ["out", "mb"],
        ["mb", "out"],
    ]
    # x at 0 (1 KiB), b at 1024 (one stick), the output at 1152.
    assert addresses(dsc) == [[0, 256, 512, 768], [1024] * 4, [1152, 1408, 1664, 1920]]


def test_op_without_work_division_is_a_located_error() -> None:
    module = parse_module(
        make_context(), f"func.func @f(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {{{ABS}\n}}"
    )
    ktir.run_pipeline(module, "ktir-propagate-layouts")
    (op,) = [op for op in functions_of(module)[0].body.block.ops if op.name == "ktir.abs"]
    with pytest.raises(DiagnosticError) as caught:
        kernel_spec(op, 0, SPYRE.cores)
    (error,) = caught.value.diagnostics
    assert error.message == "'ktir.abs' op has no ktir.work_division; run ktir-divide-work first"
    assert error.location is not None and error.location.line == 2


# --- the pass ------------------------------------------------------------------------------------

TWO_KERNELS = """
  %y = ktir.abs %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %e = ktir.exp %y : tensor<4x64xf16> -> tensor<4x64xf16>
  return %e : tensor<4x64xf16>"""


def test_pass_writes_one_sorted_json_per_kernel(tmp_path: Path) -> None:
    module = compiled(TWO_KERNELS, "%x: tensor<4x64xf16>", "tensor<4x64xf16>", cores=2)
    before = str(module)
    out = tmp_path / "sdsc"
    ktir.run_pipeline(module, f'ktir-emit-superdsc{{dir="{out}"}}')
    assert str(module) == before  # the IR is unchanged
    assert sorted(p.name for p in out.iterdir()) == ["0_abs.json", "1_exp.json"]
    text = (out / "1_exp.json").read_text()
    spec = json.loads(text)
    assert (
        list(spec) == ["1_exp"] and spec["1_exp"]["dscs_"][0]["exp"]["computeOp_"][0]["opFuncName"] == "exp"
    )
    assert text == json.dumps(spec, indent=2, sort_keys=True) + "\n"
    ktir.run_pipeline(module, f'ktir-emit-superdsc{{dir="{out}"}}')
    assert (out / "1_exp.json").read_text() == text  # deterministic


def test_pass_without_work_division_errors_and_writes_nothing(tmp_path: Path) -> None:
    text = f"func.func @f(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {{{TWO_KERNELS}\n}}\n"
    module = parse_module(make_context(), text, "m.mlir")
    ktir.run_pipeline(module, "ktir-propagate-layouts,ktir-divide-work{cores=2}")
    del kernels(module)[1].attributes[WORK_DIVISION_ATTR]  # abs keeps its division, exp loses it
    out = tmp_path / "sdsc"
    with pytest.raises(DiagnosticError) as caught:
        ktir.run_pipeline(module, f'ktir-emit-superdsc{{dir="{out}"}}')
    (error,) = caught.value.diagnostics
    assert error.message == "'ktir.exp' op has no ktir.work_division; run ktir-divide-work first"
    assert error.location is not None and (error.location.line, error.location.column) == (3, 8)
    assert not out.exists()
