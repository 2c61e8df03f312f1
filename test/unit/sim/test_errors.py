"""
`ktir.sim` run-time checks: a core-level program that breaks the chip's rules raises a
`SimulationError` naming the kernel, the op, a core and the sizes involved.

Faults are injected by editing the printed core-level IR of a compiled 100 x 70 exp on 4 cores
and parsing it again without running any pass (the static check would reject some of them).
Its single kernel is:

    %3 = ktir.lx_alloc address 0 : memref<1x2x25x64xf16, "lx">       (input staging, 6400 bytes)
    %4 = ktir.lx_alloc address 6400 : memref<1x2x25x64xf16, "lx">    (output staging)
    ktir.dma_load %0 -> %3 ... tile 0      extent [2, 25, 64], core c starts at row 25 c
    ktir.compute sfu ... ins(%3) outs(%4) tiles [0, 1]
    ktir.dma_store %4 -> %1 ... tile 1     extent [2, 25, 64], core c starts at row 25 c
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import compiled, unary
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

import ktir
import ktir.sim
from ktir.hardware.target import SPYRE
from ktir.ir.context import make_context
from ktir.ir.diagnostics import ExecutionError
from ktir.sim import SimulationError

_KERNEL = "kernel 0 (%y = ktir.exp)"
_TILE = "#ktir.tile<"


@pytest.fixture(scope="module")
def core_text() -> str:
    """The printed core-level IR of the 100 x 70 exp on 4 cores."""
    text = str(compiled(unary("ktir.exp", "100x70"), 4))
    assert "ktir.lx_alloc address 6400 : memref<1x2x25x64xf16" in text
    assert text.count(_TILE) == 2
    return text


def parse(text: str) -> ModuleOp:
    """Parse core-level text as is: no verification, no passes."""
    return Parser(make_context(), text).parse_module()


def run(text: str) -> None:
    """Simulate the (edited) core-level text on an input of ones."""
    ktir.sim.simulate(parse(text), [np.ones((100, 70), np.float16)])


def error_of(text: str) -> str:
    """The message of the SimulationError that running `text` raises."""
    with pytest.raises(SimulationError) as info:
        run(text)
    return str(info.value)


def edit_tile(text: str, index: int, old: str, new: str) -> str:
    """Replace the first `old` inside tile attribute number `index` (0: the load's, 1: the store's)."""
    start = -1
    for _ in range(index + 1):
        start = text.index(_TILE, start + 1)
    end = text.index(">", start)
    tile = text[start:end]
    assert old in tile
    return text[:start] + tile.replace(old, new, 1) + text[end:]


def test_the_unedited_program_runs(core_text: str) -> None:
    """The baseline the faults are injected into is valid and computes exp."""
    result = ktir.sim.simulate(parse(core_text), [np.zeros((100, 70), np.float16)])
    assert np.array_equal(result.outputs[0], np.ones((100, 70), np.float16))


def test_lx_capacity_exceeded(core_text: str) -> None:
    """A 6400-byte buffer at 1,677,700 ends past the 1,677,721 usable LX bytes."""
    assert SPYRE.lx_usable_bytes == 1_677_721
    text = core_text.replace("ktir.lx_alloc address 6400", "ktir.lx_alloc address 1677700")
    message = error_of(text)
    assert _KERNEL in message and "ktir.lx_alloc" in message
    assert "cores 0-3" in message
    assert "6400 bytes at address 1677700" in message and "1684100 > 1677721" in message


def test_lx_overlap_of_live_buffers(core_text: str) -> None:
    """Moving the output staging buffer to 3200 overlaps the input's [0, 6400)."""
    text = core_text.replace("ktir.lx_alloc address 6400", "ktir.lx_alloc address 3200")
    message = error_of(text)
    assert _KERNEL in message and "ktir.lx_alloc" in message and "cores 0-3" in message
    assert "[3200, 9600)" in message and "[0, 6400)" in message


