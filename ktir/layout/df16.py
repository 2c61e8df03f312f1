"""
The numerics of IBM's `df16` (`!spyreop.df16`): 1 sign, 6 exponent and 9 mantissa bits, as
upstream KTIR defines it, "the IEEE-754 binary format with the parameters 1-6-9". ktir reads
that literally, with IEEE-754's rules for a binary format of those widths:

- exponent bias 31; normal numbers 2^-30 to (2 - 2^-9) * 2^31 (about 9.31e-10 to 4.29e9);
- subnormals down to 2^-39 (about 1.82e-12), zero of either sign;
- the all-ones exponent holds the infinities (mantissa 0) and NaNs (mantissa not 0);
- rounding to nearest, ties to even; a magnitude that rounds past the largest finite value
  becomes infinity.

Every df16 value is exact in float32 (10 significant bits, exponents inside float32's), so
ktir holds df16 values as float32 arrays and rounds each result with `round_df16`.

Example: 1 + 2^-10 is a tie between 1 and 1 + 2^-9 and rounds to the even 1.0;
`df16_bits(1.0)` is 0x3E00 (exponent 31, mantissa 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ktir.layout.dtypes import round_binary

MANTISSA_BITS = 9
EXPONENT_BITS = 6
BIAS = 31
MIN_NORMAL_EXPONENT = 1 - BIAS  # -30
MAX_EXPONENT = (1 << EXPONENT_BITS) - 2 - BIAS  # 31
MAX_FINITE = (2.0 - 2.0**-MANTISSA_BITS) * 2.0**MAX_EXPONENT
"""The largest finite df16, 4,290,772,992."""
MIN_NORMAL = 2.0**MIN_NORMAL_EXPONENT
MIN_SUBNORMAL = 2.0 ** (MIN_NORMAL_EXPONENT - MANTISSA_BITS)


def round_df16(values: Any) -> np.ndarray:
    """
    `values` rounded to the nearest df16 (ties to even), as float32.

    The quantum of a value is 2^(e - 9) for its binary exponent e, never below the subnormal
    quantum 2^-39 (`ktir.layout.dtypes.round_binary`). NaN stays NaN, infinities stay, overflow
    becomes infinity of the value's sign.
    """
    x = np.asarray(values, dtype=np.float64)
    rounded = round_binary(x, MANTISSA_BITS, MIN_NORMAL_EXPONENT)
    rounded = np.where(np.abs(rounded) > MAX_FINITE, np.copysign(np.inf, x), rounded)
    return np.where(np.isfinite(x), rounded, x).astype(np.float32)


def df16_bits(values: Any) -> np.ndarray:
    """The df16 encodings (uint16) of `values` after `round_df16`; NaN encodes as 0x7FFF."""
    x = round_df16(values).astype(np.float64)
    sign = np.signbit(x).astype(np.uint16) << 15
    magnitude = np.abs(x)
    _, exponent = np.frexp(magnitude)
    biased = np.clip(exponent - 1 + BIAS, 0, 63)  # 0 for subnormals and zero
    normal = magnitude >= MIN_NORMAL
    unit = np.where(normal, np.ldexp(1.0, exponent - 1 - MANTISSA_BITS), MIN_SUBNORMAL)
    with np.errstate(invalid="ignore"):
        mantissa = np.where(normal, magnitude / unit - (1 << MANTISSA_BITS), magnitude / unit)
    fields = np.where(normal, biased, 0).astype(np.uint16) << MANTISSA_BITS
    bits = sign | fields | np.where(np.isfinite(x), mantissa, 0).astype(np.uint16)
    bits = np.where(np.isinf(x), sign | np.uint16(0x7E00), bits)
    return np.where(np.isnan(x), np.uint16(0x7FFF), bits).astype(np.uint16)


def from_df16_bits(bits: Any) -> np.ndarray:
    """The values (float32) of df16 encodings."""
    b = np.asarray(bits, dtype=np.uint16).astype(np.int64)
    sign = np.where(b >> 15, -1.0, 1.0)
    biased = (b >> MANTISSA_BITS) & 0x3F
    mantissa = b & ((1 << MANTISSA_BITS) - 1)
    normal = np.ldexp(1.0 + mantissa / 2.0**MANTISSA_BITS, biased - BIAS)
    subnormal = mantissa * MIN_SUBNORMAL
    special = np.where(mantissa == 0, np.inf, np.nan)
    magnitude = np.where(biased == 0, subnormal, np.where(biased == 63, special, normal))
    return (sign * magnitude).astype(np.float32)
