"""`ktir.ir.diagnostics.verify_module`: its work grows linearly with the ops of a block."""

from __future__ import annotations

import cProfile
import pstats

from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module, verify_module

TYPE = "tensor<64x64xf16>"


def _chain(ops: int) -> str:
    """A function of `ops` adds, each reading the one before it (every operand in the block)."""
    lines = [f"func.func @f(%v0: {TYPE}) -> {TYPE} {{"]
    lines += [f"  %v{i + 1} = ktir.add %v{i}, %v{i} : {TYPE}, {TYPE} -> {TYPE}" for i in range(ops)]
    lines += [f"  return %v{ops} : {TYPE}", "}"]
    return "\n".join(lines)


def _verify_calls(ops: int) -> int:
    """Python calls one `verify_module` of the chain makes (deterministic, unlike time)."""
    module = parse_module(make_context(), _chain(ops), "<chain>")
    profile = cProfile.Profile()
    diagnostics = profile.runcall(verify_module, module)
    assert diagnostics == []
    return pstats.Stats(profile).total_calls


def test_verifying_twice_the_ops_does_twice_the_work() -> None:
    # The dominance check numbers a block's ops once; numbering them again for every operand
    # made a 32-layer Llama's import 3.4x the Python calls of a 16-layer one.
    small, large = _verify_calls(300), _verify_calls(600)
    assert large / small < 2.1, (small, large)
