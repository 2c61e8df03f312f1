"""
Time per scheduler step of a language model on the chip, from compiled programs (`StepCosts`).

The serving simulator (`ktir.llm.serving`) asks how long a step takes: prefill chunks of
waiting requests, decode tokens of running ones, or both. `build_step_costs(config)` answers
from a table of timing-only simulations (`Program.estimate`) of compiled programs, on a grid:

- **prefill chunk** `(n, c)`: `n` prompt tokens at positions `c..c+n-1`, written into a static
  KV cache of `c + n + 1` positions rounded up to whole blocks of 64 (attention reads the
  positions its queries see, whole key blocks past them sliced off; the positions past the
  chunk keep the write a scatter into a larger cache, as a server's is, see `prefill_chunk_us`),
  the positions known to the compiler (`ktir.llm.estimate.prefill_program`, which
  `ktir.estimate_llm` compiles its prefill and its chunks with);
- **decode step** `(b, k)`: `b` sequences of one token each at position `k - 1` over a cache of
  `k` positions (`ktir.llm.estimate.decode_program`, as `estimate_llm` compiles a decode step);
- **mixed step** `(r, b)`: vLLM's chunked prefill beside decodes, one forward pass over `r`
  packed rows, a chunk of `r - b` tokens (at least 1) after the grid's first cached context
  beside `b` decodes at its first decode context (`ktir.llm.mixed.mixed_program`, `mixed_chunk`).

Each point is the whole model's time, from the model with one and two decoder layers
(`T(1) + (N - 1) * (T(2) - T(1))`, as `estimate_llm`; a model of one or two layers is simulated
whole). Between points the rule is **piecewise
linear in each axis** (bilinear on each grid cell; linear extrapolation past the edges): within
a regime a step's time is affine in its tokens (matmul rows) and in its context (attention
reads and work), and the grid's points bound the regimes (`held_out_errors` checks it against
direct simulation at points off the grid). A step of the simulator maps onto the table as:

- prefill chunks only: one chunk of all their tokens at their token-weighted mean cached context;
- decodes only: the decode step of all of them at their mean context (a static cache has one
  length; attention work is affine in the total positions read, which the mean keeps);
- both (vLLM's mixed step: one forward pass over all the tokens): the mixed step of its `n + b`
  rows beside its `b` decodes (`n` chunk tokens at mean cached context `c`, decodes at mean
  context `k`), plus the chunk's attention over `c` and the decodes' over `k` beyond the mixed
  points' contexts: `mixed(n + b, b) + prefill(n, c) - prefill(n, c0) + decode(b, k) - decode(b, k0)`.
  The linear layers, norms and MLP run once over all rows, and each attention grows with its
  own context as in its own program (each part's attention is the same kernel as there). The
  earlier rule, the prefill chunk of all `n + b` rows plus the decodes' attention (their decode
  step less its value at context 0), left out the decodes' attention at context 0 (the
  kernels' fixed work) and the packing of the two parts' attention outputs: 4-7 % short on
  Llama-3.2-1B.

The grid a run needs follows its scheduling policy (`ktir.llm.step_grid.grid_for`): the spyre
policy's steps are whole chunks or decode steps, never mixed, so its grid has one chunk size (a
prefill axis of one value, constant along it) and no mixed points.

Tables are cached as JSON under `cache_dir` (default `$KTIR_CACHE_DIR` or `~/.cache/ktir`),
keyed by a hash of the model config, of the target's fields, of the grid and by ktir's version.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import multiprocessing
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ktir.hardware.target import Target
from ktir.llm.architecture import EstimateError
from ktir.llm.cache import whole_blocks
from ktir.llm.capacity import MemoryModel
from ktir.llm.estimate import decode_program, extrapolate_layers, prefill_program
from ktir.llm.mixed import check_mixed_architecture, mixed_program
from ktir.llm.scheduling import Step
from ktir.llm.step_grid import Grid, grid_for, grid_programs
from ktir.pipeline import TargetLike, chip_of
from ktir.progress import StageProgress

MixedPoint = tuple[int, int, int, int]
"""A mixed step: a prefill chunk of `tokens` after `cached`, beside `batch` decodes at `context`."""


@dataclass
class StepCosts:
    """The table, and a `StepCost` for the simulator: `costs(step)` is the step's microseconds."""

    grid: Grid
    prefill_us: np.ndarray
    """Shape (len(prefill_tokens), len(prefill_cached))."""
    decode_us: np.ndarray
    """Shape (len(decode_batches), len(decode_contexts))."""
    mixed_us: np.ndarray
    """Shape (len(prefill_tokens), len(decode_batches)): the compiled mixed step of `n` packed rows,
    a chunk of `n - b` tokens (at least 1) after `prefill_cached[0]` beside `b` decodes at
    `decode_contexts[0]` (`mixed_rows`)."""
    key: dict[str, str]

    def prefill(self, tokens: float, cached: float) -> float:
        """A prefill chunk's microseconds (piecewise bilinear)."""
        return _bilinear(self.grid.prefill_tokens, self.grid.prefill_cached, self.prefill_us, tokens, cached)

    def decode(self, batch: float, context: float) -> float:
        """A decode step's microseconds (piecewise bilinear)."""
        return _bilinear(self.grid.decode_batches, self.grid.decode_contexts, self.decode_us, batch, context)

    def mixed(self, tokens: float, cached: float, batch: float, context: float) -> float:
        """
        A mixed step's microseconds: the measured mixed step of its `tokens + batch` packed rows
        beside `batch` decodes (piecewise bilinear, at the grid's first cached and decode
        contexts), plus what the chunk's prefill gains from `cached` and the decode step from
        `context` over those.
        """
        cached0, context0 = self.grid.prefill_cached[0], self.grid.decode_contexts[0]
        rows = tokens + batch
        base = _bilinear(self.grid.prefill_tokens, self.grid.decode_batches, self.mixed_us, rows, batch)
        chunk = self.prefill(tokens, cached) - self.prefill(tokens, cached0)
        return base + chunk + self.decode(batch, context) - self.decode(batch, context0)

    def __call__(self, step: Step) -> float:
        """A scheduler step's microseconds (the module docstring's mapping)."""
        decodes = len(step.decode_contexts)
        context = float(np.mean(step.decode_contexts)) if decodes else 0.0
        if not step.prefill_chunks:
            return self.decode(decodes, context)
        tokens = sum(n for n, _ in step.prefill_chunks)
        cached = sum(n * c for n, c in step.prefill_chunks) / tokens
        if not decodes:
            return self.prefill(tokens, cached)
        if not self.grid.mixed:
            raise EstimateError("a step of prefill chunks and decodes on a table without mixed steps")
        return self.mixed(tokens, cached, decodes, context)

    def to_dict(self) -> dict[str, Any]:
        """The table as plain data (the cache file)."""
        return {
            "format": "ktir-step-costs", "key": self.key, "grid": dataclasses.asdict(self.grid),
            "prefill_us": self.prefill_us.tolist(), "decode_us": self.decode_us.tolist(),
            "mixed_us": self.mixed_us.tolist(),
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepCosts:
        """The table `to_dict` wrote."""
        grid = Grid.from_dict(data["grid"])
        prefill, decode, mixed = (np.array(data[name]) for name in ("prefill_us", "decode_us", "mixed_us"))
        return cls(grid, prefill, decode, mixed, dict(data["key"]))


def _weights(xs: Sequence[int], x: float) -> list[tuple[int, float]]:
    """
    The points of `xs` that `x` lies between (the edge segment outside) and their weights, linear
    in `x`; an axis of one value is constant along it (a spyre table's one chunk size).
    """
    if len(xs) == 1:
        return [(0, 1.0)]
    i = int(np.clip(np.searchsorted(xs, x) - 1, 0, len(xs) - 2))
    u = (x - xs[i]) / (xs[i + 1] - xs[i])
    return [(i, 1 - u), (i + 1, u)]


def _bilinear(xs: Sequence[int], ys: Sequence[int], table: np.ndarray, x: float, y: float) -> float:
    """Bilinear interpolation of `table` at (x, y), linear extrapolation outside the grid."""
    return float(sum(table[i, j] * u * v for i, u in _weights(xs, x) for j, v in _weights(ys, y)))


def prefill_chunk_us(
    config: Any, tokens: int, cached: int, target: Target, cores: int | None = None, cards: int = 1
) -> float:
    """
    A prefill chunk's simulated microseconds, whole model (module docstring), compiled and timed;
    with `cards` > 1, one card's shard and its collectives (tensor parallelism, docs/estimating.md).
    The server's KV cache always holds more than the chunk (other requests' blocks, in vLLM a
    slot mapping), so the chunk's keys and values are written at their positions: the static
    cache gets at least one position past the chunk (its attention does not read them, the
    causal mask being folded), so that a first chunk is not compiled as a copy filling the whole
    cache (`ktir.frontend.updates.whole_row_copies`), a form the server never runs. The
    positions being consecutive and known, the write is one box per core (`contiguous`); a
    paged server writes one box per page, a DMA setup more per page and core (about 0.3 µs
    each, under 1 % of a step), which this leaves out. The
    cache is whole blocks of `ATTENTION_BLOCK` positions, as a paged cache is: attention reads
    the whole cache in key chunks that divide it, and a cache of 16,384 + 2,048 + 1 = 18,433
    positions (a prime) has none, so at 18.4 MB of keys and values per head it fit no
    scratchpad. Whole key blocks past the causal limit are skipped; only their reads remain.
    """
    size = whole_blocks(cached + tokens + 1)
    build = partial(
        prefill_program, config, tokens=tokens, cached=cached, cache=size, target=target, cores=cores,
        cards=cards,
    )  # fmt: skip
    return _whole_model_us(config, build, target)


def decode_step_us(
    config: Any, batch: int, context: int, target: Target, cores: int | None = None, cards: int = 1
) -> float:
    """A decode step's simulated microseconds, whole model (one card's shard of `cards`), compiled, timed."""
    build = partial(
        decode_program, config, batch=batch, context=context, target=target, cores=cores, cards=cards
    )
    return _whole_model_us(config, build, target)


def mixed_step_us(
    config: Any, point: MixedPoint, target: Target, cores: int | None = None, cards: int = 1
) -> float:
    """
    A mixed step's simulated microseconds, whole model (one card's shard of `cards`): the prefill
    chunk and the decodes of `point` in one compiled forward pass (`ktir.llm.mixed.mixed_program`).
    """
    tokens, cached, batch, context = point
    build = partial(
        mixed_program, config, tokens=tokens, cached=cached, batch=batch, context=context, target=target,
        cores=cores, cards=cards,
    )  # fmt: skip
    return _whole_model_us(config, build, target)


def _whole_model_us(config: Any, program: Callable[[int], Any], target: Target) -> float:
    """
    `T(1) + (N - 1) * (T(2) - T(1))` of the programs with one and two layers; a model of one
    or two layers is its own program, simulated whole (nothing to extrapolate, one compile).
    """
    layers = int(config.num_hidden_layers)
    if layers <= 2:
        whole = program(layers).estimate()
        return extrapolate_layers(whole, whole, 1, target).time_us
    return extrapolate_layers(program(1).estimate(), program(2).estimate(), layers, target).time_us


@functools.cache
def code_digest() -> str:
    """
    A digest of ktir's own sources (every `.py` file of the package, its dialects, passes and
    tools): a table simulated by other code is another table. The package version alone would
    keep a table across changes of the simulator, the passes or the chip model.
    """
    package = Path(__file__).resolve().parents[1]
    roots = [package, package.parent / "dialects", package.parent / "passes", package.parent / "tools"]
    sha = hashlib.sha256()
    for root in roots:
        for path in sorted(root.rglob("*.py")) if root.is_dir() else []:
            sha.update(str(path.relative_to(root.parent)).encode())
            sha.update(path.read_bytes())
    return sha.hexdigest()[:16]


def table_key(config: Any, target: Target, grid: Grid, cores: int | None, cards: int = 1) -> dict[str, str]:
    """What a cached table depends on: the model config, the target's fields, the grid, ktir's code."""

    def digest(data: Any) -> str:
        return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]

    model = config.to_dict()
    model.pop("transformers_version", None)
    return {
        "model": digest(model),
        "target": digest(dataclasses.asdict(target)),
        "grid": digest([dataclasses.asdict(grid), cores] + ([cards] if cards > 1 else [])),
        "ktir": code_digest(),
    }


