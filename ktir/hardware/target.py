"""
The hardware description of the target chip: the one place hardware numbers live.

Every other module asks a `Target` for sizes and rates instead of writing numbers down.
The defaults describe IBM Spyre (each value's public source, and which values are
assumptions, in docs/hardware.md); a TOML file with the same field names describes
another tiled dataflow target or a what-if variant. The rates of a core's units are per-core
fields, and chip figures are derived from them: `cores = 64` is a chip with twice Spyre's fp16
peak (`fp16_peak_flops`), each core as fast as one of Spyre's.

```toml
# my_target.toml
name = "spyre-16"
cores = 16
lx_bytes = 2097152
```

```python
target = Target.from_toml("my_target.toml")
```
"""

from __future__ import annotations

import dataclasses
import functools
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

MAX_DEVICE_MEMORY_BYTES = 2**44
"""The most device memory a target may have (16 TiB, over 100x Spyre's 128 GiB): the dialect's
verifiers reject a tensor larger than this for every target, which keeps every byte, element and
cycle count the passes compute exact in i64 and f64; the target's own memory is checked by the
passes (`ktir.cores.work_division.check_device_memory`)."""


@dataclass(frozen=True)
class Target:
    """
    A tiled dataflow accelerator: cores with scratchpads, sticks, device memory and a ring.

    All sizes are in bytes, all rates per second unless the field name says otherwise. A core's
    units have per-core rates; the chip's peak is a property derived from them and `cores`.
    """

    name: str = "spyre"
    cores: int = 32
    """AI cores per chip."""
    corelets_per_core: int = 2
    """Each corelet has an 8x8 PE array (PT) and a 1-D SFU."""
    pe_rows: int = 8
    pe_cols: int = 8
    stick_bytes: int = 128
    """The LPDDR5 <-> LX transfer granule and the unit of every device layout."""
    lx_bytes: int = 2 * 1024 * 1024
    """Scratchpad (LX) per core."""
    lx_reserved_fraction: float = 0.2
    """Share of LX kept by the backend compiler."""
    lx_alignment: int = 128
    device_memory_bytes: int = 128 * 1024**3
    device_memory_bandwidth: float = 204.8e9
    """LPDDR5 datasheet peak, shared by all cores: the roofline's rate (the simulator moves bytes
    at `sustained_memory_bandwidth`)."""
    ring_bytes_per_cycle: int = 128
    """Per direction, per link, of the bidirectional ring."""
    host_link_bandwidth: float = 63.0e9
    """Host <-> card, per direction: the card is PCIe Gen5 x16 (IBM's Spyre announcement);
    PCIe 5.0 signals 32 GT/s per lane with 128b/130b encoding (PCI-SIG), so 16 lanes carry
    32e9 x 16 x 128/130 / 8 = 63.0 GB/s. Transfers of parameters to the device are charged at it."""
    core_address_span: int = 256 * 1024**2
    """Largest contiguous device-memory span one core can address."""
    clock_hz: float = 1.5e9
    """Not published; 1.5 GHz is consistent with the fp16 peak."""
    peak_macs_per_us_per_core: float = 1.536e6
    """fp16 multiply-accumulates per µs of one core's PE arrays at full efficiency: 2 corelets x
    8 x 8 PEs x 8 lanes x 1.5 GHz (torch-spyre's `_PEAK_MACS_US_CORE`, docs/hardware.md). A per-core
    rate: more `cores` give the chip more peak (`fp16_peak_flops`)."""

    # The reference's matmul work-division cost model (torch-spyre's `_matmul_split_cost` in
    # `torch_spyre/_inductor/work_division.py`, see docs/hardware.md); tuning knobs that
    # upstream retunes often.
    pt_target_passes: int = 8
    """PT passes (of `pe_rows` rows each) per core that keep the PE pipeline full."""
    psum_us_per_element: float = 1.4e-4
    """Microseconds per output element per K-split ring-reduction hop."""
    broadcast_cohort: int = 8
    """Cores that share one broadcast read before it contends for bandwidth."""
    batch_split_exponent: float = 1.4
    """Batch-split cost grows like `b ** batch_split_exponent` (fit to bmm sweeps)."""
    pt_underfill_penalty_us: float = 50.0
    """Tie-break weight when a core's M under-fills the PE array."""

    # The simulator's rates (`ktir.hardware.cost_model`, docs/simulator.md). Calibrated values are
    # torch-spyre fits to device kernel times (its work-division cost model in
    # `torch_spyre/_inductor/work_division.py`, see docs/hardware.md); the rest are marked as
    # assumptions: the figure is not published and the value only sets an order of magnitude.
    sfu_pass_elems_per_us: float = 8.8e3
    """Elements per µs per core for one simple SFU pass. torch-spyre fits a whole silu at
    1.76e3 elem/µs/core (`_COST_PEAK_ELEMENTS_US_CORE`); silu is about 5 SFU passes."""
    reduce_elems_per_us: float = 1.2e4
    """Input elements per µs per core of a sum/mean/max/min (`_COST_REDUCE_ELEM_PER_US_CORE`)."""
    softmax_elems_per_us: float = 1.4e3
    """Input elements per µs per core of a softmax (the same calibration, amax+exp+sum+div)."""
    dma_setup_cycles: int = 500
    """Fixed cost of one DMA (descriptor fetch, first LPDDR access). Assumption: not published."""
    ring_hop_cycles: int = 32
    """Latency of one ring hop. Assumption: not published."""
    lx_copy_bytes_per_cycle: int = 128
    """LX -> LX copy rate, one stick per cycle. Assumption: LX bandwidth is not published."""
    host_op_latency_us: float = 10.0
    """Fixed cost of one op run on the host (a CPU fallback): the card's queue drains, the host
    is signalled, dispatches the op and hands its results back. Assumption: not published; 10 µs
    is the order of a PCIe round trip with an interrupt plus one framework dispatch."""
    host_bytes_per_second: float = 10.0e9
    """Host memory bytes per second a host op reads plus writes (one CPU thread streaming).
    Assumption: the host is not specified (IBM z17 and Power11 both carry the card); 10 GB/s
    is a single thread's order of streaming bandwidth."""

    # Several cards (tensor parallelism, `ktir.llm.tensor_parallel`, docs/hardware.md "Between
    # cards"): the link the collectives (`ktir.all_reduce`, `ktir.all_gather`) run over.
    card_link_bandwidth: float = 63.0e9
    """Card -> card bytes per second, per direction, of each card of a tensor-parallel group: the
    cards talk peer to peer over PCIe Gen5 x16, so each card's own x16 link (the
    `host_link_bandwidth` derivation, 63.0 GB/s) sends to one neighbour of the ring while it
    receives from the other. Assumption: IBM states that up to 8 cards are grouped with tensor
    parallelism over PCIe Gen5 x16 but publishes no topology; peer-to-peer DMA through a PCIe
    switch is what a group of PCIe accelerators uses when it can, and a collective staged
    through host memory would cross each link twice (a TOML target with half this rate models it)."""
    card_link_latency_us: float = 2.0
    """Fixed cost of one step of a collective between cards: the DMA is set up, crosses the PCIe
    switch, and the receiver sees the flag that its chunk arrived. Assumption: not published;
    2 µs is the order of a PCIe peer-to-peer write plus a flag polled over the link."""

    # Deployment: what a model may use of the card (`ktir.llm.capacity`, docs/estimating.md).
    device_memory_reserved_fraction: float = 0.08
    """Share of device memory the runtime keeps (compiled programs, descriptors, allocator slack);
    a model's weights, KV cache and activations must fit in the rest. Assumption: not published,
    and vllm-spyre has no available-memory API yet; 0.08 is what vLLM leaves by default on other
    devices (`gpu_memory_utilization` 0.92). 10.24 GiB of Spyre's 128 GiB."""

    # The card as measured: sustained rates and the mechanisms behind them, from torch-spyre's
    # device-calibrated kernel cost model (`ktir.hardware.card_model`, docs/hardware.md "The card
    # as measured"). The simulator charges these; the datasheet figures above stay the roofline.
    # `spyre-datasheet` sets them back to the datasheet (`SPYRE_DATASHEET`).
    sustained_memory_bandwidth: float = 150.0e9
    """LPDDR5 bytes per second the card moves in one direction, shared by all cores (torch-spyre
    `bw_peak_gbps`: read-only kernels and read probes land at 145-155 GB/s, the same from 2 cores
    to 32). The simulator's DMAs use it; `device_memory_bandwidth` stays the roofline."""
    rw_turnaround_ns_per_byte: float = 0.00574
    """Nanoseconds the LPDDR5 bus loses turning between reads and writes, per byte of the
    overlap min(read, write) of traffic that shares the channel in time (torch-spyre
    `rw_turnaround_ns_per_byte`, solved from a balanced `neg` measured at 105 GB/s:
    2 / 105 - 2 / 150). The simulator's channel charges it (`ktir.sim.timeline.Channel`)."""
    restickify_bandwidth: float = 116.0e9
    """Read plus write bytes per second of a restickify (a transpose: the stick moves to the other
    dim), the turnaround folded in (torch-spyre `bw_restickify_gbps`; transport 6.1% RMS)."""
    broadcast_bandwidth: float = 118.0e9
    """Read plus write bytes per second of an elementwise kernel with a broadcast operand (a scalar,
    a row b[1, C] or a column b[R, 1], loaded once), the turnaround folded in (torch-spyre
    `bw_broadcast_gbps`, x + 1.0 at 2048x2048; its fitted surface spans 95-135 GB/s)."""
    column_reduction_bandwidth: float = 113.0e9
    """Read plus write bytes per second of a reduction across rows (not along the last dim, e.g.
    `x.sum(0)`) (torch-spyre `bw_reduce_outer_gbps`)."""
    row_reduction_floor_bandwidth: float = 114.0e9
    """A reduction along the last dim reads at min(sustained, floor + extra * exp(-rows / decay))
    on the whole chip: its floor at many rows (torch-spyre `red_read_bw_floor_gbps`; 7.2% RMS)."""
    row_reduction_extra_bandwidth: float = 61.0e9
    """How far above the floor a row reduction of few rows reads (`red_read_bw_amp_gbps`)."""
    row_reduction_decay_rows: float = 3700.0
    """Rows over which the row-reduction rate falls to its floor (`red_read_bw_scale_rows`)."""
    reduction_core_share: float = 0.11
    """Share of the row-reduction rate one core drives; c cores drive c times it (torch-spyre
    `red_bw_cores_g`: 0.11, 0.22, 0.43 at 1, 2, 4 cores)."""
    reduction_half_chip_share: float = 0.54
    """Share of the row-reduction rate the cores of at most half the chip reach together; more
    cores reach all of it (`red_bw_cores_g`: 0.54 at 8 and 16 cores, single-shot measurements,
    1.0 at 32)."""
    sustained_macs_per_us_per_core: float = 1.14e6
    """fp16 multiply-accumulates per µs one core's PE arrays sustain on a full pipeline (torch-spyre
    `mac_peak_per_core_ns` = 1140 MAC/ns, fitted on compute-dominant runs at 4-8 cores: the
    datasheet's 1536 is 33% optimistic). The simulator's matmuls run at it;
    `peak_macs_per_us_per_core` stays the roofline's."""
    pt_underfill_exponent: float = 0.35
    """Below `pe_rows` x `pt_target_passes` (64) output rows per core the PE arrays reach
    (rows / 64) ** exponent of their rate (torch-spyre `underfill_exponent`, fitted on a chain
    sweep at 16 to 2 rows; the reference's work-division model used 0.5)."""
    pt_min_rows: int = 1
    """Rows a PE pass costs at least: the card's fit runs down to 2 rows with no floor (the
    datasheet target keeps one 8-row pass, `pe_rows`)."""
    accumulator_elements: int = 65536
    """Output elements of a matmul tile one core's PE arrays keep resident while they accumulate
    over K (torch-spyre `mm_spill_area0`: the "on-chip capacity (~64K fp16 elems/core)" of the
    per-core output-accumulator tile, fitted on its decouple and re-read sweeps)."""
    accumulator_reread_slope: float = 0.45
    """A matmul tile of `area` > `accumulator_elements` outputs per core streams its operand
    tiles from LPDDR5 again, a fraction min(cap, slope x log2(area / accumulator_elements)) of
    the bytes their loads moved (torch-spyre `mm_spill_slope`; 0 turns the mechanism off)."""
    accumulator_reread_cap: float = 1.5
    """The largest fraction of a tile's operand bytes streamed again (`mm_spill_cap`)."""

    # The PE arrays' rate per precision, relative to fp16 (`pe_rate_ratio`, docs/hardware.md "PE
    # rate per precision"): IBM's ISSCC 2026 talk as a secondary write-up (More Than Moore) reports
    # about 157 TOPS in fp8, 315 in int8 and 629 in int4 per card against fp16's 98.3 (which
    # torch-spyre's "DL16 peak" 98.304e12 corroborates). Medium confidence: no IBM document states
    # them. The sustained rate scales by the same ratio, an assumption (no device measurement of fp8).
    fp8_pe_rate_ratio: float = 157.0 / 98.304
    """fp8 (e4m3) MAC rate of the PE arrays over their fp16 rate: 157 / 98.304 = 1.597."""
    int8_pe_rate_ratio: float = 315.0 / 98.304
    """int8 MAC rate over the fp16 rate: 315 / 98.304 = 3.204."""
    int4_pe_rate_ratio: float = 629.0 / 98.304
    """int4 MAC rate over the fp16 rate: 629 / 98.304 = 6.399."""

    @property
    def fp16_peak_flops(self) -> float:
        """The chip's fp16 FLOP/s, 2 per MAC over all cores: 98.304e12 for Spyre."""
        return 2 * self.peak_macs_per_us_per_core * 1e6 * self.cores

    def pe_rate_ratio(self, precision: str) -> float:
        """
        The PE arrays' MAC rate in `precision` (`fp16`, `fp8`, `int8`, `int4`: both operands in
        it) over their fp16 rate: 1.0 for fp16, `fp8_pe_rate_ratio` (1.597 on Spyre) for fp8.
        `ValueError` for another name.
        """
        if precision == "fp16":
            return 1.0
        if precision not in PE_PRECISIONS:
            raise ValueError(f"unknown PE precision '{precision}' (known: fp16, {', '.join(PE_PRECISIONS)})")
        return float(getattr(self, f"{precision}_pe_rate_ratio"))

    def peak_flops(self, precision: str = "fp16") -> float:
        """The chip's peak FLOP/s (2 per MAC) in `precision`: 98.3e12 in fp16, 157e12 in fp8 on Spyre."""
        return self.fp16_peak_flops * self.pe_rate_ratio(precision)

    @property
    def clock_mhz(self) -> float:
        """Cycles per microsecond: 1500 for Spyre."""
        return self.clock_hz / 1e6

    @property
    def device_bytes_per_cycle(self) -> float:
        """LPDDR5 bytes per cycle for the whole chip: 136.5 for Spyre."""
        return self.device_memory_bandwidth / self.clock_hz

    @property
    def sustained_bytes_per_cycle(self) -> float:
        """LPDDR5 bytes per cycle the simulator moves for the whole chip: 100 for Spyre."""
        return self.sustained_memory_bandwidth / self.clock_hz

    @property
    def lx_usable_bytes(self) -> int:
        """Scratchpad bytes the compiler may plan: 1,677,721 for Spyre."""
        return int(self.lx_bytes * (1 - self.lx_reserved_fraction))

    @classmethod
    def from_toml(cls, path: str | Path) -> Target:
        """Read a target from a TOML file; missing fields keep the Spyre defaults."""
        with open(path, "rb") as f:
            data = tomllib.load(f)
        return cls(**_known_fields(data, str(path)))


