"""df16 numerics (ktir.layout.df16): IEEE-754 rules for a 1-6-9 binary format."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ktir.layout.df16 import (
    MAX_FINITE,
    MIN_NORMAL,
    MIN_SUBNORMAL,
    df16_bits,
    from_df16_bits,
    round_df16,
)

ALL_BITS = np.arange(1 << 16, dtype=np.uint16)


def test_format_constants():
    assert MAX_FINITE == 4_290_772_992.0  # (2 - 2^-9) * 2^31
    assert MIN_NORMAL == 2.0**-30
    assert MIN_SUBNORMAL == 2.0**-39


def test_every_encoding_decodes_and_encodes_back():
    values = from_df16_bits(ALL_BITS)
    nan = np.isnan(values)
    assert nan.sum() == 2 * 511  # all-ones exponent, mantissa not zero, either sign
    assert np.array_equal(df16_bits(values)[~nan], ALL_BITS[~nan])
    assert np.array_equal(round_df16(values)[~nan], values[~nan])  # every value is exact in float32


def test_known_encodings():
    assert int(df16_bits(1.0)) == 0x3E00
    assert int(df16_bits(-2.0)) == 0x8000 | (32 << 9)
    assert int(df16_bits(np.inf)) == 0x7E00
    assert int(df16_bits(MIN_SUBNORMAL)) == 1
    assert float(from_df16_bits(0x3E01)) == 1.0 + 2.0**-9


def test_ties_round_to_even():
    ulp = 2.0**-9
    assert float(round_df16(1.0 + ulp / 2)) == 1.0
    assert float(round_df16(1.0 + 3 * ulp / 2)) == 1.0 + 2 * ulp
    assert float(round_df16(1.0 + ulp / 2 + 2.0**-30)) == 1.0 + ulp


def test_overflow_and_underflow():
    top_ulp = 2.0 ** (31 - 9)
    assert float(round_df16(MAX_FINITE + top_ulp / 2 - 1)) == MAX_FINITE
    assert float(round_df16(MAX_FINITE + top_ulp / 2)) == np.inf  # the tie goes to the even 2^32
    assert float(round_df16(-1e12)) == -np.inf
    assert float(round_df16(MIN_SUBNORMAL / 2)) == 0.0  # a tie with zero, which is even
    assert np.signbit(round_df16(-MIN_SUBNORMAL / 4))
    assert np.isnan(round_df16(np.nan))


@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_rounding_is_nearest(x: float):
    r = float(round_df16(x))
    if abs(x) >= MAX_FINITE + 2.0 ** (31 - 9) / 2:
        assert r == np.copysign(np.inf, x)
        return
    # no df16 value is closer: within half the quantum of x's binade (2^-39 below the normals)
    exponent = max(int(np.frexp(x)[1]) - 1, -30)
    assert abs(r - x) <= 2.0 ** (exponent - 9) / 2
    assert float(round_df16(r)) == r


@given(st.lists(st.floats(allow_nan=False, width=32), min_size=2, max_size=2))
def test_rounding_is_monotone(pair: list[float]):
    low, high = sorted(pair)
    assert round_df16(low) <= round_df16(high)
