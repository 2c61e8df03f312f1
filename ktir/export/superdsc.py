"""
SuperDSC export: the JSON kernel spec the reference stack (torch-spyre) hands its backend
compiler, built for one graph-level kernel op after `ktir-divide-work` (docs/superdsc.md).

`kernel_spec(op, index, cores)` reads the op's iteration space (`ktir.cores.iteration`), its layouts and its
`work_division`, and returns `{"<index>_<opfunc>": {...}}`: how many slices each dim is cut
into, which slice each core takes, and inside `dscs_` the padded iteration sizes, one HBM
`allocate` per tensor with each core's start address, and the compute op. The (4, 64) fp16
`abs` on 2 cores gives slices {mb: 2, out: 1}, per-core sizes (2, 64), and start addresses
0/256 (input) and 512/768 (output).

Where the reference's documentation and its code disagree, this follows the code: dims are
labelled `mb`/`out` (not `c0`/`c1`), the first layout label of a non-matmul op is `OUTPUT`,
non-matmul ops run on `sfp`, and the top-level key is `0_abs`, not `abs`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from xdsl.ir import Operation

from ktir.cores.iteration import IterationError, IterationSpace, iteration_space
from ktir.cores.tiling import Access
from ktir.cores.work_division import core_slices
from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.core import WORK_DIVISION_ATTR
from ktir.export.superdsc_fields import (
    LAYOUT_LABELS,
    MATMUL_LAYOUT_LABELS,
    constant_info,
    coord_info,
    core_offset,
    dim_labels,
    fold,
    hbm_bases,
    mask_value,
    per_core_map,
    synthetic_stick_label,
    tensor_view,
    word_length,
)
from ktir.ir.diagnostics import op_error
from ktir.ir.state import read_core_order, read_division
from ktir.ir.values import shape_of

MASK_CONSTANT = "samv-maskvalue"
"""Name of the constant a reduction's padded lanes are masked with."""


@dataclass
class _Dims:
    """The op's dims in SuperDSC terms (labels, in the reference's order)."""

    label: dict[str, str]  # iteration dim -> label; size-1 dims of non-matmul ops have none
    order: list[str]  # every iteration dim, in the reference's order (it fixes the core ids)
    sizes: dict[str, int]  # label -> size, stick dims padded to whole sticks
    slices: dict[str, int]  # label -> slice count
    padding: dict[str, int]  # label -> padded lanes added to its size
    stick: str | None  # the op's stick label (synthetic when no tensor has one)


@dataclass
class _Tensor:
    """One tensor operand or result, its dims as labels."""

    access: Access
    order: list[str]  # labels, inner device dim to outer
    scales: dict[str, int]  # 1: walked; -1: not walked (broadcast, reduced); -2: reduced stick
    stick: str | None  # the label its lanes walk (None when sparse)
    extents: dict[str, int]  # label -> device positions along it

    @property
    def eps(self) -> int:
        """Elements per stick of the tensor's data format."""
        return self.access.layout.elems_per_stick


def _space(op: Operation) -> IterationSpace:
    if isinstance(op, st.FusedOp):
        raise op_error(
            op, "has no SuperDSC form (SuperDSC describes one graph op per kernel); export without ktir-fuse"
        )
    if isinstance(op, st.AttentionOp):
        reason = "the reference has no attention kernel: two matmuls and a softmax"
        raise op_error(op, f"has no SuperDSC form ({reason})")
    try:
        space = iteration_space(op)
    except IterationError as error:
        raise op_error(error.op, str(error)) from error
    if space is None:
        raise op_error(op, "is not a kernel; SuperDSC describes kernels only")
    return space


def _reference_order(op: Operation, space: IterationSpace) -> list[str]:
    """
    The iteration dims in the reference's order: a reduction iterates in its input's host
    order (ktir lists reduced dims last), every other op in the order of `space.sizes`.
    """
    if not isinstance(op, st.ReductionOp):
        return list(space.sizes)
    reduced = {d % len(shape_of(op.input.type)) for d in st.ints(op.dims)}
    kept = iter(d for d in space.sizes if d not in space.reduction)
    dropped = iter(space.reduction)
    return [next(dropped) if d in reduced else next(kept) for d in range(len(shape_of(op.input.type)))]


