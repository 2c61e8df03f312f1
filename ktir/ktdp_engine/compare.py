"""`arith.cmpi` and `arith.cmpf` of ktdp programs: predicates as NumPy comparisons."""

from __future__ import annotations

from typing import Any

import numpy as np

from ktir.ir.diagnostics import location_of
from ktir.ktdp_engine.memory import KtdpError

_PREDICATES = {
    "cmpi": ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"),
    "cmpf": (
        "false",
        "oeq",
        "ogt",
        "oge",
        "olt",
        "ole",
        "one",
        "ord",
        "ueq",
        "ugt",
        "uge",
        "ult",
        "ule",
        "une",
    ),
}
_COMPARE = {
    "eq": np.equal, "oeq": np.equal, "ueq": np.equal, "ne": np.not_equal, "one": np.not_equal,
    "une": np.not_equal, "slt": np.less, "ult": np.less, "olt": np.less, "sle": np.less_equal,
    "ule": np.less_equal, "ole": np.less_equal, "sgt": np.greater, "ugt": np.greater,
    "ogt": np.greater, "sge": np.greater_equal, "uge": np.greater_equal, "oge": np.greater_equal,
}  # fmt: skip


def compare(op: Any, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """
    `arith.cmpi` / `arith.cmpf` by predicate on its operands' values (index operands per tile,
    tensors elementwise). Example: `cmpf olt` of [1.0, 2.0] and 1.5 is [True, False].
    """
    name = _PREDICATES[op.name.split(".")[1]][op.predicate.value.data]
    if name not in _COMPARE:
        raise KtdpError(f"comparison predicate '{name}' is not supported", location_of(op))
    return _COMPARE[name](a, b)


__all__ = ["compare"]
