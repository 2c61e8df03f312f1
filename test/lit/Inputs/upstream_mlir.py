"""
Parse MLIR from stdin with upstream MLIR's Python bindings and print it back in generic form.

Used by the lit tests to check that ktir's generic output is valid MLIR: it must parse with
unregistered dialects allowed, verify, and survive a print/parse cycle unchanged.
"""

import sys

from mlir import ir

with ir.Context() as ctx:
    ctx.allow_unregistered_dialects = True
    module = ir.Module.parse(sys.stdin.read())
    if not module.operation.verify():
        sys.exit("upstream MLIR: module does not verify")
    text = module.operation.get_asm(print_generic_op_form=True)
    again = ir.Module.parse(text).operation.get_asm(print_generic_op_form=True)
    if again != text:
        sys.exit("upstream MLIR: print/parse is not stable")
    sys.stdout.write(text)
