"""
Graph ops built as routine functions: a private `func.func` per op, marked with `ktir.routine`
(`ktir.dialects.ktdp.ROUTINE_ATTRIBUTE`), and a `func.call` where the op runs.

ktir's chip model times some graph ops as device routines with costs of their own: reductions,
softmax and the norms at calibrated rates, attention by its key blocks, SiLU, sigmoid and GELU
by their pass counts. Their `linalg` lowering has more ops than that (RMSNorm's square, sum,
divide, add, root, divide and scale), which ktir's ktdp engine would time one by one. Outlined
and marked, the call is timed as ktir times the op (`ktir.ktdp_engine.routines`) while its body, run
on the call's arguments, gives the values. Other tools see a private function and a call.

```mlir
%r0 = func.call @k0_rms_norm_rms_norm0(%t3, %t4) : (tensor<24x128xf16>, tensor<128xf16>) -> tensor<24x128xf16>
...
func.func private @k0_rms_norm_rms_norm0(%p0: tensor<24x128xf16>, %p1: tensor<128xf16>)
    -> tensor<24x128xf16> attributes {ktir.routine = "ktir.rms_norm"} {
  ...
  func.return %t9 : tensor<24x128xf16>
}
```
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, IndexType, StringAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from ktir.dialects.ktdp import ROUTINE_ATTRIBUTE
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.export.to_ktdp.emitter import Emitter, HostTensor

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
Graph ops built as routines: those ktir times by a cost of their own (module docstring), and
a pad, whose fill does not wait for its input as ktir's pad does.
"""

Body = Callable[[Emitter, list[HostTensor], list[SSAValue]], HostTensor]
"""Builds an op's lowering: (routine's emitter, its tensor parameters, its index parameters) -> result."""


def outlined(
    emitter: Emitter,
    op: Operation,
    operands: Sequence[HostTensor],
    body: Body,
    indices: Sequence[SSAValue] = (),
    attributes: Mapping[str, Attribute] | None = None,
) -> HostTensor:
    """
    `op` on `operands` (and the `index` values `indices`) as a call of a new routine whose body
    `body` builds; `attributes` are added to the routine's.
    """
    index = len(emitter.routines)
    emitter.routines.append(None)  # its place (and number), before the routines its body calls
    name = f"{emitter.function}_{op.name.removeprefix('ktir.')}{index}"
    block = Block(arg_types=[*(t.type for t in operands), *(IndexType() for _ in indices)])
    inner = Emitter.at_end(block, emitter.function, emitter.routines)
    for arg in block.args[: len(operands)]:
        inner.name([arg], "p")
    for arg in block.args[len(operands) :]:
        inner.name([arg], "i")
    params = [HostTensor(a, t.read_as) for a, t in zip(block.args, operands, strict=False)]
    result = body(inner, params, list(block.args[len(operands) :]))
    inner.add(func.ReturnOp(result.value))
    signature = FunctionType.from_lists(block.arg_types, [result.type])
    routine = func.FuncOp(name, signature, Region(block), "private")
    routine.attributes[ROUTINE_ATTRIBUTE] = StringAttr(op.name)
    routine.attributes.update(attributes or {})
    emitter.routines[index] = routine
    arguments = [*(t.value for t in operands), *indices]
    return emitter.tensor(func.CallOp(name, arguments, [result.type]), "r")


__all__ = ["ROUTINE_OPS", "Body", "outlined"]