def _dims(op: Operation, space: IterationSpace, splits: dict[str, int]) -> _Dims:
    matmul = space.unit == "pt"
    order = _reference_order(op, space)
    # The reference's loop ranges never hold a size-1 dim (Inductor drops them); a matmul keeps
    # its named dims so that m, n and k keep their labels.
    kept = order if matmul else [d for d in order if space.sizes[d] > 1]
    try:
        labels = dim_labels(len(kept), matmul)
    except ValueError as error:
        raise op_error(op, str(error)) from error
    label = dict(zip(kept, labels, strict=True))
    sizes = {label[d]: space.sizes[d] for d in kept}
    slices = {label[d]: splits[d] for d in kept}
    return _Dims(label, order, sizes, slices, {}, None)


def _tensor(access: Access, dims: _Dims) -> _Tensor:
    view = tensor_view(access)
    order = [dims.label[d] for d in view.order if d in dims.label]
    stick = dims.label.get(view.stick) if view.stick is not None else None
    extents = {dims.label[d]: n for d, n in view.extents.items() if d in dims.label}
    return _Tensor(access, order, dict.fromkeys(order, 1), stick, extents)


def _complete(tensors: list[_Tensor], reference: _Tensor, dims: _Dims, matmul: bool) -> None:
    """
    Give every tensor of a non-matmul op all of the op's dims (the reference tensor's order):
    the ones it does not walk are appended with scale -1, or -2 for the op's stick dim in a
    tensor without one (a reduction over the lanes). Without any stick dim, a synthetic one
    of one stick is appended to every tensor.
    """
    dims.stick = reference.stick
    if matmul:
        return
    op_order = list(reference.order)
    if dims.stick is None:
        dims.stick = synthetic_stick_label(len(dims.sizes))
        dims.sizes[dims.stick] = reference.eps
        dims.slices[dims.stick] = 1
    for tensor in tensors:
        for label in op_order:
            if label not in tensor.scales:
                tensor.order.append(label)
                tensor.scales[label] = -2 if tensor.stick is None and label == dims.stick else -1
        if reference.stick is None:
            tensor.order.append(dims.stick)
            tensor.scales[dims.stick] = 1
        # A tensor without lanes of its own (sparse) is described along the op's stick dim.
        tensor.stick = tensor.stick or dims.stick


def _pad(dims: _Dims, sources: list[_Tensor]) -> None:
    """Pad each source tensor's stick dim to its whole sticks (for a matmul, K as well)."""
    for tensor in sources:
        stick = tensor.stick
        if stick is None or stick not in tensor.extents:
            continue
        padded = max(dims.sizes[stick], tensor.extents[stick])
        dims.padding[stick] = dims.padding.get(stick, 0) + padded - dims.sizes[stick]
        dims.sizes[stick] = padded


def _layout_labels(tensors: list[_Tensor], matmul: bool, op: Operation) -> tuple[list[str], dict[str, Any]]:
    """Each tensor's layout label (shared by equal dim order and stick) and `primaryDsInfo_`."""
    names = MATMUL_LAYOUT_LABELS if matmul else LAYOUT_LABELS
    seen: dict[tuple[Any, ...], str] = {}
    info: dict[str, Any] = {}
    labels = []
    for tensor in tensors:
        key = (tuple(tensor.order), tensor.stick, tensor.eps)
        if key not in seen:
            if len(seen) == len(names):
                raise op_error(op, f"has more than {len(names)} distinct tensor layouts, SuperDSC's limit")
            seen[key] = names[len(seen)]
            info[seen[key]] = {
                "layoutDimOrder_": list(tensor.order),
                "stickDimOrder_": [tensor.stick],
                "stickSize_": [tensor.eps],
            }
        labels.append(seen[key])
    return labels, info


