// RUN: not ktir-opt %s -p 'ktir-propagate-layouts,ktir-divide-work,ktir-lower-to-cores' 2>&1 | filecheck %s

// A softmax row must stay whole on a core: 2 MiB in and 2 MiB out never fit.
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'ktir.softmax' op needs 4,194,304 bytes of LX per core (core 0) for its smallest chunk, more than the 1,677,721 bytes free
func.func @too_big(%x: tensor<1x1048576xf16>) -> tensor<1x1048576xf16> {
  %y = ktir.softmax %x dim 1 : tensor<1x1048576xf16> -> tensor<1x1048576xf16>
  return %y : tensor<1x1048576xf16>
}
