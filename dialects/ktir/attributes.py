"""
The attributes of the `ktir` dialect: the `#ktir.tiled` tensor encoding and its device data
format, the core-level `#ktir.tile`, compute unit and ring combine kind, and `#ktir.operand`.

Spyre stores every device tensor as 128-byte *sticks*. Which host elements go into which
stick is the tensor's layout, written as the encoding of a builtin ranked tensor:

```mlir
tensor<5x100x150xf16, #ktir.tiled<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>
```

Using the builtin encoding slot (as sparse_tensor, IREE and Triton do) keeps standard ops
and upstream MLIR parsing working: in generic form the attribute is opaque to MLIR.
The layout math lives in `ktir.layout`; this module only carries it in the IR. It imports no
other module of the dialect: the op modules build on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    DictionaryAttr,
    Float8E4M3FNType,
    Float16Type,
    Float32Type,
    Float64Type,
    IntAttr,
    IntegerType,
    NoneAttr,
    TensorType,
    i64,
)
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, ParametrizedAttribute, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from ktir.hardware.target import MAX_DEVICE_MEMORY_BYTES
from ktir.layout.dtypes import ELEMENT_TYPE_TO_DEVICE_DTYPE, DeviceDType
from ktir.layout.spyre import SpyreTensorLayout
from ktir.layout.tiled import LayoutError, TiledLayout

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
"""The range of `i64`, which layout entries and tile coordinates must fit."""

#### The tiled layout encoding ####


@irdl_attr_definition
class DeviceDTypeAttr(EnumAttribute[DeviceDType], SpacedOpaqueSyntaxAttribute):  # pyright: ignore[reportInvalidTypeArguments]  # xDSL: EnumAttribute wants xDSL's StrEnum; DeviceDType is the standard library's (ktir.layout does not import xDSL)
    """A Spyre device data format; `SEN169_FP16` inside `#ktir.tiled<...>`."""

    name = "ktir.device_dtype"


@irdl_attr_definition
class TiledLayoutAttr(ParametrizedAttribute):
    """
    A Spyre tiled layout used as a tensor encoding.

    Syntax:

    ```mlir
    #ktir.tiled<device_size = [4, 1024, 64], stride_map = [64, 256, 1]>
    #ktir.tiled<device_size = [4, 1024, 64], stride_map = [64, 256, 1], device_dtype = SEN169_FP16>
    ```

    `device_size` is the row-major device shape (the last dim is one stick);
    `stride_map[j]` is the host element stride of device dim `j` (-1: synthetic, 0: broadcast).
    `device_dtype` is optional: it defaults to the format of the tensor's element type and,
    when written, must agree with it. On its own the attribute checks what it can without a
    tensor (equal lengths, positive sizes, strides >= -1, no host stride walked twice);
    `verify_tiled_tensor` checks it against the tensor's shape and element type.
    """

    name = "ktir.tiled"

    device_size: ArrayAttr[IntAttr]
    stride_map: ArrayAttr[IntAttr]
    device_dtype: DeviceDTypeAttr | NoneAttr

    def __init__(
        self,
        device_size: Sequence[int],
        stride_map: Sequence[int],
        device_dtype: DeviceDType | None = None,
    ) -> None:
        super().__init__(
            ArrayAttr(IntAttr(v) for v in device_size),
            ArrayAttr(IntAttr(v) for v in stride_map),
            NoneAttr() if device_dtype is None else DeviceDTypeAttr(DeviceDType(device_dtype)),
        )

    @classmethod
    def from_layout(cls, stl: SpyreTensorLayout, explicit_dtype: bool = False) -> TiledLayoutAttr:
        """The encoding of `stl`; the dtype is written out only if `explicit_dtype`."""
        return cls(stl.device_size, stl.stride_map, stl.device_dtype if explicit_dtype else None)

    @property
    def tiled(self) -> TiledLayout:
        """The layout as a `ktir.layout.TiledLayout`."""
        return TiledLayout(
            tuple(v.data for v in self.device_size.data),
            tuple(v.data for v in self.stride_map.data),
        )

    @property
    def explicit_device_dtype(self) -> DeviceDType | None:
        """The written `device_dtype`, or None when it is implied by the element type."""
        if isinstance(self.device_dtype, NoneAttr):
            return None
        return self.device_dtype.data

    def layout_for(self, element_type: Attribute) -> SpyreTensorLayout:
        """The `SpyreTensorLayout` this encoding denotes on tensors of `element_type`."""
        implied = device_dtype_of_element(element_type)
        return SpyreTensorLayout.from_device(
            self.tiled.device_size, self.tiled.stride_map, self.explicit_device_dtype or implied
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def int_list() -> list[int]:
            return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)

        with parser.in_angle_brackets():
            parser.parse_keyword("device_size")
            parser.parse_punctuation("=")
            device_size = int_list()
            parser.parse_punctuation(",")
            parser.parse_keyword("stride_map")
            parser.parse_punctuation("=")
            stride_map = int_list()
            device_dtype: Attribute = NoneAttr()
            if parser.parse_optional_punctuation(",") is not None:
                parser.parse_keyword("device_dtype")
                parser.parse_punctuation("=")
                pos = parser.pos
                name = parser.parse_identifier()
                if name not in DeviceDType.__members__:
                    known = ", ".join(DeviceDType.__members__)
                    parser.raise_error(
                        f"unknown device_dtype '{name}' (expected one of {known})", pos, parser.pos
                    )
                device_dtype = DeviceDTypeAttr(DeviceDType(name))
        return (
            ArrayAttr(IntAttr(v) for v in device_size),
            ArrayAttr(IntAttr(v) for v in stride_map),
            device_dtype,
        )

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string("device_size = ")
            with printer.in_square_brackets():
                printer.print_list(self.device_size.data, lambda v: printer.print_int(v.data))
            printer.print_string(", stride_map = ")
            with printer.in_square_brackets():
                printer.print_list(self.stride_map.data, lambda v: printer.print_int(v.data))
            if isinstance(self.device_dtype, DeviceDTypeAttr):
                printer.print_string(f", device_dtype = {self.device_dtype.data.value}")

    def verify(self) -> None:
        for what, values in (("device_size", self.device_size), ("stride_map", self.stride_map)):
            if any(not I64_MIN <= v.data <= I64_MAX for v in values.data):
                raise VerifyException(f"{what} entries must fit in i64, not {[v.data for v in values.data]}")
        try:
            self.tiled  # noqa: B018  (constructing it checks the host-independent rules)
        except LayoutError as error:
            raise VerifyException(f"invalid #ktir.tiled layout: {error}") from error


def device_dtype_of_element(element_type: Attribute) -> DeviceDType:
    """The Spyre device format of an MLIR element type (f16 -> fp16, i64 -> int32 ...)."""
    name = str(element_type)
    if (found := ELEMENT_TYPE_TO_DEVICE_DTYPE.get(name)) is None:
        known = ", ".join(ELEMENT_TYPE_TO_DEVICE_DTYPE)
        raise VerifyException(f"element type {name} has no Spyre device format (supported: {known})")
    return found


def verify_tiled_tensor(tensor: TensorType[Attribute]) -> None:
    """
    Check a tensor type whose encoding is `#ktir.tiled` against its shape and element type.

    Raises `VerifyException` naming the rule that fails: a static shape, an element type with
    a device format, a matching `device_dtype`, a stick of the right size as the last device
    dim, a device tensor that fits the device memory, and a `stride_map` that stores every host
    element exactly once.
    Tensors with another encoding (or none) are accepted unchanged.
    """
    encoding = tensor.encoding
    if not isinstance(encoding, TiledLayoutAttr):
        return
    shape = tensor.get_shape()
    if any(dim < 0 for dim in shape):
        raise VerifyException("a #ktir.tiled tensor must have a static shape")
    implied = device_dtype_of_element(tensor.element_type)
    explicit = encoding.explicit_device_dtype
    if explicit is not None and explicit != implied:
        raise VerifyException(
            f"device_dtype {explicit} does not match element type {tensor.element_type}, "
            f"which is stored as {implied}"
        )
    stick = encoding.tiled.device_size[-1]
    if stick != implied.elems_per_stick:
        raise VerifyException(
            f"the last device dim is the stick: it must hold {implied.elems_per_stick} "
            f"{tensor.element_type} elements, not {stick}"
        )
    device_bytes = math.prod(encoding.tiled.device_size) * implied.element_bytes
    if device_bytes > MAX_DEVICE_MEMORY_BYTES:
        raise VerifyException(
            f"the #ktir.tiled device tensor {list(encoding.tiled.device_size)} takes "
            f"{device_bytes / 1024**4:,.1f} TiB, more than the 16 TiB of device memory a target may have"
        )
    try:
        encoding.layout_for(tensor.element_type).bind(shape)
    except LayoutError as error:
        raise VerifyException(
            f"#ktir.tiled layout does not fit tensor shape {list(shape)}: {error}"
        ) from error


FLOAT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)
"""The floating-point element types graph ops compute on."""


def host_bytes(tensor: TensorType[Attribute]) -> int | None:
    """Bytes of a static tensor's elements (at least one byte each); None without a bit width."""
    element = tensor.element_type
    if not isinstance(element, (*FLOAT_TYPES, Float8E4M3FNType, IntegerType)):
        return None
    return math.prod(tensor.get_shape()) * max(1, element.bitwidth // 8)


def require_fits_device(tensor: TensorType[Attribute], what: str) -> None:
    """
    A tensor larger than any target's device memory (`MAX_DEVICE_MEMORY_BYTES`, 16 TiB) can
    never run; rejecting it here keeps every size and cost the passes compute within i64. Whether
    it fits the target compiled for is the passes' check (`check_device_memory`), not the IR's.
    """
    size = host_bytes(tensor)
    if size is not None and size > MAX_DEVICE_MEMORY_BYTES:
        raise VerifyException(
            f"{what} ({tensor}) holds {size / 1024**4:,.1f} TiB, more than the 16 TiB of device "
            "memory a target may have"
        )


#### Core-level attributes ####


class ComputeUnit(StrEnum):
    """The unit of a core a `ktir.compute` runs on."""

    PT = "pt"
    """The PE array (two 8x8 arrays): matmuls."""
    SFU = "sfu"
    """The special-function unit: everything else."""


@irdl_attr_definition
class ComputeUnitAttr(EnumAttribute[ComputeUnit], SpacedOpaqueSyntaxAttribute):
    """`pt` or `sfu`: bare in `ktir.compute sfu [...]`, `#ktir<unit sfu>` in generic form."""

    name = "ktir.unit"


class CombineKind(StrEnum):
    """How a `ktir.ring_reduce` combines the partners' tiles."""

    ADD = "add"
    MAX = "max"
    MIN = "min"


@irdl_attr_definition
class CombineKindAttr(EnumAttribute[CombineKind], SpacedOpaqueSyntaxAttribute):
    """`add`, `max` or `min`: bare in `ktir.ring_reduce ... combine add`, `#ktir<combine add>` generic."""

    name = "ktir.combine"


def _i64(parser: AttrParser) -> int:
    """An integer that fits `i64` (tiles are stored as `array<i64>`); a located error otherwise."""
    start = parser.pos
    value = parser.parse_integer()
    if not I64_MIN <= value <= I64_MAX:
        parser.raise_error(
            f"integer {value} is out of range of i64 [{I64_MIN}, {I64_MAX}]", start, parser.pos
        )
    return value


def _ints(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: _i64(parser))


def _rows(parser: AttrParser) -> list[list[int]]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: _ints(parser))