PE_PRECISIONS = ("fp8", "int8", "int4")
"""Precisions besides fp16 the PE arrays multiply, each with a `<name>_pe_rate_ratio` field."""


SPYRE = Target()
"""The default target: IBM Spyre as the card measures (`spyre`)."""

SPYRE_DATASHEET = Target(
    name="spyre-datasheet",
    sustained_memory_bandwidth=SPYRE.device_memory_bandwidth,
    rw_turnaround_ns_per_byte=0.0,
    restickify_bandwidth=SPYRE.device_memory_bandwidth,
    broadcast_bandwidth=SPYRE.device_memory_bandwidth,
    column_reduction_bandwidth=SPYRE.device_memory_bandwidth,
    row_reduction_floor_bandwidth=SPYRE.device_memory_bandwidth,
    row_reduction_extra_bandwidth=0.0,
    reduction_core_share=1.0,
    reduction_half_chip_share=1.0,
    sustained_macs_per_us_per_core=SPYRE.peak_macs_per_us_per_core,
    pt_underfill_exponent=0.5,
    pt_min_rows=SPYRE.pe_rows,
    accumulator_reread_slope=0.0,
)
"""IBM Spyre at its datasheet rates (`spyre-datasheet`), a what-if: LPDDR5 at 204.8 GB/s in
both directions at once, whatever the access pattern."""

