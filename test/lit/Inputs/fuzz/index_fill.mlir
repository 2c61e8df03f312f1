// A linalg.fill of an index scalar: xDSL asserted on its element type while building the body.
func.func @fill(%n: index) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.fill ins(%n : index) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
