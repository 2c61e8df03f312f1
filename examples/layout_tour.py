"""
The reference stack's layouts, their DMA descriptors and the XLA / HTP conversions.

Run with `python examples/layout_tour.py`.

It shows the layout algebra everything else
builds on, using the examples of torch-spyre's layout guide.
"""

import numpy as np
from rich.console import Console
from rich.table import Table

from ktir.layout.spyre import SpyreTensorLayout
from ktir.layout.transfer import to_device, to_host

console = Console()


def spyre_layouts() -> None:
    table = Table(title="Spyre layouts (the reference stack's examples)")
    for column in ("host size", "dim_order", "layout", "DMA blocks (sizes / host off / dev off)"):
        table.add_column(column)
    cases = [
        ((1024, 256), None),
        ((1000, 200), None),
        ((5, 100, 150), None),
        ((5, 100, 150), [1, 0, 2]),
        ((128, 256, 512), None),
        ((512, 256), [0, 1, -1]),
        ((), None),
    ]
    for host, order in cases:
        stl = SpyreTensorLayout(host, "float16", dim_order=order)
        blocks = "\n".join(f"{list(b.sizes)} / {b.host_offset} / {b.device_offset}" for b in stl.dma(host))
        table.add_row(str(list(host)), str(order or "default"), repr(stl), blocks)
        x = np.arange(int(np.prod(host)), dtype=np.float16).reshape(host)
        assert np.array_equal(to_host(to_device(x, stl), stl, host), x)
    console.print(table)
    block = SpyreTensorLayout((1024, 256), "float16").dma((1024, 256))[0]
    console.print(
        f"(1024, 256) fp16 DMA: sizes {block.sizes}, device strides {block.device_strides}, "
        f"host strides {block.host_strides}"
    )


def foreign_layouts() -> None:
    try:
        from ktir.layout.formats import parse_htp_layout, parse_xla_layout
    except ImportError:
        console.print("[yellow]ktir.layout.formats is not available[/yellow]")
        return
    table = Table(title="XLA and HTP layouts as device_size + stride_map")
    for column in ("notation", "host size", "device_size", "stride_map", "example"):
        table.add_column(column)
    xla = [
        ("F32[3,5]{1,0:T(2,2)}", (2, 3)),
        ("F32[8,8]{1,0:T(2,4)(2,1,1,1)}", (6, 5)),
        ("BF16[32,256]{1,0:T(8,128)(2,1,1,1)}", (9, 130)),
    ]
    for text, element in xla:
        parsed = parse_xla_layout(text)
        table.add_row(
            text,
            str(list(parsed.host_size)),
            str(list(parsed.layout.device_size)),
            str(list(parsed.layout.stride_map)),
            f"{element} -> {parsed.linear_index(element)}",
        )
    htp = [
        (
            "ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,8, 2,8, 3,32>",
            (2, 9, 20, 50),
            (0, 0, 0, 32),
        ),
        (
            "ChunkedMemoryLayout<4, 3,0, 2,0, 0,0, 1,0, 2,8, 3,32, 2,4>",
            (3, 3, 32, 32),
            (0, 0, 1, 0),
        ),
    ]
    for text, host, element in htp:
        parsed = parse_htp_layout(text, host)
        table.add_row(
            text,
            str(list(host)),
            str(list(parsed.layout.device_size)),
            str(list(parsed.layout.stride_map)),
            f"{element} -> {parsed.linear_index(element)}",
        )
    console.print(table)


if __name__ == "__main__":
    spyre_layouts()
    foreign_layouts()
