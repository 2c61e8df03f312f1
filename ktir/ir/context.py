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

from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.ir import Dialect

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


def _ktir() -> Dialect:
    from ktir.dialects.ktir.dialect import Ktir

    return Ktir


def _ktdp() -> Dialect:
    from ktir.dialects.ktdp import Ktdp

    return Ktdp


def _spyreop() -> Dialect:
    from ktir.dialects.spyreop import SpyreOp

    return SpyreOp


def _arith() -> Dialect:
    from ktir.dialects.arith_ext import ArithExt

    return ArithExt


def _linalg() -> Dialect:
    from ktir.dialects.linalg_ext import LinalgExt

    return LinalgExt


def _scf() -> Dialect:
    from ktir.dialects.scf_ext import ScfExt

    return ScfExt


PROJECT_DIALECTS: dict[str, Callable[[], Dialect]] = {
    "arith": _arith,
    "linalg": _linalg,
    "scf": _scf,
    "ktir": _ktir,
    "ktdp": _ktdp,
    "spyreop": _spyreop,
}
"""The dialects ktir defines or extends, each imported when a program first names it (xDSL's lazy
registration): a ktdp kernel is parsed without building the `ktir` dialect's op classes."""


def register_dialects(ctx: Context) -> None:
    """Register (lazily) `XDSL_DIALECTS`, `ktir`, `ktdp` (RFC 0682 KTIR) and `spyreop` in `ctx`."""
    factories = {**get_all_dialects(), **PROJECT_DIALECTS}
    for name in (*XDSL_DIALECTS, "ktir", "ktdp", "spyreop"):
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factories[name])


def make_context(allow_unregistered: bool = False) -> Context:
    """A fresh context with every dialect ktir uses registered."""
    ctx = Context(allow_unregistered=allow_unregistered)
    register_dialects(ctx)
    return ctx