NAMED_TARGETS = {"spyre": SPYRE, "spyre-datasheet": SPYRE_DATASHEET}
"""The targets `load_target` knows by name."""


@functools.cache
def load_target(path: str = "") -> Target:
    """
    The target a pass option or a `--target` flag names: a name of `NAMED_TARGETS` (`spyre`,
    `spyre-datasheet`), a TOML file, or Spyre for "".

    Raises `ValueError` naming the file and the problem (missing, not TOML, unknown or badly
    typed fields). Example: a file holding `cores = 16` and `lx_bytes = 1048576` is Spyre with
    16 cores and 1 MiB of LX each.
    """
    if not path:
        return SPYRE
    if path in NAMED_TARGETS:
        return NAMED_TARGETS[path]
    try:
        target = Target.from_toml(path)
    except OSError as error:
        raise ValueError(f"cannot read target file '{path}': {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"target file '{path}' is not TOML: {error}") from None
    except TypeError as error:
        raise ValueError(f"target file '{path}': {error}") from None
    if bad := _bad_fields(target):
        raise ValueError(f"target file '{path}': {'; '.join(bad)}")
    return target


class TargetTypeError(TypeError):
    """A target argument that is neither a `Target`, a path to a TOML file, nor None."""


def resolve_target(target: Target | str | os.PathLike[str] | None) -> Target:
    """
    The target an API argument names: a `Target` itself, a name of `NAMED_TARGETS` or a TOML
    file (`load_target`), or Spyre for None or "". Every entry point that takes a target resolves it here.

    Raises `TargetTypeError` for anything else, and `ValueError` for a file `load_target`
    refuses or a `Target` with unusable fields (e.g. `Target(cores=0)`).
    """
    if target is None:
        return SPYRE
    if isinstance(target, Target):
        if bad := _bad_fields(target):
            raise ValueError(f"target '{target.name}': {'; '.join(bad)}")
        return target
    # Not redundant: callers without a type checker pass anything, and get a TargetTypeError.
    if isinstance(target, str | os.PathLike):  # pyright: ignore[reportUnnecessaryIsInstance]
        return load_target(os.fsdecode(target))
    raise TargetTypeError(
        f"target must be a ktir.hardware.target.Target, a path to a TOML file or None, "
        f"not {type(target).__name__}"
    )


_FRACTIONS = ("lx_reserved_fraction", "device_memory_reserved_fraction")
"""Fields that are a share in [0, 1) rather than a positive size or rate."""

_FIELD_TYPES: dict[str, tuple[type[Any], ...]] = {"int": (int,), "float": (int, float), "str": (str,)}
_MAY_BE_ZERO = {"rw_turnaround_ns_per_byte", "row_reduction_extra_bandwidth", "accumulator_reread_slope"}
"""Fields of a mechanism that 0 turns off (the datasheet target's value)."""


def target_from_fields(fields: Any, where: str) -> Target:
    """
    A target from its fields as `dataclasses.asdict` writes them (a saved report or program);
    `ValueError` naming `where` and what is wrong: not a table, unknown or badly typed fields.
    """
    if not isinstance(fields, dict):
        raise ValueError(f"{where}: the target must be a table of fields, not {type(fields).__name__}")
    target = Target(**_known_fields(cast("dict[str, Any]", fields), where))
    if bad := _bad_fields(target):
        raise ValueError(f"{where}: {'; '.join(bad)}")
    return target


CHIP_PEAK_FIELD = "fp16_peak_flops"
"""The chip-level name target files and saved reports gave the PE rate by before it became the
per-core field `peak_macs_per_us_per_core`; still read (`_known_fields`)."""


def _known_fields(fields: dict[str, Any], where: str) -> dict[str, Any]:
    """
    `fields` as `Target` keyword arguments; `ValueError` naming `where` for names that are not
    `Target` fields. A chip peak `fp16_peak_flops` is read as the per-core rate it implies with
    the same fields' `cores`: `peak_macs_per_us_per_core = fp16_peak_flops / (2e6 x cores)`
    (98.304e12 with 32 cores is Spyre's 1.536e6). Giving both names is an error.
    """
    known = {field.name for field in dataclasses.fields(Target)}
    if unknown := sorted(set(fields) - known - {CHIP_PEAK_FIELD}):
        raise ValueError(f"{where}: unknown target fields: {', '.join(unknown)}")
    if CHIP_PEAK_FIELD not in fields:
        return dict(fields)
    rest = {name: value for name, value in fields.items() if name != CHIP_PEAK_FIELD}
    if "peak_macs_per_us_per_core" in rest:
        raise ValueError(
            f"{where}: give peak_macs_per_us_per_core or {CHIP_PEAK_FIELD}, not both "
            f"(the chip's peak is 2 x peak_macs_per_us_per_core x 1e6 x cores)"
        )
    peak, cores = fields[CHIP_PEAK_FIELD], rest.get("cores", Target.cores)
    if not _positive(peak, (int, float)):
        raise ValueError(f"{where}: {CHIP_PEAK_FIELD} must be a positive number, not {peak!r}")
    if not _positive(cores, (int,)):
        return rest  # no rate follows from a bad core count, which `_bad_fields` reports
    return {**rest, "peak_macs_per_us_per_core": peak / 2 / cores / 1e6}


def _positive(value: Any, kinds: tuple[type, ...]) -> bool:
    """Whether `value` is a positive number of one of `kinds` (a bool is not a number here)."""
    return not isinstance(value, bool) and isinstance(value, kinds) and value > 0


def _bad_fields(target: Target) -> list[str]:
    """Why some fields of a target read from a file are unusable (empty when all are fine)."""
    bad: list[str] = []
    for field in dataclasses.fields(Target):
        value = getattr(target, field.name)
        kinds = _FIELD_TYPES[str(field.type)]
        if isinstance(value, bool) or not isinstance(value, kinds):
            bad.append(f"{field.name} must be {field.type!s}, not {value!r}")
        elif field.name in _FRACTIONS and not 0 <= value < 1:
            bad.append(f"{field.name} must be in [0, 1), not {value}")
        elif field.name in _MAY_BE_ZERO and not value >= 0:
            bad.append(f"{field.name} must not be negative, not {value}")
        elif kinds != (str,) and field.name not in _MAY_BE_ZERO | set(_FRACTIONS) and not value > 0:
            bad.append(f"{field.name} must be positive, not {value}")
        elif field.name == "device_memory_bytes" and value > MAX_DEVICE_MEMORY_BYTES:
            bad.append(f"device_memory_bytes must be at most 2**44 (16 TiB), not {value}")
    return bad