@irdl_attr_definition
class TileAttr(ParametrizedAttribute):
    """
    Where one tensor's tile lies: `extent` device positions per device dim, starting at
    `starts[core] + chunk_starts[chunk]`. Example (4, 64) fp16 on 2 cores, rows 0-1 and 2-3:
    `#ktir.tile<extent = [1, 2, 64], starts = [[0, 0, 0], [0, 2, 0]], chunk_starts = [[0, 0, 0]]>`.
    """

    name = "ktir.tile"

    extent_attr: DenseArrayBase
    starts_attr: DenseArrayBase
    chunk_starts_attr: DenseArrayBase

    @staticmethod
    def make(
        extent: Sequence[int], starts: Sequence[Sequence[int]], chunk_starts: Sequence[Sequence[int]]
    ) -> TileAttr:
        """Build from nested lists (one row per core, one row per chunk)."""
        flat = [v for row in starts for v in row]
        chunks = [v for row in chunk_starts for v in row]
        return TileAttr(
            DenseArrayBase.from_list(i64, list(extent)),
            DenseArrayBase.from_list(i64, flat),
            DenseArrayBase.from_list(i64, chunks),
        )

    @property
    def extent(self) -> tuple[int, ...]:
        """Device positions per device dim."""
        return tuple(int(v) for v in self.extent_array)

    @property
    def extent_array(self) -> np.ndarray:
        """`extent` as a NumPy vector."""
        return np.frombuffer(self.extent_attr.data.data, dtype=np.int64)

    @property
    def starts_array(self) -> np.ndarray:
        """`starts` as a (cores, rank) NumPy array."""
        return np.frombuffer(self.starts_attr.data.data, dtype=np.int64).reshape(-1, len(self.extent_array))

    @property
    def chunk_starts_array(self) -> np.ndarray:
        """`chunk_starts` as a (chunks, rank) NumPy array."""
        return np.frombuffer(self.chunk_starts_attr.data.data, dtype=np.int64).reshape(
            -1, len(self.extent_array)
        )

    @property
    def whole_extent(self) -> tuple[int, ...]:
        """
        The extent of a core's whole slice: the box from the core's start over every chunk's
        box. Example: extent [4, 128, 64] with chunk starts [0, 0, 0] and [4, 0, 0] (two K
        chunks of 4 sticks) gives [8, 128, 64].
        """
        ends = self.chunk_starts_array.max(axis=0) + self.extent_array
        return tuple(int(v) for v in ends)

    def window(self, chunk: int) -> tuple[slice, ...]:
        """Chunk `chunk`'s box inside a buffer holding the core's whole slice (`whole_extent`)."""
        first = self.chunk_starts_array[chunk]
        return tuple(slice(int(s), int(s) + int(e)) for s, e in zip(first, self.extent_array, strict=True))

    @property
    def starts(self) -> list[tuple[int, ...]]:
        """The tile's first device position on each core."""
        return [tuple(int(v) for v in row) for row in self.starts_array]

    @property
    def chunk_starts(self) -> list[tuple[int, ...]]:
        """The offset of each chunk inside the core's slice."""
        return [tuple(int(v) for v in row) for row in self.chunk_starts_array]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        """`<extent = [..], starts = [[..], ..], chunk_starts = [[..], ..]>`."""
        with parser.in_angle_brackets():
            parser.parse_keyword("extent")
            parser.parse_punctuation("=")
            extent = _ints(parser)
            parser.parse_punctuation(",")
            parser.parse_keyword("starts")
            parser.parse_punctuation("=")
            starts = _rows(parser)
            parser.parse_punctuation(",")
            parser.parse_keyword("chunk_starts")
            parser.parse_punctuation("=")
            chunk_starts = _rows(parser)
        tile = cls.make(extent, starts, chunk_starts)
        return (tile.extent_attr, tile.starts_attr, tile.chunk_starts_attr)

    def print_parameters(self, printer: Printer) -> None:
        """Print as `parse_parameters` reads."""

        def rows(values: list[tuple[int, ...]]) -> str:
            return "[" + ", ".join("[" + ", ".join(map(str, r)) + "]" for r in values) + "]"

        extent = ", ".join(map(str, self.extent))
        printer.print_string(
            f"<extent = [{extent}], starts = {rows(self.starts)}, chunk_starts = {rows(self.chunk_starts)}>"
        )

    def verify(self) -> None:
        rank = len(self.extent)
        if rank == 0 or any(e < 1 for e in self.extent):
            raise VerifyException("a tile's extent must be non-empty and positive")
        for what, attr in (("starts", self.starts_attr), ("chunk_starts", self.chunk_starts_attr)):
            count = len(cast("DenseArrayBase[IntegerType]", attr).get_values())
            if count == 0 or count % rank:
                raise VerifyException(f"tile {what} must be rows of {rank} coordinates")
            if any(int(v) < 0 for v in cast("DenseArrayBase[IntegerType]", attr).get_values()):
                raise VerifyException(f"tile {what} must be non-negative")


