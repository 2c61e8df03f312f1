"""
The `spyreop` dialect: Spyre's SFU intrinsics (exp, gelu, sigmoid, silu, sqrt, rsqrt,
reciprocal, realdiv, softplus, the LayerNorm parts, compare and select, integer address
arithmetic) and `slice_reduction`, as upstream KTIR (ktir-mlir-frontend) defines them and
torch-spyre's KTIR emitter writes them inside `linalg.generic` bodies; with the `df16` type.

```mlir
%r = linalg.generic {...} ins(%x : tensor<64xf16>) outs(%init : tensor<64xf16>) {
^bb0(%in: f16, %out: f16):
  %e = spyreop.exp %in : f16
  linalg.yield %e : f16
} -> tensor<64xf16>
```

Modules: `types` (`!spyreop.df16`, the fused pair types, the enumerations) and `ops`.
"""

from xdsl.ir import Dialect

from ktir.dialects.spyreop.ops import SPYREOP_OPS
from ktir.dialects.spyreop.types import (
    ComparePredicateAttr,
    DF16FusedType,
    DF16Type,
    FP16FusedType,
    FP32FusedType,
    ReductionKindAttr,
    ReductionScopeAttr,
)

SpyreOp = Dialect(
    "spyreop",
    list(SPYREOP_OPS),
    [
        DF16Type,
        DF16FusedType,
        FP16FusedType,
        FP32FusedType,
        ReductionKindAttr,
        ReductionScopeAttr,
        ComparePredicateAttr,
    ],
)
"""The `spyreop` dialect (load it into a context with `ktir.ir.context.make_context`)."""

__all__ = ["SPYREOP_OPS", "SpyreOp"]
