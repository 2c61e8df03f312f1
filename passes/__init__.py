"""
ktir passes, one file per pass, registered lazily (as `xdsl.transforms` does).

`get_all_passes()` maps each pass name to a function that imports and returns the pass
class, so that `ktir-opt --help` does not import every pass.
"""

from collections.abc import Callable

from xdsl.passes import ModulePass


def _propagate_layouts() -> type[ModulePass]:
    from ktir.passes.propagate_layouts import PropagateLayoutsPass

    return PropagateLayoutsPass


def _insert_restickify() -> type[ModulePass]:
    from ktir.passes.insert_restickify import InsertRestickifyPass

    return InsertRestickifyPass


def _pad_matmul() -> type[ModulePass]:
    from ktir.passes.pad_matmul import PadMatmulPass

    return PadMatmulPass


def _fuse() -> type[ModulePass]:
    from ktir.passes.fuse import FusePass

    return FusePass


def _verify_layouts() -> type[ModulePass]:
    from ktir.passes.verify_layouts import VerifyLayoutsPass

    return VerifyLayoutsPass


def _divide_work() -> type[ModulePass]:
    from ktir.passes.divide_work import DivideWorkPass

    return DivideWorkPass


def _plan_scratchpad() -> type[ModulePass]:
    from ktir.passes.plan_scratchpad import PlanScratchpadPass

    return PlanScratchpadPass


def _plan_kernels() -> type[ModulePass]:
    from ktir.passes.plan_kernels import PlanKernelsPass

    return PlanKernelsPass


def _lower_to_cores() -> type[ModulePass]:
    from ktir.passes.lower_to_cores import LowerToCoresPass

    return LowerToCoresPass


def _check_cores() -> type[ModulePass]:
    from ktir.passes.check_cores import CheckCoresPass

    return CheckCoresPass


def _emit_superdsc() -> type[ModulePass]:
    from ktir.passes.emit_superdsc import EmitSuperDscPass

    return EmitSuperDscPass


def _emit_ktdp() -> type[ModulePass]:
    from ktir.passes.emit_ktdp import EmitKtdpPass

    return EmitKtdpPass


def _compile() -> type[ModulePass]:
    from ktir.passes.compile import CompilePass

    return CompilePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> import thunk for every ktir pass."""
    return {
        "ktir-propagate-layouts": _propagate_layouts,
        "ktir-insert-restickify": _insert_restickify,
        "ktir-pad-matmul": _pad_matmul,
        "ktir-fuse": _fuse,
        "ktir-verify-layouts": _verify_layouts,
        "ktir-divide-work": _divide_work,
        "ktir-plan-scratchpad": _plan_scratchpad,
        "ktir-plan-kernels": _plan_kernels,
        "ktir-lower-to-cores": _lower_to_cores,
        "ktir-check-cores": _check_cores,
        "ktir-emit-superdsc": _emit_superdsc,
        "ktir-emit-ktdp": _emit_ktdp,
        "ktir-compile": _compile,
    }
