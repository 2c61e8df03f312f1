"""
The MLIR context ktir tools and the Python API parse into: the `ktir`, `ktdp` and `spyreop` dialects plus
the xDSL dialects graph- and core-level programs use.

```python
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module
module = parse_module(make_context(), text, "model.mlir")
```
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import get_all_dialects

XDSL_DIALECTS = (
    "builtin",
    "func",
    "arith",
    "math",
    "linalg",
    "tensor",
    "memref",
    "scf",
    "affine",
    "test",
)
"""xDSL dialects ktir knows besides `ktir` (`test` gives `"test.op"` values in tests)."""


def register_dialects(ctx: Context) -> None:
    """Register (lazily) `XDSL_DIALECTS`, `ktir`, `ktdp` (RFC 0682 KTIR) and `spyreop` in `ctx`."""
    from ktir.dialects.arith_ext import ArithExt
    from ktir.dialects.ktdp import Ktdp
    from ktir.dialects.ktir import Ktir
    from ktir.dialects.linalg_ext import LinalgExt
    from ktir.dialects.scf_ext import ScfExt
    from ktir.dialects.spyreop import SpyreOp

    factories = {
        **get_all_dialects(),
        "arith": lambda: ArithExt,
        "linalg": lambda: LinalgExt,
        "scf": lambda: ScfExt,
    }
    for name in XDSL_DIALECTS:
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factories[name])
    if "ktir" not in ctx.registered_dialect_names:
        ctx.register_dialect("ktir", lambda: Ktir)
    if "ktdp" not in ctx.registered_dialect_names:
        ctx.register_dialect("ktdp", lambda: Ktdp)
    if "spyreop" not in ctx.registered_dialect_names:
        ctx.register_dialect("spyreop", lambda: SpyreOp)


def make_context(allow_unregistered: bool = False) -> Context:
    """A fresh context with every dialect ktir uses registered."""
    ctx = Context(allow_unregistered=allow_unregistered)
    register_dialects(ctx)
    return ctx
