// Used by ktir-opt/errors.mlir.

func.func @broken( {
