// A 0-d bf16 constant (the bf16 rounding kept its shape as (1,), found by tools/fuzz.py).
func.func @f() -> tensor<bf16> {
  %y = ktir.full 1.5 : tensor<bf16>
  return %y : tensor<bf16>
}
