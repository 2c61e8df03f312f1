"""tools/ktdp_roundtrip.py: the emission round trip of a core-level file, from the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import compiled, swiglu_mlp
from test_compile_models import MODELS

import ktir
from ktir.ir.diagnostics import module_text
from ktir.tools.ktdp_roundtrip import KernelRoundTrip, _line, main, roundtrip_module


def test_each_kernel_is_compared_and_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model, _, args, kwargs = MODELS["mlp"]()
    path = tmp_path / "mlp.mlir"
    # planned at the datasheet's rates: at the card's the planner splits K in the second kernel,
    # which ktir-emit-ktdp does not write yet (test_ktdp_emit.py)
    module = ktir.compile(model, args, kwargs, target="spyre-datasheet").module
    path.write_text(module_text(module), encoding="utf-8")
    assert main([str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("k0_fused: equal, cycles ktir ")
    assert lines[-1] == (
        "2 of 2 kernels written, 2 with equal outputs, 2 with ktir's cycles, "
        "2 with ktir's bytes, compulsory bytes and FLOPs too"
    )


def test_an_account_the_engines_disagree_on_is_printed() -> None:
    charged = {
        "cycles": 10.0,
        "bytes": 4096.0,
        "compulsory_bytes": 4096.0,
        "flops": 64.0,
        "matmul_flops": 0.0,
    }
    result = KernelRoundTrip("k0", equal=True, ktir=charged, ktdp=charged | {"flops": 128.0})
    assert result.same_cycles and result.differing == ["flops"]
    assert _line(result) == "k0: equal, cycles ktir 10 ktdp 10, flops ktir 64 ktdp 128"


def test_a_file_that_does_not_parse_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @f( {\n", encoding="utf-8")
    assert main([str(path)]) == 1
    assert "bad.mlir:1:" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.mlir")]) == 1


@pytest.mark.slow
def test_a_resident_tensor_is_written_and_round_trips() -> None:
    """
    SwiGLU's result handed off in LX to the down projection (256 tokens, 256 -> 2048 -> 256 on
    32 cores, ktir.cores.handoff): the producer's stores and the consumer's loads are access
    tiles on a distributed view of the 32 cores' LX; both kernels give ktir's bits (the
    producer's LX contents, the consumer's output) and its cycles, bytes and FLOPs.
    """
    module = compiled(swiglu_mlp(256, 256, 2048), 32)
    assert "ktir.lx_alloc address 0 resident" in module_text(module)
    producer, consumer = roundtrip_module(module)
    assert producer.skipped is None and consumer.skipped is None
    assert producer.equal and consumer.equal
    assert producer.differing == []
    # The consumer's 2 output tiles share one LX accumulator, which ktir zeroes for tile 1 only
    # once tile 0's store has read it: the zero and the ring's sum name that buffer of one slot
    # (`ktir.buffer`), so ktdp's tile 1 zero waits too (20,052 against ktir's 20,066 cycles
    # while it was a new tensor, zeroed at once).
    assert consumer.differing == []


@pytest.mark.slow
def test_a_resident_tensor_stored_after_its_producers_tile_loop_is_written() -> None:
    """
    1,024 tokens: the producer's last output tile is stored after its pipelined loop, through
    the view made at the kernel's top level (found by review: the view was made inside the loop)."""
    module = compiled(swiglu_mlp(1024, 256, 2048), 32)
    results = roundtrip_module(module)
    assert len(results) == 2 and all(r.skipped is None and r.equal for r in results), results