#### CPU fallback arguments ####


@irdl_attr_definition
class OperandRefAttr(ParametrizedAttribute):
    """
    `#ktir.operand<i>`: in a `ktir.cpu_fallback` argument list, the op's operand number `i`.
    """

    name = "ktir.operand"
    index: IntAttr

    def __init__(self, index: int) -> None:
        super().__init__(IntAttr(index))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (IntAttr(parser.parse_integer(allow_negative=False, allow_boolean=False)),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.index.data}>")

    def verify(self) -> None:
        if self.index.data < 0:
            raise VerifyException(f"#ktir.operand index must be non-negative, not {self.index.data}")


def operand_refs(attr: Attribute) -> list[int]:
    """Every `#ktir.operand<i>` index inside `attr` (arrays and dictionaries are searched)."""
    if isinstance(attr, OperandRefAttr):
        return [attr.index.data]
    if isinstance(attr, ArrayAttr):
        return [i for element in attr.data for i in operand_refs(element)]
    if isinstance(attr, DictionaryAttr):
        return [i for element in attr.data.values() for i in operand_refs(element)]
    return []


ATTRIBUTES = [TiledLayoutAttr, DeviceDTypeAttr, OperandRefAttr, TileAttr, ComputeUnitAttr, CombineKindAttr]
"""The attributes the dialect registers."""