def _sized(dims: _Dims, per_core: bool) -> dict[str, Any]:
    return {f"{label}_": n // (dims.slices[label] if per_core else 1) for label, n in dims.sizes.items()}


def _allocate(index: int, tensor: _Tensor, addresses: list[int], dims: _Dims) -> dict[str, Any]:
    coords = {}
    for label in tensor.order:
        walked = tensor.scales[label] == 1
        coords[label] = coord_info(
            dims.sizes[label] // dims.slices[label] if walked else 1,
            dims.slices[label] if walked else 1,
            tensor.eps,
            stick=label == tensor.stick,
            stick_reduction=tensor.scales[label] == -2,
        )
    gaps = {
        label: tensor.extents[label] - dims.sizes[label]
        for label in tensor.order
        if tensor.scales[label] == 1 and tensor.extents.get(label, 0) > dims.sizes[label]
    }
    return {
        "nodeType_": "allocate",
        "name_": f"allocate-Tensor{index}_hbm",
        "prev_": "",
        "ldsIdx_": index,
        "component_": "hbm",
        "layoutDimOrder_": list(tensor.order),
        "maxDimSizes_": [-1] * len(tensor.order),
        "startAddressCoreCorelet_": per_core_map(len(addresses), [str(a) for a in addresses]),
        # HBM gaps hold for every core: the reference keys them by core -1.
        "backGapCore_": {label: {"-1": str(gap)} for label, gap in gaps.items()},
        "coordinates_": {"coordInfo": coords, "coreIdToWkSlice_": {}},
    }


def _labeled_ds(index: int, tensor: _Tensor, layout: str) -> dict[str, Any]:
    return {
        "ldsIdx_": index,
        "dsName_": f"Tensor{index}",
        "dsType_": layout,
        "scale_": [tensor.scales[label] for label in tensor.order],
        "wordLength": word_length(tensor.access.layout),
        "dataFormat_": tensor.access.layout.device_dtype.name,
        "memOrg_": {"hbm": {"isPresent": 1}, "lx": {"isPresent": 1}},
    }


def _masking(dims: _Dims, output: _Tensor) -> dict[str, Any]:
    """Padded lanes of a reduced stick dim: `[[first padded lane, count]]` per dim."""
    return {
        label: [[dims.sizes[label] - pad, pad]]
        for label, pad in dims.padding.items()
        if pad > 0 and output.scales.get(label) == -2
    }


def _core_table(
    dims: _Dims, splits: dict[str, int], matmul: bool, order: tuple[str, ...]
) -> list[dict[str, int]]:
    """
    Each core's slice per iteration dim: mixed radix in the op's recorded core `order`
    (`ktir.core_order`), else first dim fastest, K first for a K split.
    """
    ordered = {d: splits[d] for d in dims.order}
    fastest = list(order) or (["k"] if matmul and splits.get("k", 1) > 1 else [])
    return core_slices(ordered, fastest)


def _check_division(op: Operation, space: IterationSpace, cores: int) -> dict[str, int]:
    splits = read_division(op)
    if splits is None:
        raise op_error(op, f"has no {WORK_DIVISION_ATTR}; run ktir-divide-work first")
    if set(splits) != set(space.sizes):
        raise op_error(
            op, f"{WORK_DIVISION_ATTR} names {sorted(splits)}, not the op's dims {sorted(space.sizes)}"
        )
    if (used := math.prod(splits.values())) > cores:
        raise op_error(op, f"{WORK_DIVISION_ATTR} uses {used} cores, more than the {cores} available")
    return splits


def _top_level(dims: _Dims, table: list[dict[str, int]], dsc: dict[str, Any]) -> dict[str, Any]:
    cores = len(table)
    slices = [{label: piece[d] for d, label in dims.label.items()} for piece in table]
    if dims.stick is not None and dims.stick not in dims.label.values():
        for piece in slices:
            piece[dims.stick] = 0  # the synthetic stick dim is never split
    return {
        "sdscFoldProps_": [fold(1, "time")],
        "sdscFolds_": {
            "dim_prop_func": [{"Affine": {"alpha_": 1, "beta_": 0}}],
            "dim_prop_attr": [fold(1, "time")],
            "data_": {"[0]": "0"},
        },
        "coreFoldProp_": fold(cores, "core"),
        "coreletFoldProp_": fold(1, "corelet"),
        "numCoresUsed_": cores,
        "coreIdToDsc_": {str(c): 0 for c in range(cores)},
        "numWkSlicesPerDim_": dict(dims.slices),
        "coreIdToWkSlice_": {str(c): piece for c, piece in enumerate(slices)},
        "coreIdToDscSchedule": {str(c): [[-1, 0, 0, 0]] for c in range(cores)},
        "dscs_": [dsc],
    }


@dataclass
class _Kernel:
    """Everything `kernel_spec` works out for one op before writing the JSON."""

    opfunc: str  # the op name without `ktir.`
    matmul: bool
    reduction: bool
    splits: dict[str, int]
    dims: _Dims
    inputs: list[_Tensor]
    tensors: list[_Tensor]  # inputs, then the output
    table: list[dict[str, int]]  # per core, its slice of each iteration dim

    @property
    def hardware_op(self) -> str:
        """The op function the hardware runs: a reduction off the lanes has a "nonstick" variant."""
        if self.reduction and -2 not in self.tensors[-1].scales.values():
            return self.opfunc + "nonstick"
        return self.opfunc


def _kernel(op: Operation, cores: int) -> _Kernel:
    space = _space(op)
    splits = _check_division(op, space, cores)
    matmul, reduction = space.unit == "pt", bool(space.reduction) and space.unit != "pt"
    dims = _dims(op, space, splits)
    inputs = [_tensor(a, dims) for a in space.inputs if a is not None]
    tensors = [*inputs, _tensor(space.output, dims)]
    reference = inputs[0] if reduction else tensors[-1]
    _complete(tensors, reference, dims, matmul)
    _pad(dims, tensors if matmul else [reference])
    table = _core_table(dims, splits, matmul, read_core_order(op))
    return _Kernel(op.name.removeprefix("ktir."), matmul, reduction, splits, dims, inputs, tensors, table)


def _compute_op(kernel: _Kernel) -> dict[str, Any]:
    last = len(kernel.tensors) - 1
    # A reduction accumulates into its output, so the reference lists the output as an input too.
    reads = len(kernel.tensors) if kernel.reduction else len(kernel.inputs)
    data_format = kernel.tensors[0].access.layout.device_dtype.name
    return {
        "exUnit": "pt" if kernel.matmul else "sfp",
        "opFuncName": kernel.hardware_op,
        "attributes_": {"dataFormat_": data_format, "fidelity_": "regular"},
        "location": "Inner",
        "inputLabeledDs": [f"Tensor{i}-idx{i}" for i in range(reads)],
        "outputLabeledDs": [f"Tensor{last}-idx{last}"],
    }


def _dsc(kernel: _Kernel, op: Operation) -> dict[str, Any]:
    dims, tensors, cores = kernel.dims, kernel.tensors, len(kernel.table)
    layouts, primary = _layout_labels(tensors, kernel.matmul, op)
    bases = hbm_bases([t.access.layout for t in tensors])
    masking = _masking(dims, tensors[-1])
    constants = {}
    if masking:
        data_format = tensors[0].access.layout.device_dtype
        value = mask_value(kernel.opfunc, data_format)
        constants["0"] = constant_info(MASK_CONSTANT, value, data_format, cores)
    per_core = {"name_": "core", **_sized(dims, per_core=True)}
    allocations = []
    for i, tensor in enumerate(tensors):
        addresses = [bases[i] + core_offset(tensor.access, kernel.splits, piece) for piece in kernel.table]
        allocations.append(_allocate(i, tensor, addresses, dims))
    return {
        "numCoresUsed_": cores,
        "numCoreletsUsed_": 1,
        "coreIdsUsed_": list(range(cores)),
        "N_": {"name_": "n", **_sized(dims, per_core=False)},
        "coordinateMasking_": masking,
        "maskingConstId_": 0 if masking else -1,
        "dataStageParam_": {"0": {"ss_": per_core, "el_": dict(per_core)}},
        "primaryDsInfo_": primary,
        "scheduleTree_": allocations,
        "labeledDs_": [_labeled_ds(i, t, layouts[i]) for i, t in enumerate(tensors)],
        "constantInfo_": constants,
        "computeOp_": [_compute_op(kernel)],
    }


def kernel_spec(op: Operation, index: int, cores: int) -> dict[str, Any]:
    """
    The SuperDSC spec of one kernel op, `{"<index>_<opfunc>": {...}}` (see the module
    docstring); `cores` is the core count available. Raises a located `DiagnosticError` for an
    op that is not a kernel, has no (or a bad) `work_division`, or does not fit SuperDSC.
    """
    kernel = _kernel(op, cores)
    return {
        f"{index}_{kernel.opfunc}": _top_level(
            kernel.dims, kernel.table, {kernel.hardware_op: _dsc(kernel, op)}
        )
    }
