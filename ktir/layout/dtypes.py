"""
The one table of element formats: for every element type ktir knows, its MLIR name, its PyTorch
name, the NumPy dtype that stores it on the host, and the Spyre device data format (with bytes
and elements per 128-byte stick). Every other dtype map in ktir is derived from `FORMATS`.

Example: the row of `bf16` says PyTorch calls it `bfloat16`, NumPy stores it as `float32`
(NumPy has no bf16; the values stay bf16-representable), and the device keeps it as
`SEN169_FP16`, 2 bytes, 64 elements per stick.

```python
format_of_element("i64").device  # DeviceDType.IEEE_INT32: the device stores int64 as int32
HOST_TO_DEVICE_DTYPE["float16"]  # DeviceDType.SEN169_FP16
```
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from ktir.hardware.target import SPYRE


class DeviceDType(StrEnum):
    """Device data formats (the reference's `DataFormats`)."""

    SEN169_FP16 = "SEN169_FP16"
    IEEE_FP32 = "IEEE_FP32"
    IEEE_INT32 = "IEEE_INT32"
    SENINT8 = "SENINT8"
    SEN143_FP8 = "SEN143_FP8"
    SEN152_FP8 = "SEN152_FP8"

    @property
    def element_bytes(self) -> int:
        """Bytes per element on the device."""
        return _DEVICE_FORMATS[self][0]

    @property
    def elems_per_stick(self) -> int:
        """Elements in one 128-byte stick: 64 for fp16, 32 for fp32/int32, 128 for int8/fp8."""
        return SPYRE.stick_bytes // self.element_bytes

    @property
    def numpy_dtype(self) -> np.dtype[Any]:
        """NumPy type of a device buffer; fp8 buffers hold raw bit patterns as uint8."""
        return np.dtype(_DEVICE_FORMATS[self][1])


_DEVICE_FORMATS: dict[DeviceDType, tuple[int, str]] = {
    DeviceDType.SEN169_FP16: (2, "float16"),
    DeviceDType.IEEE_FP32: (4, "float32"),
    DeviceDType.IEEE_INT32: (4, "int32"),
    DeviceDType.SENINT8: (1, "int8"),
    DeviceDType.SEN143_FP8: (1, "uint8"),
    DeviceDType.SEN152_FP8: (1, "uint8"),
}
"""Device format -> (bytes per element, NumPy dtype of a device buffer)."""


@dataclass(frozen=True)
class ElementFormat:
    """One element type across the stack (a row of `FORMATS`)."""

    mlir: str
    """The MLIR element type as printed: `f16`, `i1`, `f8E4M3FN`."""
    torch: str | None
    """The PyTorch dtype name: `float16`, `bool`, `float8_e4m3fn`; None: PyTorch has none (df16)."""
    numpy: str | None
    """The NumPy dtype holding host values (bf16 as float32); None: no host storage."""
    device: DeviceDType | None
    """The Spyre data format; None: not storable on the device."""
    imported: bool
    """Whether the FX importer accepts tensors of this dtype."""


FORMATS: tuple[ElementFormat, ...] = (
    ElementFormat("f16", "float16", "float16", DeviceDType.SEN169_FP16, True),
    ElementFormat("bf16", "bfloat16", "float32", DeviceDType.SEN169_FP16, True),
    ElementFormat("i1", "bool", "bool", DeviceDType.SEN169_FP16, True),
    ElementFormat("f32", "float32", "float32", DeviceDType.IEEE_FP32, True),
    ElementFormat("i32", "int32", "int32", DeviceDType.IEEE_INT32, True),
    # The reference stack stores int64 as int32 (with a one-time downcast warning).
    ElementFormat("i64", "int64", "int64", DeviceDType.IEEE_INT32, True),
    ElementFormat("i8", "int8", "int8", DeviceDType.SENINT8, True),
    # NumPy has no fp8: host values are float16 holding e4m3-representable values (every e4m3
    # value is exact in fp16), as bf16 is stored in float32.
    ElementFormat("f8E4M3FN", "float8_e4m3fn", "float16", DeviceDType.SEN143_FP8, True),
    ElementFormat("f8E5M2", "float8_e5m2", None, DeviceDType.SEN152_FP8, False),
    ElementFormat("f64", "float64", "float64", None, True),
    # IBM's df16 (`!spyreop.df16`, 1-6-9), the layout of the device's SEN169 format. NumPy has no
    # df16: values are float32 holding df16-representable values (`ktir.layout.df16`). ktir's
    # device buffers of SEN169 hold f16's IEEE values, so df16 has no device storage here yet: it
    # is a compute type of ktdp programs (values inside `linalg` bodies and tensors between them).
    ElementFormat("!spyreop.df16", None, "float32", None, False),
    ElementFormat("i16", "int16", "int16", None, False),
)
"""Every element type ktir knows; device-storable ones first, in the order messages list them."""

_BY_MLIR = {row.mlir: row for row in FORMATS}

ELEMENT_TYPE_TO_DEVICE_DTYPE: dict[str, DeviceDType] = {
    row.mlir: row.device for row in FORMATS if row.device is not None
}
"""MLIR element type (as printed) -> Spyre device data format."""

HOST_TO_DEVICE_DTYPE: dict[str, DeviceDType] = {
    row.torch: row.device for row in FORMATS if row.device is not None and row.torch is not None
}
"""Host dtype name (torch spelling) -> device data format."""


@functools.lru_cache(maxsize=256)
def format_of_element(element_type: object) -> ElementFormat | None:
    """The row of an MLIR element type (an attribute or its printed name); None if unknown."""
    return _BY_MLIR.get(str(element_type))  # cached: printing an attribute costs microseconds


def numpy_dtype(element_type: object) -> np.dtype[Any]:
    """
    The NumPy storage dtype of an MLIR element type (`FORMATS`).

    bf16 has no NumPy dtype: it is stored as float32 holding bf16-representable values.
    Example: `numpy_dtype(f16)` is `float16`; `numpy_dtype(i1)` is `bool`.
    """
    row = format_of_element(element_type)
    if row is None or row.numpy is None:
        raise TypeError(f"element type {element_type} has no NumPy storage")
    return np.dtype(row.numpy)


__all__ = [
    "ELEMENT_TYPE_TO_DEVICE_DTYPE",
    "FORMATS",
    "HOST_TO_DEVICE_DTYPE",
    "DeviceDType",
    "ElementFormat",
    "format_of_element",
    "numpy_dtype",
]


def round_binary(values: Any, mantissa_bits: int, min_exponent: int) -> np.ndarray:
    """
    `values` (float64) rounded to the nearest number of a binary float format with
    `mantissa_bits` fraction bits whose least normal binary exponent is `min_exponent`, ties to
    even; the format's largest value and its NaN and infinities are the caller's to apply.

    A value 2^e x 1.f has the quantum 2^(e - mantissa_bits), the subnormals (below
    2^min_exponent) the quantum 2^(min_exponent - mantissa_bits); the scaling by a power of two
    and `rint` are exact in float64, so the result does not depend on the CPU. Example: with 3
    fraction bits from 2^-6 (fp8 e4m3), 0.3 -> 0.3125.
    """
    x = np.asarray(values, dtype=np.float64)
    _, exponent = np.frexp(x)  # x = m * 2^exponent, 0.5 <= |m| < 1: the binary exponent is exponent - 1
    quantum = np.maximum(exponent - 1, min_exponent) - mantissa_bits
    with np.errstate(over="ignore"):  # float64 magnitudes past 2^1015 become infinite, as they would
        return np.ldexp(np.rint(np.ldexp(x, -quantum)), quantum)
