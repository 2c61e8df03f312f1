"""
Graph ops written as routine functions: a private `func.func` per op, marked with
`ktir.routine` (`ktir.dialects.ktdp.ROUTINE_ATTRIBUTE`), and a `func.call` where the op runs.

ktir's chip model times some graph ops as device routines with costs of their own: reductions,
softmax and the norms at calibrated rates, attention by its key blocks, SiLU, sigmoid and GELU
by their pass counts. Their `linalg` lowering has more ops than that (RMSNorm's square, sum,
divide, add, root, divide and scale), which ktir's ktdp engine would time one by one. Outlined
and marked, the call is timed as ktir times the op (`ktir.ktdp.routines`) while its body, run
on the call's arguments, gives the values. Other tools see a private function and a call.

```mlir
%r0 = func.call @k0_rms_norm_rms_norm0(%t3, %t4) : (tensor<24x128xf16>, tensor<128xf16>) -> tensor<24x128xf16>
...
func.func private @k0_rms_norm_rms_norm0(%p0: tensor<24x128xf16>, %p1: tensor<128xf16>)
    -> tensor<24x128xf16> attributes {ktir.routine = "ktir.rms_norm"} {
  ...
  return %t9 : tensor<24x128xf16>
}
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import Operation

from ktir.dialects.ktdp import ROUTINE_ATTRIBUTE
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.export.ktdp_payload import HostTensor, Writer

ROUTINE_OPS: tuple[type[Operation], ...] = (
    ew.SigmoidOp,
    ew.SiluOp,
    ew.GeluOp,
    st.SumOp,
    st.MeanOp,
    st.MaxOp,
    st.MinOp,
    st.SoftmaxOp,
    st.RmsNormOp,
    st.LayerNormOp,
    st.AttentionOp,
    st.PadOp,
)
"""
Graph ops written as routines: those ktir times by a cost of their own (module docstring), and
a pad, whose fill does not wait for its input as ktir's pad does.
"""

Body = Callable[[Writer, list[HostTensor], list[str]], HostTensor]
"""Writes an op's lowering: (routine's writer, its tensor parameters, its index parameters) -> result."""


def outlined(
    writer: Writer,
    op: Operation,
    operands: Sequence[HostTensor],
    body: Body,
    indices: Sequence[str] = (),
    attributes: dict[str, str] | None = None,
) -> HostTensor:
    """
    `op` on `operands` (and the `index` values `indices`) as a call of a new routine whose body
    `body` writes; `attributes` are added to the routine's (name -> attribute text).
    """
    index = len(writer.routines)
    writer.routines.append("")  # its place (and number), before the routines its body calls
    name = f"@{writer.function}_{op.name.removeprefix('ktir.')}{index}"
    inner = Writer(function=writer.function, routines=writer.routines)
    params = [HostTensor(inner.fresh("p"), t.shape, t.element, t.read_as) for t in operands]
    index_params = [inner.fresh("i") for _ in indices]
    result = body(inner, params, index_params)
    inner.emit(f"return {result.name} : {result.type_text}")
    signature = [f"{p.name}: {p.type_text}" for p in params] + [f"{i}: index" for i in index_params]
    marks = ", ".join(
        f"{k} = {v}" for k, v in {ROUTINE_ATTRIBUTE: f'"{op.name}"', **(attributes or {})}.items()
    )
    head = f"func.func private {name}({', '.join(signature)}) -> {result.type_text}"
    writer.routines[index] = "\n".join([f"{head} attributes {{{marks}}} {{", *inner.lines, "}"])
    out = HostTensor(writer.fresh("r"), result.shape, result.element)
    arguments = ", ".join([*(t.name for t in operands), *indices])
    types = ", ".join([*(t.type_text for t in operands), *("index" for _ in indices)])
    writer.emit(f"{out.name} = func.call {name}({arguments}) : ({types}) -> {out.type_text}")
    return out


__all__ = ["ROUTINE_OPS", "Body", "outlined"]
