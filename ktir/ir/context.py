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

import importlib
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


PROJECT_DIALECTS = {
    "arith": ("ktir.dialects.arith_ext", "ArithExt"),
    "linalg": ("ktir.dialects.linalg_ext", "LinalgExt"),
    "scf": ("ktir.dialects.scf_ext", "ScfExt"),
    "ktir": ("ktir.dialects.ktir.dialect", "Ktir"),
    "ktdp": ("ktir.dialects.ktdp", "Ktdp"),
    "spyreop": ("ktir.dialects.spyreop", "SpyreOp"),
}
"""The dialects ktir defines or extends, by name: (module, attribute). Each is imported when a
program first names it (xDSL's lazy registration): a ktdp kernel is parsed without building the
`ktir` dialect's op classes."""


def _factory(module: str, attribute: str) -> Callable[[], Dialect]:
    return lambda: getattr(importlib.import_module(module), attribute)


def register_dialects(ctx: Context) -> None:
    """Register (lazily) `XDSL_DIALECTS`, `ktir`, `ktdp` (RFC 0682 KTIR) and `spyreop` in `ctx`."""
    factories = {**get_all_dialects(), **{name: _factory(*home) for name, home in PROJECT_DIALECTS.items()}}
    for name in (*XDSL_DIALECTS, "ktir", "ktdp", "spyreop"):
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factories[name])


def make_context(allow_unregistered: bool = False) -> Context:
    """A fresh context with every dialect ktir uses registered."""
    ctx = Context(allow_unregistered=allow_unregistered)
    register_dialects(ctx)
    return ctx