def default_cache_dir() -> Path:
    """`$KTIR_CACHE_DIR`, or `~/.cache/ktir`; tables go in its `step-costs` folder."""
    return Path(os.environ.get("KTIR_CACHE_DIR") or Path.home() / ".cache" / "ktir") / "step-costs"


def build_step_costs(
    config: Any,
    *,
    target: TargetLike = None,
    grid: Grid | None = None,
    cores: int | None = None,
    cache_dir: str | Path | None = None,
    progress: StageProgress | None = None,
    cards: int = 1,
    jobs: int = 1,
) -> StepCosts:
    """
    The step-cost table of `config` on `target` (one card of `cards`): read from the cache if
    there, else every grid point compiled and timed (each announced to `progress` as it
    finishes) and cached. `jobs` > 1 times the points in that many worker processes; every
    point is an independent compile and simulation, so the table is the same for any `jobs`.
    """
    if jobs < 1:
        raise EstimateError(f"jobs must be at least 1, not {jobs}")
    grid = grid or Grid()
    grid.check()
    if grid.mixed:
        check_mixed_architecture(config)  # before any point is compiled: the mixed points need it
    chip = chip_of(target)
    key = table_key(config, chip, grid, cores, cards)
    path = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / (
        f"{key['model']}-{key['target']}-{key['grid']}-{key['ktir']}.json"
    )
    if path.is_file():
        try:
            return StepCosts.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, KeyError, TypeError):
            pass  # a damaged cache file is rebuilt
    tables = {
        "prefill": np.zeros((len(grid.prefill_tokens), len(grid.prefill_cached))),
        "decode": np.zeros((len(grid.decode_batches), len(grid.decode_contexts))),
        "mixed": np.zeros((len(grid.prefill_tokens), len(grid.decode_batches)) if grid.mixed else (0, 0)),
    }
    points = _points(grid, config, chip, cores, cards)
    for point, us in _measured(points, jobs):
        _announce(progress, f"{chip.name}: {point.describe()}")
        tables[point.kind][point.index] = us
    table = StepCosts(grid, tables["prefill"], tables["decode"], tables["mixed"], key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # written whole, then renamed: a reader in another process never sees half a table
        partial_path = path.with_suffix(f".{os.getpid()}.part")
        partial_path.write_text(json.dumps(table.to_dict(), indent=1) + "\n", encoding="utf-8")
        os.replace(partial_path, path)
    except OSError as error:  # the table is good; only its cache copy is lost
        warnings.warn(
            f"step-cost table not cached in '{path.parent}': {error.strerror or error}", stacklevel=2
        )
    return table


def _pairs(xs: Sequence[int], ys: Sequence[int]) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    return [((i, x), (j, y)) for i, x in enumerate(xs) for j, y in enumerate(ys)]


@dataclass(frozen=True)
class _GridPoint:
    """One point of a table to compile and time: what a worker process needs, and where it goes."""

    kind: str
    """"prefill" (`x` tokens after `y` cached), "decode" (`x` sequences at context `y`) or "mixed"
    (`x` tokens after `base[0]` cached beside `y` decodes at context `base[1]`)."""
    index: tuple[int, int]
    x: int
    y: int
    config: Any
    target: Target
    cores: int | None
    cards: int
    base: tuple[int, int] = (0, 1)
    """A mixed point's cached and decode contexts: the grid's first of each."""

    @property
    def chunk(self) -> int:
        """A mixed point's chunk: its `x` packed rows less its `y` decodes (`mixed_rows`)."""
        return mixed_chunk(self.x, self.y)

    def describe(self) -> str:
        """The progress line: "prefill chunk of 512 after 1024", "decode step of 16 at 2048", ..."""
        if self.kind == "prefill":
            return f"prefill chunk of {self.x} after {self.y}"
        if self.kind == "mixed":
            return f"mixed step of {self.chunk} after {self.base[0]} beside {self.y} at {self.base[1]}"
        return f"decode step of {self.x} at {self.y}"

    def measure(self) -> float:
        """The point's simulated microseconds (`prefill_chunk_us`, `decode_step_us` or `mixed_step_us`)."""
        if self.kind == "mixed":
            point = (self.chunk, self.base[0], self.y, self.base[1])
            return mixed_step_us(self.config, point, self.target, self.cores, self.cards)
        time = prefill_chunk_us if self.kind == "prefill" else decode_step_us
        return time(self.config, self.x, self.y, self.target, self.cores, self.cards)


def mixed_chunk(rows: int, batch: int) -> int:
    """
    The chunk of the table's mixed point of `rows` packed rows beside `batch` decodes: `rows -
    batch`, so that the rows the linear layers see are the grid's token counts (a compiled
    step's time is not smooth in its rows: 1,028 rows, 4 x 257, take 36 % longer than 1,024 on
    Llama-3.2-1B), or one token when the decodes fill the rows (a step of so few rows reads
    weights, whatever its rows).
    """
    return max(rows - batch, 1)


def _points(grid: Grid, config: Any, target: Target, cores: int | None, cards: int) -> list[_GridPoint]:
    """Every point of `grid`: prefill chunks, decode steps, then mixed steps (if any), axes in order."""
    point = partial(_GridPoint, config=config, target=target, cores=cores, cards=cards)
    prefill = _pairs(grid.prefill_tokens, grid.prefill_cached)
    decode = _pairs(grid.decode_batches, grid.decode_contexts)
    mixed = _pairs(grid.prefill_tokens, grid.decode_batches)
    base = (grid.prefill_cached[0], grid.decode_contexts[0])
    return (
        [point("prefill", (i, j), n, c) for (i, n), (j, c) in prefill]
        + [point("decode", (i, j), b, k) for (i, b), (j, k) in decode]
        + [point("mixed", (i, j), n, b, base=base) for (i, n), (j, b) in mixed if grid.mixed]
    )


def _measure(point: _GridPoint) -> float:
    return point.measure()


def _measured(points: list[_GridPoint], jobs: int) -> Iterator[tuple[_GridPoint, float]]:
    """
    Each point with its microseconds: in order in this process for one job; else in `jobs`
    spawned worker processes (a forked child would inherit torch's thread pools), the largest
    points first so that no worker is left with a long one at the end, yielded as they finish.
    """
    if jobs == 1 or len(points) < 2:
        yield from ((point, point.measure()) for point in points)
        return
    largest_first = sorted(points, key=lambda p: -p.x * max(p.y, 1))
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(points)), mp_context=context) as pool:
        futures = {pool.submit(_measure, point): point for point in largest_first}
        try:
            for future in as_completed(futures):
                yield futures[future], future.result()
        except BaseException:
            for future in futures:  # a point failed (or Ctrl-C): do not wait for the others
                future.cancel()
            raise


