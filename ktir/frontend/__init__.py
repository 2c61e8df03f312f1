"""
Frontends: PyTorch FX (`ktir.frontend.fx`) to graph-level ktir.

PyTorch is an optional dependency (`pip install 'ktir[torch]'`): `require_torch` is what every
entry point that needs it calls first, so that without it the answer is that one line, a
`MissingDependencyError`, not a `ModuleNotFoundError` from deep inside an import.
"""

from __future__ import annotations

import importlib.util

TORCH_INSTALL = "pip install 'ktir[torch]'"
"""How to install the optional PyTorch dependency (torch 2.13.0, CPU)."""


class MissingDependencyError(ImportError):
    """An optional dependency that a feature needs is not installed; the message says how to install it."""


def require_torch(feature: str) -> None:
    """Raise `MissingDependencyError` naming `feature` unless PyTorch is importable."""
    if importlib.util.find_spec("torch") is None:
        raise MissingDependencyError(f"{feature} needs PyTorch, which is not installed: {TORCH_INSTALL}")


__all__ = ["TORCH_INSTALL", "MissingDependencyError", "require_torch"]
