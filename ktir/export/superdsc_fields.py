"""
Building blocks of a SuperDSC kernel spec (`ktir.export.superdsc`): the dim and layout labels, how one
tensor looks from SuperDSC (the iteration dims its device dims walk and its stick dim), where
each tensor sits in device memory, and the fold-property JSON fragments.

SuperDSC names iteration dims by fixed labels instead of `d0`/`m`/`k`, and names each distinct
tensor layout by a role-like label (`OUTPUT`, `KERNEL`, ...) that says nothing about whether the
tensor is read or written: two tensors with the same dim order and stick share a label.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ktir.cores.tiling import Access, device_box
from ktir.hardware.target import SPYRE
from ktir.layout.binding import HostGroup
from ktir.layout.dtypes import DeviceDType
from ktir.layout.spyre import SpyreTensorLayout

POINTWISE_LABELS = ("mb", "x", "y", "i", "j", "ki", "kj")
"""Labels of the leading dims of a non-matmul op; its last dim is `OUTPUT_LABEL`."""

OUTPUT_LABEL = "out"

MATMUL_LABELS = ("ki", "kj", "y", "x", "mb", "out", "in")
"""A matmul with n dims takes the last n: (m, n, k) -> (mb, out, in)."""

LAYOUT_LABELS = ("OUTPUT", "KERNEL", "INPUT", "KERNEL_IDX")
MATMUL_LAYOUT_LABELS = ("INPUT", "KERNEL", "OUTPUT", "KERNEL_IDX")

HBM_ALIGNMENT = 128
"""Bytes each tensor's base address is rounded up to (one stick)."""


def dim_labels(count: int, matmul: bool) -> list[str]:
    """
    The SuperDSC labels of `count` iteration dims in the reference's order.

    Examples: 2 pointwise dims -> [mb, out]; 3 -> [mb, x, out]; a 3-dim matmul -> [mb, out, in].
    """
    if matmul:
        if count > len(MATMUL_LABELS):
            raise ValueError(
                f"a matmul with {count} dims has no SuperDSC labels (at most {len(MATMUL_LABELS)})"
            )
        return list(MATMUL_LABELS[len(MATMUL_LABELS) - count :])
    # One label beyond the dims must stay free: a synthetic stick dim may need it.
    if count > len(POINTWISE_LABELS):
        raise ValueError(f"an op with {count} dims has no SuperDSC labels (at most {len(POINTWISE_LABELS)})")
    return [*POINTWISE_LABELS[: count - 1], OUTPUT_LABEL] if count else []


def synthetic_stick_label(count: int) -> str:
    """The label of the stick dim added to an op of `count` dims whose tensors have none (sparse)."""
    return POINTWISE_LABELS[count]


@dataclass(frozen=True)
class TensorView:
    """
    A tensor as SuperDSC sees it, in iteration-dim names.

    `order`: the dims the device dims (all but the lanes) walk, inner to outer; the stick dim
    sits where a device dim walks nothing (a size-1 stick count), as the reference's coordinate
    of 0 puts it. `stick`: the dim the lanes walk (None for a sparse layout). `extents`: the
    device positions along each dim in host elements, padding included.
    """

    order: tuple[str, ...]
    stick: str | None
    extents: dict[str, int]