def _announce(progress: StageProgress | None, name: str) -> None:
    if progress is not None:
        progress.stage(name)


def held_out_errors(
    table: StepCosts,
    config: Any,
    prefill_points: Sequence[tuple[int, int]],
    decode_points: Sequence[tuple[int, int]],
    *,
    mixed_points: Sequence[MixedPoint] = (),
    target: TargetLike = None,
    cores: int | None = None,
    cards: int = 1,
) -> list[dict[str, Any]]:
    """
    Interpolated against directly simulated time at points off the grid: one row per point.
    `mixed_points` `(tokens, cached, batch, context)` check the mixed-step rule (`StepCosts.__call__`
    of a chunk of `tokens` after `cached` beside `batch` decodes at `context`) against the
    compiled mixed step (`mixed_step_us`).
    """
    chip = chip_of(target)
    measured = [
        ("prefill", (x, y), prefill_chunk_us(config, x, y, chip, cores, cards), table.prefill(x, y))
        for x, y in prefill_points
    ] + [
        ("decode", (x, y), decode_step_us(config, x, y, chip, cores, cards), table.decode(x, y))
        for x, y in decode_points
    ]
    measured += [
        ("mixed", point, mixed_step_us(config, point, chip, cores, cards), table(_mixed_step(point)))
        for point in mixed_points
    ]
    return [
        {
            "kind": kind,
            "point": point,
            "simulated_us": simulated,
            "interpolated_us": estimate,
            "error": estimate / simulated - 1,
        }
        for kind, point, simulated, estimate in measured
    ]


