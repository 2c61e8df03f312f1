"""
`ktir-pad-matmul`: give every matmul/bmm a y operand whose K is a whole number of sticks.

The PT unit reads y in sticks along N, one K row per step, and always a whole stick of x's
K: for `K % elems_per_stick != 0` the tail of x's last stick is masked by the hardware, but
y must hold K rounded up to whole sticks, zero-filled, so that the padded products add
nothing (zero is neutral for multiply-accumulate). The pass pads y along K with `ktir.pad`
(value 0.0), keeping y's stick on N; x is left as is, and the reduction range stays x's K
(the matmul verifier accepts y's K rounded up to whole sticks). A matmul with K = 1 is an
outer product and becomes `ktir.mul` (the reference lowers it the same way).

```mlir
%r = ktir.matmul %x, %y : tensor<8x67xf16, #X>, tensor<67x128xf16, #Y> -> tensor<8x128xf16, #R>
// becomes
%p = ktir.pad %y low [0, 0] high [61, 0] {value = 0.0 : f64}
       : tensor<67x128xf16, #Y> -> tensor<128x128xf16, #P>
%r = ktir.matmul %x, %p : tensor<8x67xf16, #X>, tensor<128x128xf16, #P> -> tensor<8x128xf16, #R>
```

Runs after `ktir-insert-restickify` (y is then sticked on N); the pass is idempotent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, ModuleOp, NoneAttr, TensorType, f64, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from ktir.dialects.ktir.attributes import TiledLayoutAttr
from ktir.dialects.ktir.elementwise import MulOp
from ktir.dialects.ktir.structured import MatmulBase, PadOp, padded_k
from ktir.ir.diagnostics import op_error
from ktir.ir.values import device_dtype, encoding_of, shape_of
from ktir.layout import sticks
from ktir.layout.spyre import SpyreTensorLayout
from ktir.passes.verify_layouts import check_layouts_in_debug_mode


def padded_layout(y: SSAValue, shape: tuple[int, ...]) -> SpyreTensorLayout | None:
    """
    y's layout carried over to its padded `shape`: same dim order, so the stick stays on N.
    None when y has no layout (the pass then leaves the pad unencoded, like its input).
    """
    layout = encoding_of(y)
    if layout is None:
        return None
    source = shape_of(y.type)
    order = sticks.dim_order_of(layout, source)
    if order is not None:
        return SpyreTensorLayout(shape, layout.device_dtype, dim_order=list(order))
    stick = sticks.layout_stick(layout, source)
    return sticks.stick_layout(shape, device_dtype(y.type), sticks.SPARSE if stick is None else stick)


class PadMatmulK(RewritePattern):
    """Pad one matmul's y along K to whole sticks, or turn a K = 1 matmul into a `ktir.mul`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MatmulBase, rewriter: PatternRewriter) -> None:
        try:
            self._rewrite(op, rewriter)
        except ValueError as error:
            raise op_error(op, str(error)) from error

    @staticmethod
    def _rewrite(op: MatmulBase, rewriter: PatternRewriter) -> None:
        x_shape, y_shape = shape_of(op.x.type), shape_of(op.y.type)
        k = x_shape[-1]
        if k == 1 and y_shape[-2] == 1:
            mul = MulOp(op.x, op.y, op.result.type)
            mul.location = op.location
            rewriter.replace(op, mul)
            return
        element = cast(TensorType[Attribute], op.y.type).element_type
        target = padded_k(k, element)
        if y_shape[-2] == target:
            return  # already whole sticks: the pattern does not apply
        shape = (*y_shape[:-2], target, y_shape[-1])
        layout = padded_layout(op.y, shape)
        high = [0] * len(y_shape)
        high[-2] = target - k
        pad = PadOp.create(
            operands=[op.y],
            result_types=[
                TensorType(
                    element, shape, NoneAttr() if layout is None else TiledLayoutAttr.from_layout(layout)
                )
            ],
            properties={
                "low": DenseArrayBase.from_list(i64, [0] * len(y_shape)),
                "high": DenseArrayBase.from_list(i64, high),
                "value": FloatAttr(0.0, f64),
            },
        )
        pad.location = op.location
        rewriter.insert(pad, InsertPoint.before(op))
        op.operands = (op.x, pad.results[0])
        rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class PadMatmulPass(ModulePass):
    """Pad matmul/bmm y operands along K to whole sticks; K = 1 matmuls become multiplies."""

    name = "ktir-pad-matmul"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(PadMatmulK(), apply_recursively=False).rewrite_module(op)
        check_layouts_in_debug_mode(op)
