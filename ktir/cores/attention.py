"""
How long an attention kernel (`ktir.attention`) runs under a work division and its chunking,
estimated from the costs the simulator charges (`ktir.hardware.cost_model`), so that
`ktir-divide-work` chooses attention's division for time, as `ktir.cores.dataflow` does a
matmul's.

A core takes whole key ranges and head sizes; a division splits batch (`b0`), query heads (`h`,
`[H, G]` flattened; key head `h // G`) and queries (`s`) over the cores, and the core walks its
slice in chunks (`ktir.cores.chunking`). What differs between divisions:

- **Balance.** Under `causal c` a query sees only the keys up to its position, and the kernel
  skips the 64 x 64 blocks none of a block's queries sees (`cost_model.attention_pairs`): split
  by queries, the core with the last rows works longest. Split by batch and heads, every core
  does the same work.
- **Traffic.** A key and value head is read once per broadcast cohort of the cores that hold
  it, and again by every chunk that loads it (`ktir.cores.chunking.load_bytes`): chunks that
  cut a group of query heads reload its key head.
- **Pipeline.** The first chunk's load and the last chunk's store overlap nothing.

Worked example, Llama-3.2-1B's prefill at batch 8 (8 key heads in groups of 4, 512 queries over
a 2048-position cache, causal): `{h: 32}` gives each core one query head of all 8 sequences, in
8 chunks of one sequence each; the 4 cores of a group read a key head in one cohort, so every
byte crosses LPDDR5 once (50 MB of loads), and every core has the same 1.18 M scores, whose
softmax keeps the SFU busy for 977 µs. The estimate, 1.545 M cycles (1,030 µs), is the first
chunk's load, the SFU work and the last chunk's store; the simulator takes 1.547 M.
"""

from __future__ import annotations

import math

import numpy as np

from ktir.cores.chunking import load_bytes
from ktir.cores.kernels import Kernel
from ktir.dialects import ktir_structured as st
from ktir.hardware import cost_model
from ktir.hardware.target import Target
from ktir.ir.values import shape_of


def attention_cycles(kernel: Kernel, cuts: dict[str, int], target: Target) -> float:
    """
    The estimated cycles of the attention kernel `kernel` (its op a `ktir.attention`) chunked
    `cuts`: the compute-bound time (the first chunk's loads, then the busiest core's work,
    `compute_cycles`, then the last chunk's store) or the memory-bound time (every load and
    store, with each chunk's DMA setups, then the last chunk's compute), whichever is longer.
    """
    space = kernel.space
    every, first = load_bytes(kernel, cuts, target)
    compute = compute_cycles(kernel, cuts, target)
    chunks = math.prod(cuts.values())
    stored = space.output.layout.device_bytes
    setups = chunks * (len([a for a in space.inputs if a is not None]) + 1) * target.dma_setup_cycles
    memory = cost_model.transfer_cycles(every + stored, target) + setups
    last_store = cost_model.transfer_cycles(stored / chunks, target)
    return max(cost_model.transfer_cycles(first, target) + compute + last_store, memory + compute / chunks)


def compute_cycles(kernel: Kernel, cuts: dict[str, int], target: Target) -> float:
    """
    The busiest core's PE-array and SFU cycles over its chunks, as the simulator charges each
    chunk (`cost_model.attention_cycles` on the scores its queries see). The PE arrays run a
    chunk while the SFU works on the one before, unless the chunks walk keys with an online
    softmax: then each chunk's matmuls wait for the SFU to rescale the accumulator.
    """
    op = kernel.op
    assert isinstance(op, st.AttentionOp)
    space, splits = kernel.space, kernel.splits
    q, k, v = (shape_of(x.type) for x in (op.q, op.k, op.v))
    batch, heads, rows = (space.sizes[d] // (splits[d] * cuts[d]) for d in ("b0", "h", "s"))
    # The first query of each chunk along s of each core: (cores, chunks along s).
    starts = np.array([p["s"] * cuts["s"] for p in kernel.slices])[:, None] + np.arange(cuts["s"])
    starts = starts * rows
    causal = None if op.causal is None else op.causal.value.data
    pairs = cost_model.attention_pairs(starts.reshape(-1), rows, np.zeros(starts.size), k[2], causal)
    busiest = float(np.max(pairs.reshape(starts.shape).sum(axis=1)))
    group = min(heads, q[2])
    tile = (batch, heads // group, group, rows)
    element_bytes = space.output.layout.device_dtype.element_bytes
    pt, sfu, _, _ = cost_model.attention_cycles(tile, busiest, q[4], v[3], element_bytes, target)
    # Chunks along batch and heads repeat the query chunks; key chunks split their scores.
    repeats = math.prod(c for d, c in cuts.items() if d not in ("s", "l"))
    pt, sfu = float(pt) * repeats, float(sfu) * repeats
    chunks = math.prod(cuts.values())
    if cuts["l"] > 1:
        sfu += float(cost_model.online_rescale_cycles(batch * heads * rows * v[3], target)) * chunks
        return pt + sfu
    return max(pt, sfu) + min(pt, sfu) / chunks


__all__ = ["attention_cycles", "compute_cycles"]