def _mixed_step(point: MixedPoint) -> Step:
    """A mixed point as a scheduler step: a chunk of `tokens` after `cached`, `batch` decodes at `context`."""
    tokens, cached, batch, context = point
    return Step(prefill_chunks=((tokens, cached),), decode_contexts=(context,) * batch)


def kv_capacity_tokens(
    config: Any, target: TargetLike = None, cards: int = 1, step_tokens: int = 2048
) -> int:
    """
    Tokens the KV cache holds on each card: device memory less the weights, the runtime reserve
    and the activations of a step of `step_tokens` tokens (`ktir.llm.capacity`, fp16), over the
    cache bytes of one token (keys and values of every layer's KV heads at device-layout size:
    head_dim padded to whole sticks). `EstimateError` when nothing is left for a cache.
    """
    memory = MemoryModel(config, dtype="fp16", kv_dtype="fp16", target=target).per_card(
        context=1, batch=1, prompt=step_tokens, cards=cards
    )
    free = memory.capacity - memory.weights - memory.reserve - memory.activations
    if free < memory.kv_cache:
        raise EstimateError(f"no room for a KV cache: {memory.describe()}")
    return int(free // memory.kv_cache)


__all__ = [
    "Grid",
    "StepCosts",
    "build_step_costs",
    "decode_step_us",
    "default_cache_dir",
    "grid_for",
    "grid_programs",
    "held_out_errors",
    "kv_capacity_tokens",
    "mixed_chunk",
    "mixed_step_us",
    "prefill_chunk_us",
    "table_key",
]
