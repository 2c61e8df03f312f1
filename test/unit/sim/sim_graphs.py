"""Graph-level IR text builders shared by the simulator tests."""

from __future__ import annotations


def t(shape: str) -> str:
    """An fp16 tensor type, e.g. t("100x70")."""
    return f"tensor<{shape}xf16>"


def unary(op: str, shape: str) -> str:
    """@f(%x) -> op(%x)."""
    x = t(shape)
    return f"func.func @f(%x: {x}) -> {x} {{\n  %y = {op} %x : {x} -> {x}\n  return %y : {x}\n}}"


def matmul(m: int, k: int, n: int, hint: str = "") -> str:
    """@mm(%x, %w) -> x @ w, fp16 (m x k) @ (k x n), optionally with a work-division hint."""
    x, w, y = t(f"{m}x{k}"), t(f"{k}x{n}"), t(f"{m}x{n}")
    attributes = f" {{ktir.work_division_hint = {{{hint}}}}}" if hint else ""
    return (
        f"func.func @mm(%x: {x}, %w: {w}) -> {y} {{\n"
        f"  %y = ktir.matmul %x, %w{attributes} : {x}, {w} -> {y}\n  return %y : {y}\n}}"
    )
