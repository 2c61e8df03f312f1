"""Checks the run of passes/compile/routing.mlir: values against NumPy, the cycles against the cost model."""

import json
import sys

import numpy as np

from ktir.hardware.cost_model import grouped_matmul_cycles
from ktir.hardware.target import SPYRE

inputs, outputs, report = np.load(sys.argv[1]), np.load(sys.argv[2]), json.load(open(sys.argv[3]))
order = np.argsort(-inputs["probs"].astype(np.float64), axis=-1, kind="stable")[:, :2]
top = np.take_along_axis(inputs["probs"], order, -1)
x, w = inputs["x"].astype(np.float32), inputs["experts"].astype(np.float32)
expected = np.concatenate([x[:3] @ w[0], x[3:] @ w[2]]).astype(np.float16)
print(
    "top-k and grouped matmul match NumPy:",
    bool((outputs["out0"] == top).all() and (outputs["out1"] == order).all()),
    bool((outputs["out2"] == expected).all()),
)
grouped = next(k for k in report["kernels"] if k["op"] == "ktir.grouped_matmul")
print(
    "grouped matmul cycles match the cost model:",
    abs(grouped["cycles"] - grouped_matmul_cycles([3, 0, 5, 0], 64, 128, 2, 4, target=SPYRE)) < 1e-6,
)
expert_bytes = 64 * 128 * 2
print(
    "compulsory bytes count 2 of 4 experts:",
    grouped["compulsory_bytes"] == 2 * expert_bytes + 8 * 64 * 2 + 128 + 8 * 128 * 2,
)