def _extents(access: Access, groups: Sequence[HostGroup]) -> dict[str, int]:
    extents: dict[str, int] = {}
    for group in groups:
        outer, *inner = group.host_dims
        # Padding sits at the end of the flattened group, so it belongs to its outermost dim.
        inner_size = math.prod(group.host_sizes[1:])
        for host_dim, extent in [
            (outer, -(-group.extent // inner_size)),
            *((h, access.shape[h]) for h in inner),
        ]:
            if (name := access.dims[host_dim]) is not None:
                extents[name] = extent
    return extents


def tensor_view(access: Access) -> TensorView:
    """
    The SuperDSC view of one tensor. Example: (8, 32, 64) fp16 on device [32, 1, 8, 64] with
    dims (d0, d1, d2) walks d0 (device dim 2), then one stick of d2 (dim 1), then d1 (dim 0):
    order (d0, d2, d1), stick d2.
    """
    # Size-1 device dims step nothing, so no group owns them.
    groups = [g for g in access.layout.bind(access.shape).groups if g.digits]
    owner = {digit.device_dim: group for group in groups for digit in group.digits}
    lanes = len(access.layout.device_size) - 1
    stick_group = owner.get(lanes)
    stick = access.dims[stick_group.host_dims[-1]] if stick_group is not None else None
    order: list[str] = []
    for j in range(lanes - 1, -1, -1):
        group = owner.get(j)
        names = [stick] if group is None else [access.dims[h] for h in reversed(group.host_dims)]
        order.extend(n for n in names if n is not None and n not in order)
    if stick is not None and stick not in order:
        order.append(stick)
    return TensorView(tuple(order), stick, _extents(access, groups))


def hbm_bases(layouts: Sequence[SpyreTensorLayout]) -> list[int]:
    """
    Base byte address of each tensor when they are laid out one after the other from 0, each
    base rounded up to `HBM_ALIGNMENT`. Example: two (4, 64) fp16 tensors -> [0, 512].
    """
    bases, free = [], 0
    for layout in layouts:
        base = -(-free // HBM_ALIGNMENT) * HBM_ALIGNMENT
        bases.append(base)
        free = base + layout.device_bytes
    return bases


def core_offset(access: Access, cuts: dict[str, int], piece: dict[str, int]) -> int:
    """
    Bytes from a tensor's base to the first element of one core's tile. Example: (4, 64) fp16
    on [1, 4, 64] cut {d0: 2}: piece {d0: 1} starts at device (0, 2, 0), 128 elements = 256 B.
    """
    start, _ = device_box(access, cuts, piece)
    strides = access.layout.device_strides
    return sum(s * t for s, t in zip(start, strides, strict=True)) * access.layout.device_dtype.element_bytes


def word_length(layout: SpyreTensorLayout) -> int:
    """Bytes per element as SuperDSC counts them: a stick's bytes over its elements."""
    return SPYRE.stick_bytes // layout.elems_per_stick


# --- fold-property JSON fragments ------------------------------------------------------------


def affine(alpha: int) -> dict[str, Any]:
    """An `alpha * index + 0` fold function."""
    return {"Affine": {"alpha_": alpha, "beta_": 0}}


def fold(factor: int, label: str) -> dict[str, Any]:
    """One fold property: `factor` positions along the fold named `label`."""
    return {"factor_": factor, "label_": label}


def per_core_map(cores: int, values: Sequence[Any]) -> dict[str, Any]:
    """A value per core (a `Map` over the core fold; corelet and time are constant)."""
    return {
        "dim_prop_func": [{"Map": {}}, {"Const": {}}, {"Const": {}}],
        "dim_prop_attr": [fold(cores, "core"), fold(1, "corelet"), fold(1, "time")],
        "data_": {f"[{c}, 0, 0]": value for c, value in enumerate(values)},
    }


def coord_info(size: int, splits: int, eps: int, stick: bool, stick_reduction: bool) -> dict[str, Any]:
    """
    How one dim of one tensor folds over cores and element arrays. `size` is a core's extent
    (1 for a dim the tensor does not walk) and `splits` the core count along it.

    A plain dim: the core fold steps `size` elements, the element array holds `size`. A stick
    dim adds a second element array: `size / eps` sticks of `eps` lanes. A reduced stick dim
    (scale -2) keeps one stick whose lanes do not advance.
    """
    attrs = [fold(splits, "core_fold"), fold(1, "corelet_fold"), fold(1, "row_fold")]
    if not stick:
        funcs = [affine(size), affine(0), affine(0), affine(1)]
        return _coord(1, funcs, [*attrs, fold(size, "elem_arr_0")])
    funcs = [affine(eps if stick_reduction else size), affine(0), affine(0), affine(eps)]
    funcs.append(affine(0 if stick_reduction else 1))
    sticks = 1 if stick_reduction else max(1, size // eps)
    return _coord(2, funcs, [*attrs, fold(sticks, "elem_arr_1"), fold(eps, "elem_arr_0")])


def _coord(arrays: int, funcs: list[dict[str, Any]], attrs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "spatial": 3,
        "temporal": 0,
        "elemArr": arrays,
        "padding": "nopad",
        "folds": {"dim_prop_func": funcs, "dim_prop_attr": attrs},
    }


_FINITE_RANGE = {
    DeviceDType.SEN169_FP16: (-65504.0, 65504.0),
    DeviceDType.IEEE_FP32: (-3.4028234663852886e38, 3.4028234663852886e38),
    DeviceDType.IEEE_INT32: (-2147483648.0, 2147483647.0),
    DeviceDType.SENINT8: (-128.0, 127.0),
    DeviceDType.SEN143_FP8: (-448.0, 448.0),
    DeviceDType.SEN152_FP8: (-57344.0, 57344.0),
}


def mask_value(opfunc: str, device_dtype: DeviceDType) -> float:
    """
    The value a reduction's padded lanes are masked with: neutral for the reduction. For max
    and min that is the format's lowest and highest finite value, not -inf/+inf as the
    reference's documentation says: JSON has no infinities, and the reference's newer code
    moved to finite extremes because its constant encoder mangles infinities.
    """
    lowest, highest = _FINITE_RANGE[device_dtype]
    return {"max": lowest, "min": highest}.get(opfunc, 0.0)


def constant_info(name: str, value: float, device_dtype: DeviceDType, cores: int) -> dict[str, Any]:
    """One `constantInfo_` entry: the same scalar on every core (written as a plain number)."""
    return {
        "dataFormat_": device_dtype.name,
        "name_": name,
        "data_": {
            "dim_prop_func": [{"Const": {}}, {"Const": {}}, {"Map": {}}],
            "dim_prop_attr": [fold(cores, "core"), fold(1, "corelet"), fold(1, "time")],
            "data_": {"[0, 0, 0]": [value]},
        },
    }
