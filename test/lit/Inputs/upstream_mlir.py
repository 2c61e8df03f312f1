"""
Parse MLIR from stdin with upstream MLIR's Python bindings and print it back in generic form.

Used by the lit tests to check that ktir's generic output is valid MLIR: it must parse with
unregistered dialects allowed, verify, and survive a print/parse cycle unchanged. With
`--split-input-file`, each chunk between `// -----` lines is a module of its own, and the
printed modules are separated the same way.
"""

import sys

from mlir import ir

SEPARATOR = "// -----"


def round_trip(source: str) -> str:
    """`source` parsed, verified and printed generic; exits on any failure."""
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(source)
        if not module.operation.verify():
            sys.exit("upstream MLIR: module does not verify")
        text = module.operation.get_asm(print_generic_op_form=True)
        again = ir.Module.parse(text).operation.get_asm(print_generic_op_form=True)
        if again != text:
            sys.exit("upstream MLIR: print/parse is not stable")
        return text


source = sys.stdin.read()
chunks = source.split(SEPARATOR) if "--split-input-file" in sys.argv[1:] else [source]
sys.stdout.write(f"\n{SEPARATOR}\n".join(round_trip(chunk) for chunk in chunks))
