"""
ktir: Kernel Tile IR for the IBM Spyre accelerator, built on xDSL.

The layout algebra is in `ktir.layout`, the hardware description in `ktir.target`, the
dialect in `ktir.dialects.ktir`, passes in `ktir.passes` and `ktir-opt` in `ktir.tools`.
"""

from ktir.layout import SpyreTensorLayout, to_device, to_host

__all__ = ["SpyreTensorLayout", "to_device", "to_host"]
__version__ = "0.1.0"
