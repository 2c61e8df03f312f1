"""IR infrastructure: the MLIR context, located diagnostics and MLIR's expected-diagnostics check."""
