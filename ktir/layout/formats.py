"""
XLA and Qualcomm HTP layout notations, converted to `ktir.layout.TiledLayout`.

Both notations describe the same thing as a `TiledLayout`: a row-major device tensor whose dims
each step a fixed number of host elements, with padding at the top of a host dim. The parsers
here read a notation, bind it to its host shape (logical, row-major contiguous) and return a
`ForeignLayout`; anything a `device_size` + `stride_map` pair cannot express raises `LayoutError`.

XLA tiled layouts, `F32[3,5]{1,0:T(2,2)}`: element type, logical shape, `minor_to_major`, then
tiles. The physical dims are the logical dims ordered major to minor. A tile covers a suffix of
the current dims and splits a dim of size D by t into the tile index (ceil(D/t), stride t*s) and
the within-tile index (t, stride s); all tile-index dims go first, then all within-tile dims
(pad-reshape-transpose). A later tile splits the dims the earlier one produced, and a `*` (or
-1) entry first merges that dim into the next more minor one. Worked example: T(2,2) turns
(3, 5) with host strides (5, 1) into device_size (2, 3, 2, 2), stride_map (10, 2, 5, 1); element
(2, 3) is at device (1, 1, 0, 1), linear index (1*3 + 1)*4 + 1 = 17, and the row of three tiles
spans 6 > 5 columns: the sixth column is padding.

HTP chunked layouts, `ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,8, 2,8, 3,32>`: rank, then
(dim, size) pairs, one device dim each, most major first. A dim's nonzero pairs, read right to
left, are chunk levels stepping 1, then the product of the chunk sizes to their right; its one
0-sized pair takes "all the rest": ceil(dim size / product of its chunk sizes) steps of that
product. The 0-sized pairs order the chunks and come before the chunk pairs (HTP's own
`memory_layout.h` reads them that way). Worked example (crouton): on a 1x3x5x30 NHWC tensor
(strides 450, 150, 30, 1) it is device_size (1, 1, 1, 1, 8, 8, 32), stride_map
(-1, -1, -1, -1, 150, 30, 1), i.e. the tensor padded to 1x8x8x32; element (0, 2, 4, 29) is at
2*256 + 4*32 + 29 = 669.

Device dims of size 1, and dims every step of which lands in padding, get stride -1.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ktir.layout.binding import BoundLayout
from ktir.layout.tiled import LayoutError, TiledLayout, contiguous_strides

__all__ = [
    "HTP_LAYOUTS",
    "XLA_ELEMENT_TYPES",
    "ForeignLayout",
    "parse_htp_layout",
    "parse_xla_layout",
]

XLA_ELEMENT_TYPES = frozenset(
    ["PRED", "S8", "U8", "S16", "U16", "S32", "U32", "S64", "U64", "F16", "BF16", "F32", "F64"]
)
"""XLA element types accepted by `parse_xla_layout` (the type does not change the layout)."""

HTP_LAYOUTS: dict[str, str] = {
    "R4FlatMemoryLayout": "FlatMemoryLayout<4>",
    "R4NCHWMemoryLayout": "ChunkedMemoryLayout<4, 0,0, 3,0, 2,0, 1,0>",
    "R4Depth32MemoryLayout": "ChunkedMemoryLayout<4, 0,0, 1,0, 3,0, 2,0, 2,4, 3,32>",
    "R4CroutonLayout": "ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,8, 2,8, 3,32>",
    "R4Crouton4x1Layout": "ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,8, 2,2, 3,32, 2,4>",
    "R4Crouton2x2Layout": "ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,4, 2,4, 3,32, 1,2, 2,2>",
    "R4Crouton2Layout": "ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,8, 2,2, 3,32, 2,2>",
    "ConvWeightLayout": "ChunkedMemoryLayout<4, 3,0, 2,0, 0,0, 1,0, 2,8, 3,32, 2,4>",
}
"""Named HTP layouts of the Qualcomm documentation; `parse_htp_layout` accepts the names too."""


@dataclass(frozen=True)
class ForeignLayout:
    """
    A layout from another notation as a `TiledLayout`, bound to its host shape.

    Example: `parse_xla_layout("F32[3,5]{1,0:T(2,2)}")` has host_size (3, 5), dtype "F32" and
    layout `TiledLayout((2, 3, 2, 2), (10, 2, 5, 1))`; its `linear_index((2, 3))` is 17. The
    host tensor is row-major contiguous. Construction binds the layout and raises `LayoutError`
    naming the notation when it does not fit the host shape.
    """

    host_size: tuple[int, ...]
    dtype: str | None
    layout: TiledLayout
    notation: str = field(default="", compare=False)
    _bound: BoundLayout = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Not redundant: callers without a type checker pass anything.
        if not isinstance(self.layout, TiledLayout):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"layout must be a TiledLayout, got {type(self.layout).__name__}")
        object.__setattr__(self, "host_size", tuple(int(n) for n in self.host_size))
        try:
            bound = self.layout.bind(self.host_size)
        except LayoutError as error:
            raise LayoutError(
                f"{self.notation or self.layout!r} does not bind to host size {list(self.host_size)}: {error}"
            ) from error
        object.__setattr__(self, "_bound", bound)

    def bound(self) -> BoundLayout:
        """The layout bound to `host_size` with contiguous strides (computed once)."""
        return self._bound

    def linear_index(self, coords: Sequence[int]) -> int:
        """Device linear offset of a host element (row-major over `device_size`, with padding)."""
        return self._bound.linear_index(coords)

    def memory_order(self) -> np.ndarray:
        """
        Host coordinates of every device element in device (memory) order, padding as -1.

        Shape (device_numel, rank), int64. Example: for `FlatMemoryLayout<4>` on 1x1x2x3 the
        rows are (0,0,0,0), (0,0,0,1), (0,0,0,2), (0,0,1,0), ...
        """
        offsets = self._bound.host_offsets().reshape(-1)
        coords = np.full((offsets.size, len(self.host_size)), -1, dtype=np.int64)
        valid = offsets >= 0
        if self.host_size:
            coords[valid] = np.stack(np.unravel_index(offsets[valid], self.host_size), axis=1)
        return coords


# ---------------------------------------------------------------------------------------------
# Device dims as digits of host groups
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Digit:
    """A device dim in the making: `size` steps of `unit` positions of host group `group`."""

    size: int
    unit: int
    group: int


class _Digits:
    """
    Device dims while a notation is converted, with the host groups they walk.

    A group is host dims merged by `*`: `sizes[g]` elements, position p at host offset
    `p * strides[g]`. A digit whose unit is at least `sizes[g]` (or whose size is 1) is all
    padding and gets stride -1; the other digits of a group form an exact mixed-radix number
    (units 1, then the product of the sizes below) spanning at least `sizes[g]`, the excess
    being padding at the top. Splits and merges keep that form or raise `LayoutError`.
    """

    def __init__(self, host_size: Sequence[int], order: Sequence[int], notation: str) -> None:
        self.sizes = dict(enumerate(host_size))
        self.strides = dict(enumerate(contiguous_strides(host_size)))
        self.dims = [_Digit(host_size[i], 1, i) for i in order]
        self.notation = notation

    def fail(self, what: str) -> LayoutError:
        """A `LayoutError` for the notation being converted."""
        return LayoutError(f"{self.notation!r}: {what}")

    def padding_only(self, digit: _Digit) -> bool:
        """Whether every step of `digit` past 0 lands in padding."""
        return digit.size == 1 or digit.unit >= self.sizes[digit.group]

    def others(self, digit: _Digit, skip: int) -> list[_Digit]:
        """The other digits of `digit`'s group that address real elements (dim `skip` is it)."""
        return [
            d
            for k, d in enumerate(self.dims)
            if k != skip and d.group == digit.group and not self.padding_only(d)
        ]

    def split(self, k: int, tile: int, text: str) -> tuple[_Digit, _Digit]:
        """Split dim `k` by `tile` into (tile index, within-tile index)."""
        digit = self.dims[k]
        if digit.size == 1 < tile:  # a size-1 dim holds only index 0: the rest is padding
            padding = max(digit.unit, self.sizes[digit.group])
            return _Digit(1, digit.unit * tile, digit.group), _Digit(tile, padding, digit.group)
        count = -(-digit.size // tile)
        if count * tile != digit.size and not self.padding_only(digit):
            inside = [d for d in self.others(digit, k) if d.unit >= digit.unit]
            if inside:
                raise self.fail(
                    f"tile {text} pads a dim of size {digit.size} to {count * tile} inside an "
                    f"earlier tile (a dim of size {inside[0].size} steps over it): that padding "
                    "would alias real elements, which a stride map cannot express"
                )
        return _Digit(count, digit.unit * tile, digit.group), _Digit(tile, digit.unit, digit.group)

    def combine(self, k: int, text: str) -> None:
        """Merge dim `k` into dim `k + 1` (the next more minor) for a `*` in tile `text`."""
        outer, inner = self.dims[k], self.dims[k + 1]
        if outer.size == 1 or inner.size == 1:
            merged = inner if outer.size == 1 else outer
        elif outer.group == inner.group and outer.unit == inner.unit * inner.size:
            merged = _Digit(outer.size * inner.size, inner.unit, inner.group)
        elif outer.group != inner.group and self._groups_touch(k, k + 1):
            self._merge_groups(outer.group, inner.group)
            merged = _Digit(outer.size * inner.size, inner.unit, inner.group)
        else:
            raise self.fail(
                f"'*' in tile {text} combines a dim of size {outer.size} with the next one "
                f"(size {inner.size}), but they are not contiguous in host memory (different "
                "host dims out of order, or padding between them), so the combined dim has no "
                "single stride"
            )
        self.dims[k : k + 2] = [merged]

    def _groups_touch(self, k_outer: int, k_inner: int) -> bool:
        """Whether dim `k_outer` starts its group, dim `k_inner` ends its own, and they abut."""
        outer, inner = self.dims[k_outer], self.dims[k_inner]
        sizes, strides = self.sizes, self.strides
        return (
            strides[outer.group] == strides[inner.group] * sizes[inner.group]
            and outer.unit == 1
            and all(d.unit >= outer.size for d in self.others(outer, k_outer))
            and inner.unit * inner.size == sizes[inner.group]
            and not any(
                d.unit > inner.unit
                for k, d in enumerate(self.dims)
                if k != k_inner and d.group == inner.group and d.size > 1
            )
        )

    def _merge_groups(self, outer: int, inner: int) -> None:
        scale = self.sizes[inner]
        self.dims = [_Digit(d.size, d.unit * scale, inner) if d.group == outer else d for d in self.dims]
        self.sizes[inner] *= self.sizes.pop(outer)
        del self.strides[outer]

    def apply_tile(self, tile: Sequence[int], text: str) -> None:
        """Apply one XLA tile (entries -1 for `*`) to the most minor dims."""
        if len(tile) > len(self.dims):
            raise self.fail(
                f"tile {text} has {len(tile)} dims but the shape it tiles has only "
                f"{len(self.dims)}: a tile must cover a suffix of the dims"
            )
        if tile[-1] == -1:
            raise self.fail(f"tile {text} ends in '*', which has no more minor dim to join")
        k = len(self.dims) - len(tile)
        sizes: list[int] = []
        for t in tile:
            if t == -1:
                self.combine(k, text)
            else:
                sizes.append(t)
                k += 1
        lead = len(self.dims) - len(sizes)
        pieces = [self.split(lead + i, t, text) for i, t in enumerate(sizes)]
        self.dims[lead:] = [p[0] for p in pieces] + [p[1] for p in pieces]

    def tiled(self) -> TiledLayout:
        """The `TiledLayout`: stride unit * group stride, -1 for padding-only dims."""
        if not self.dims:
            return TiledLayout((1,), (-1,))
        strides = [-1 if self.padding_only(d) else d.unit * self.strides[d.group] for d in self.dims]
        try:
            return TiledLayout(tuple(d.size for d in self.dims), tuple(strides))
        except LayoutError as error:
            raise self.fail(str(error)) from error


# ---------------------------------------------------------------------------------------------
# XLA
# ---------------------------------------------------------------------------------------------

_XLA_SHAPE = re.compile(r"(?P<type>\w+)\[(?P<dims>[^\]]*)\](?:\{(?P<layout>[^{}]*)\})?")
_XLA_TILES = re.compile(r"T(\([^()]*\))+")
_INT = re.compile(r"-?\d+")


def _ints(text: str, what: str, notation: str) -> list[int]:
    """Comma-separated integers of `text`; `what` and `notation` name them in errors."""
    items = [item.strip() for item in text.split(",")] if text.strip() else []
    bad = [item for item in items if not _INT.fullmatch(item)]
    if bad:
        raise LayoutError(f"{notation!r}: {what} entry {bad[0]!r} is not an integer")
    return [int(item) for item in items]


def parse_xla_layout(text: str) -> ForeignLayout:
    """
    Parse an XLA shape with layout, e.g. `BF16[32,256]{1,0:T(8,128)(2,1)}`.

    Accepts the element types in `XLA_ELEMENT_TYPES` (any case), `minor_to_major` orders,
    any number of tiles, and `*` / -1 tile entries. Without `{...}` the order is row-major.
    Example: `parse_xla_layout("F32[3,5]{1,0:T(2,2)}").linear_index((2, 3)) == 17`.
    """
    match = _XLA_SHAPE.fullmatch(text.replace(" ", ""))
    if match is None:
        raise LayoutError(f"{text!r} is not an XLA shape with layout such as 'F32[3,5]{{1,0:T(2,2)}}'")
    dtype = match["type"].upper()
    if dtype not in XLA_ELEMENT_TYPES:
        raise LayoutError(
            f"{text!r}: unknown element type {match['type']!r} "
            f"(supported: {', '.join(sorted(XLA_ELEMENT_TYPES))})"
        )
    shape = _ints(match["dims"], "dimension", text)
    if any(n < 1 for n in shape):
        raise LayoutError(f"{text!r}: dimension sizes must be positive, got {shape}")
    order, _, tiling = (match["layout"] or "").partition(":")
    if match["layout"] is None:  # no layout given: XLA's default, row-major
        minor_to_major = list(range(len(shape) - 1, -1, -1))
    else:
        minor_to_major = _ints(order, "minor_to_major", text)
    if sorted(minor_to_major) != list(range(len(shape))):
        raise LayoutError(
            f"{text!r}: minor_to_major {{{order}}} must be a permutation of 0..{len(shape) - 1}"
        )
    if tiling and not _XLA_TILES.fullmatch(tiling):
        raise LayoutError(f"{text!r}: {tiling!r} is not a tiling 'T(...)(...)'")
    digits = _Digits(shape, minor_to_major[::-1], text)
    for tile_text in re.findall(r"\([^()]*\)", tiling):
        tile = _ints(tile_text[1:-1].replace("*", "-1"), f"tile {tile_text}", text)
        if not tile or any(t == 0 or t < -1 for t in tile):
            raise LayoutError(f"{text!r}: tile {tile_text} needs positive sizes or '*' (-1) entries")
        digits.apply_tile(tile, tile_text)
    return ForeignLayout(tuple(shape), dtype, digits.tiled(), text)


# ---------------------------------------------------------------------------------------------
# Qualcomm HTP
# ---------------------------------------------------------------------------------------------

_HTP = re.compile(r"(?P<kind>\w+)<(?P<params>[^<>]*)>")


def _htp_pairs(text: str) -> tuple[int, list[tuple[int, int]]]:
    """Rank and (dim, size) pairs of an HTP layout string."""
    match = _HTP.fullmatch(text.replace(" ", ""))
    if match is None or match["kind"] not in ("ChunkedMemoryLayout", "FlatMemoryLayout"):
        raise LayoutError(
            f"{text!r} is not 'ChunkedMemoryLayout<rank, dim,size, ...>', "
            "'FlatMemoryLayout<rank>' or a name in HTP_LAYOUTS"
        )
    params = _ints(match["params"], "parameter", text)
    if not params or params[0] < 0:
        raise LayoutError(f"{text!r}: the first parameter must be the rank (>= 0)")
    rank, rest = params[0], params[1:]
    if match["kind"] == "FlatMemoryLayout":
        if rest:
            raise LayoutError(f"{text!r}: FlatMemoryLayout takes only the rank")
        return rank, [(dim, 0) for dim in range(rank)]
    if len(rest) % 2:
        raise LayoutError(f"{text!r}: the parameters after the rank must be (dim, size) pairs")
    return rank, list(zip(rest[::2], rest[1::2], strict=True))


def _check_htp_pairs(text: str, rank: int, pairs: Sequence[tuple[int, int]]) -> None:
    """Raise `LayoutError` unless `pairs` name dims < rank, one 0-pair each, 0-pairs first."""
    for dim, chunk in pairs:
        if not 0 <= dim < rank:
            raise LayoutError(f"{text!r}: pair '{dim},{chunk}' names dim {dim} >= rank {rank}")
        if chunk < 0:
            raise LayoutError(f"{text!r}: pair '{dim},{chunk}' has a negative size")
    for dim in range(rank):
        rests = sum(1 for d, chunk in pairs if d == dim and chunk == 0)
        if rests != 1:
            raise LayoutError(
                f"{text!r}: dim {dim} needs exactly one '{dim},0' pair (\"all the rest\"), found {rests}"
            )
    first_chunk = next((k for k, (_, chunk) in enumerate(pairs) if chunk), len(pairs))
    late = [f"{d},0" for d, chunk in pairs[first_chunk:] if not chunk]
    if late:
        dim, chunk = pairs[first_chunk]
        raise LayoutError(
            f"{text!r}: pair '{late[0]}' comes after the chunk pair '{dim},{chunk}'; HTP reads "
            "the 'all the rest' pairs first and the chunk pairs after them"
        )


def parse_htp_layout(text: str, host_size: Sequence[int], dtype: str | None = None) -> ForeignLayout:
    """
    Parse an HTP memory layout for a row-major host tensor of `host_size` (NHWC for rank 4).

    `text` is `ChunkedMemoryLayout<...>`, `FlatMemoryLayout<rank>` or a key of `HTP_LAYOUTS`.
    Example: `parse_htp_layout("R4CroutonLayout", (1, 3, 5, 30)).layout.device_size` is
    (1, 1, 1, 1, 8, 8, 32).
    """
    notation = HTP_LAYOUTS.get(text.strip(), text)
    rank, pairs = _htp_pairs(notation)
    size = tuple(int(n) for n in host_size)
    if rank != len(size):
        raise LayoutError(f"{text!r} has rank {rank} but the host size {list(size)} has {len(size)}")
    if any(n < 1 for n in size):
        raise LayoutError(f"{text!r}: host sizes must be positive, got {list(size)}")
    _check_htp_pairs(text, rank, pairs)
    digits = _Digits(size, range(rank), notation)
    units = [1] * rank
    levels: dict[int, _Digit] = {}
    for k in range(len(pairs) - 1, -1, -1):  # right to left: chunk levels, innermost first
        dim, chunk = pairs[k]
        if chunk:
            levels[k] = _Digit(chunk, units[dim], dim)
            units[dim] *= chunk
    for k, (dim, chunk) in enumerate(pairs):
        if not chunk:
            levels[k] = _Digit(-(-size[dim] // units[dim]), units[dim], dim)
    digits.dims = [levels[k] for k in range(len(pairs))]
    return ForeignLayout(size, dtype, digits.tiled(), text)
