"""The online softmax of `ktir.attention` over key chunks (ktir/reference/structured.py)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ktir.dialects.ktir import structured as ks
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module
from ktir.reference.structured import attention_partial, combine_online, normalized

Q, KV = "tensor<1x1x2x8x16xf16>", "tensor<1x1x24x16xf16>"


def attention_op(causal: str) -> ks.AttentionOp:
    """One group of 2 query heads, 8 queries over 24 keys of 16."""
    text = f"""
func.func @f(%q: {Q}, %k: {KV}, %v: {KV}) -> {Q} {{
  %o = ktir.attention %q, %k, %v scale 0.25 {causal}: {Q}, {KV}, {KV} -> {Q}
  return %o : {Q}
}}"""
    module = parse_module(make_context(), text)
    return next(o for o in module.walk() if isinstance(o, ks.AttentionOp))


@settings(max_examples=40, deadline=None)
@given(
    cuts=st.lists(st.integers(1, 23), max_size=4, unique=True),
    causal=st.sampled_from(["", "causal 0 ", "causal 10 "]),
    seed=st.integers(0, 2**16),
)
def test_any_split_of_the_keys_gives_the_whole_attention(cuts: list[int], causal: str, seed: int) -> None:
    """
    The states of the key chunks, combined in order, are the state over all keys: the attention
    agrees to 1e-12 in float64 (rounded to fp16 it can differ only where the exact value sits
    on a rounding boundary). Chunks a causal limit hides entirely from some rows add nothing.
    """
    rng = np.random.default_rng(seed)
    q = (rng.standard_normal((1, 1, 2, 8, 16)) * 2).astype(np.float16)
    k, v = ((rng.standard_normal((1, 1, 24, 16)) * 2).astype(np.float16) for _ in range(2))
    op = attention_op(causal)
    bounds = [0, *sorted(cuts), 24]
    state = None
    for start, stop in itertools.pairwise(bounds):
        part = attention_partial(op, [q, k[:, :, start:stop], v[:, :, start:stop]], key_start=start)
        state = part if state is None else combine_online(state, part)
    assert state is not None
    whole = attention_partial(op, [q, k, v])
    np.testing.assert_allclose(normalized(state), normalized(whole), rtol=1e-12, atol=1e-12)


def test_a_row_that_sees_no_key_gives_zeros() -> None:
    """Under `causal -20` the first queries see no key at all: their attention is 0, not NaN."""
    op = attention_op("causal -20 ")
    q = np.ones((1, 1, 2, 8, 16), np.float16)
    k = v = np.ones((1, 1, 24, 16), np.float16)
    first = attention_partial(op, [q, k[:, :, :12], v[:, :, :12]])
    second = attention_partial(op, [q, k[:, :, 12:], v[:, :, 12:]], key_start=12)
    out = normalized(combine_online(first, second))
    assert not np.isnan(out).any()
    assert (out == 0).all()  # query s sees keys <= s - 20: none for s < 8
