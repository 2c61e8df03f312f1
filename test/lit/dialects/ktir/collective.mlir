// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// Round trips of the collectives between cards (dialects/ktir/collective.py).

// all_reduce keeps its input's type, over any number of cards (one card: a copy); all_gather
// multiplies its dim by the cards.
// CHECK-LABEL: func.func @collectives
// CHECK-NEXT:    %hidden = ktir.all_reduce %partial cards 4 : tensor<1x8x4096xf16> -> tensor<1x8x4096xf16>
// CHECK-NEXT:    %alone = ktir.all_reduce %partial cards 1 : tensor<1x8x4096xf16> -> tensor<1x8x4096xf16>
// CHECK-NEXT:    %counts = ktir.all_reduce %ints cards 2 : tensor<16xi32> -> tensor<16xi32>
// CHECK-NEXT:    %logits = ktir.all_gather %block dim 2 cards 4 : tensor<1x1x32064xf16> -> tensor<1x1x128256xf16>
// CHECK-NEXT:    %rows = ktir.all_gather %block dim 0 cards 2 : tensor<1x1x32064xf16> -> tensor<2x1x32064xf16>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "collectives"
// CHECK-GENERIC:         %hidden = "ktir.all_reduce"(%partial) <{cards = 4 : i64}> : (tensor<1x8x4096xf16>) -> tensor<1x8x4096xf16>
// CHECK-GENERIC:         %logits = "ktir.all_gather"(%block) <{dim = 2 : i64, cards = 4 : i64}> : (tensor<1x1x32064xf16>) -> tensor<1x1x128256xf16>
func.func @collectives(%partial: tensor<1x8x4096xf16>, %ints: tensor<16xi32>, %block: tensor<1x1x32064xf16>) {
  %hidden = ktir.all_reduce %partial cards 4 : tensor<1x8x4096xf16> -> tensor<1x8x4096xf16>
  %alone = ktir.all_reduce %partial cards 1 : tensor<1x8x4096xf16> -> tensor<1x8x4096xf16>
  %counts = ktir.all_reduce %ints cards 2 : tensor<16xi32> -> tensor<16xi32>
  %logits = ktir.all_gather %block dim 2 cards 4 : tensor<1x1x32064xf16> -> tensor<1x1x128256xf16>
  %rows = ktir.all_gather %block dim 0 cards 2 : tensor<1x1x32064xf16> -> tensor<2x1x32064xf16>
  func.return
}
