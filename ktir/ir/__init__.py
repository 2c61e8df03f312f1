"""
IR infrastructure: the MLIR context, located diagnostics and MLIR's expected-diagnostics check, and
the interpreters' shared machinery (`interpreter`: how an op's implementation is registered;
`lockstep`: `arith` and `scf` on every core or tile at once).
"""