def test_dma_load_out_of_bounds(core_text: str) -> None:
    """Core 3's load box moved from row 75 to row 76 ends at row 101 of 100."""
    text = edit_tile(core_text, 0, "[0, 75, 0]]", "[0, 76, 0]]")
    message = error_of(text)
    assert _KERNEL in message and "ktir.dma_load tile 0" in message
    assert "out of bounds on core 3" in message
    assert "box [0, 76, 0] + [2, 25, 64] does not fit the tensor of size [2, 100, 64]" in message


def test_output_tile_out_of_bounds(core_text: str) -> None:
    """
    Core 3's output box moved from row 75 to row 80 ends at row 105 of 100: the compute, the
    first op to place tile 1, reports it (before the store would).
    """
    text = edit_tile(core_text, 1, "[0, 75, 0]]", "[0, 80, 0]]")
    message = error_of(text)
    assert _KERNEL in message and "ktir.compute" in message and "tile 1" in message
    assert "out of bounds on core 3" in message
    assert "box [0, 80, 0] + [2, 25, 64] does not fit the tensor of tile 1 of size [2, 100, 64]" in message


def test_read_of_lx_never_written(core_text: str) -> None:
    """Without its dma_load the compute reads an input staging buffer nothing wrote."""
    lines = core_text.splitlines()
    text = "\n".join(line for line in lines if "ktir.dma_load" not in line)
    assert len(text.splitlines()) == len(lines) - 1
    message = error_of(text)
    assert _KERNEL in message and "ktir.compute" in message
    assert "core 0 reads LX bytes [0, 6400) slot 0" in message


def test_store_of_lx_never_written(core_text: str) -> None:
    """Without its compute (a 5-line region) the store reads an output buffer nothing wrote."""
    lines = core_text.splitlines()
    first = next(i for i, line in enumerate(lines) if "ktir.compute" in line)
    assert lines[first + 4].strip() == "}"
    text = "\n".join(lines[:first] + lines[first + 5 :])
    message = error_of(text)
    assert _KERNEL in message and "ktir.dma_store" in message
    assert "core 0 reads LX bytes [6400, 12800) slot 0" in message


def test_two_cores_write_the_same_device_bytes(core_text: str) -> None:
    """Core 1's output box moved onto core 0's (rows 0-24): both store the same sticks."""
    text = edit_tile(core_text, 1, "[0, 25, 0]", "[0, 0, 0]")
    message = error_of(text)
    assert _KERNEL in message and "ktir.dma_store tile 1" in message
    assert "cores 0 and 1 both write device bytes" in message
    assert "output box [(0, 2), (0, 25), (0, 64)] in one kernel" in message


def test_simulation_error_is_an_execution_error() -> None:
    """Callers that catch ExecutionError also catch the simulator's rule violations."""
    assert issubclass(SimulationError, ExecutionError)


@pytest.mark.parametrize("count", [0, 2])
def test_wrong_number_of_inputs(core_text: str, count: int) -> None:
    """@f takes one input; none or two is an ExecutionError saying so."""
    inputs = [np.ones((100, 70), np.float16)] * count
    with pytest.raises(ExecutionError, match=rf"@f takes 1 input\(s\), got {count}"):
        ktir.sim.simulate(parse(core_text), inputs)


def test_a_kernel_planned_for_more_cores_than_the_target_has_is_refused() -> None:
    """A program compiled for 8 cores run on a 2-core target: a located error, not a crash."""
    import dataclasses

    t = "tensor<64x256xf16>"
    text = f"func.func @f(%x: {t}) -> {t} {{\n  %y = ktir.exp %x : {t} -> {t}\n  return %y : {t}\n}}"
    module = compiled(text, 8)
    small = dataclasses.replace(SPYRE, cores=2)
    with pytest.raises(SimulationError, match="runs on 8 cores; the target 'spyre' has 2"):
        ktir.sim.simulate(module, [np.zeros((64, 256), np.float16)], target=small)
