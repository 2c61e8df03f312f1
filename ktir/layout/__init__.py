"""
Tiled tensor layouts: the layout algebra (`tiled`), the reference's DMA descriptors (`dci`),
XLA / HTP layout notations (`formats`), stick algebra through views (`sticks`) and shape rules
(`shapes`).

The public API of `tiled` is re-exported here: `from ktir.layout import SpyreTensorLayout,
to_device, to_host`.
"""

from ktir.layout import tiled
from ktir.layout.tiled import *  # noqa: F403  (the public API, exactly `tiled.__all__`)

__all__ = tiled.__all__
