"""
Tiled tensor layouts: the layout algebra (`tiled`), a layout bound to a host tensor (`binding`),
the Spyre stick layout (`spyre`), host<->device transfer (`transfer`), the reference's DMA
descriptors (`dci`), XLA / HTP layout notations (`formats`), stick algebra through views
(`sticks`) and shape rules (`shapes`).

The public API of `tiled`, `binding`, `spyre` and `transfer` (and `DeviceDType` of `dtypes`) is
re-exported here: `from ktir.layout import SpyreTensorLayout, to_device, to_host`.
"""

from ktir.layout.binding import BoundLayout, DmaBlock, HostGroup
from ktir.layout.dtypes import DeviceDType
from ktir.layout.spyre import SpyreTensorLayout, restickify_target
from ktir.layout.tiled import LayoutError, TiledLayout, contiguous_strides, device_dtype_of
from ktir.layout.transfer import to_device, to_host

__all__ = [
    "BoundLayout",
    "DeviceDType",
    "DmaBlock",
    "HostGroup",
    "LayoutError",
    "SpyreTensorLayout",
    "TiledLayout",
    "contiguous_strides",
    "device_dtype_of",
    "restickify_target",
    "to_device",
    "to_host",
]
