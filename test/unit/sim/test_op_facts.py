"""What a kernel's ops repeat at every chunk, worked out once (ktir/sim/op_facts.py)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import Float16Type, TensorType

from ktir.dialects.ktir.attributes import TileAttr
from ktir.sim.memory import SimulationError, check_box
from ktir.sim.op_facts import TileFacts, fitting_chunks


def _tile() -> TileAttr:
    """Two cores, three chunks of a (2, 4) box; the last chunk runs past row 6 on core 1."""
    return TileAttr.make([2, 4], [[0, 0], [2, 0]], [[0, 0], [2, 4], [4, 0]])


def _fits(first: np.ndarray, extent: tuple[int, ...], size: tuple[int, ...]) -> bool:
    try:
        check_box(first, extent, size, "the tensor", "here")
    except SimulationError:
        return False
    return True


@pytest.mark.parametrize("size", [(8, 8), (6, 8), (8, 4), (1, 1)])
def test_fitting_chunks_is_the_bounds_check_of_every_chunk(size: tuple[int, int]) -> None:
    """`fitting_chunks` answers, for all chunks at once, what `check_box` does chunk by chunk."""
    tile = _tile()
    fitting = fitting_chunks(tile.starts_array, tile.chunk_starts_array, tile.extent, size)
    expected = [_fits(tile.starts_array + c, tile.extent, size) for c in tile.chunk_starts_array]
    assert fitting.tolist() == expected


def test_tile_facts_are_the_attribute_decoded() -> None:
    """A chunk's starts and window equal the attribute's; `fits` is `fitting_chunks`, per size."""
    tile = _tile()
    facts = TileFacts.of(tile, TensorType(Float16Type(), [8, 8]))
    assert facts.extent == tile.extent and facts.elements == 8
    for chunk in range(3):
        assert np.array_equal(facts.first(chunk), tile.starts_array + tile.chunk_starts_array[chunk])
        assert facts.window(chunk) == tile.window(chunk)
    assert [facts.fits(c, (6, 8)) for c in range(3)] == [True, True, False]
    # From zero (a resident buffer holds the core's own slice): only the chunk offsets count.
    assert [facts.fits(c, (6, 8), from_zero=True) for c in range(3)] == [True, True, True]
    assert [facts.fits(c, (4, 8), from_zero=True) for c in range(3)] == [True, True, False]
    assert not facts.fits(3, (8, 8))  # past the last chunk: the caller's own check raises
