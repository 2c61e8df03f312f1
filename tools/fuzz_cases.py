"""
The inputs of `tools/fuzz.py`: the corpus, the mutations, and the cases built from them.

The corpus is every `.mlir` file under `test/lit` (and each `// -----` chunk of it), with the
RUN and FileCheck lines blanked (so line numbers stay those of the file); `expected-*`
annotations stay for `--verify-diagnostics`. Case `i` of seed `s` is derived from
`random.Random(f"{s}:{i}")` alone: the same seed and count give the same inputs and command
lines, whatever `--jobs` is. Each case applies one to three mutations (byte flips, deleted,
duplicated or swapped lines, integers swapped for extreme values such as 2**63 or 99999999999,
deep nesting, non-UTF-8 bytes, element type and shape edits, `#ktir.tiled` and other attribute
edits, truncation, splicing lines of another input) and runs one tool invocation: `ktir-opt`
with no pipeline, with `ktir-compile`, with a pipeline taken from the corpus RUN lines, with
`--split-input-file --verify-diagnostics`, or `ktir-run`; a ktdp kernel runs half the time on the
ktdp engine (`ktir-run --function`, inputs from `tools/fuzz_ktdp.py`); a few use bad options on
purpose.

Nothing here runs a tool: `iter_cases(seed, count)` is the list of cases a run executes
(`tools/fuzz.py` runs and classifies them).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ktir.tools.fuzz_ktdp import KERNELS, kernel_inputs

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "test" / "lit"

# ---------------------------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seed:
    """One corpus input: its text (RUN/CHECK lines blanked) and what its RUN lines run."""

    name: str
    text: str
    pipelines: tuple[str, ...]
    split: bool
    annotated: bool


_PIPELINE = re.compile(r"""(?:^|\s)-p\s+(?:'([^']*)'|"([^"]*)"|(\S+))""")
_KEEP = re.compile(r"expected-(error|warning|note|remark)|^\s*// -----")


def _pipelines(text: str, tmp: str = "{tmp}") -> tuple[str, ...]:
    """
    The `-p` pipelines of the RUN lines that parse (those that do not are tests of usage errors,
    which `BAD_OPTIONS` covers)."""
    found = []
    for line in text.splitlines():
        if "RUN:" not in line:
            continue
        for match in _PIPELINE.finditer(line.split("RUN:", 1)[1]):
            spec = next(g for g in match.groups() if g is not None)
            found.append(spec.replace("%t", tmp))
    return tuple(spec for spec in dict.fromkeys(found) if _parses(spec))


def _parses(spec: str) -> bool:
    from ktir.pipeline import PipelineError, parse_pipeline

    try:
        parse_pipeline(spec)
    except PipelineError:
        return False
    return True


def _strip(text: str) -> str:
    """Blank comment lines other than `expected-*` annotations and split markers."""
    lines = text.split("\n")
    return "\n".join(
        "" if line.lstrip().startswith("//") and not _KEEP.search(line) else line for line in lines
    )


def load_corpus(root: Path = CORPUS) -> list[Seed]:
    """Every `.mlir` file under `root` and each `// -----` chunk of it, sorted by name."""
    seeds: list[Seed] = []
    for path in sorted(root.rglob("*.mlir")):
        if "Output" in path.parts:
            continue
        raw = path.read_text(encoding="utf-8")
        name = str(path.relative_to(root))
        text = _strip(raw)
        split = "// -----" in raw
        annotated = "expected-" in raw
        seeds.append(Seed(name, text, _pipelines(raw), split, annotated))
        if split:
            for i, chunk in enumerate(re.split(r"(?m)^\s*// -----.*$", text)):
                if chunk.strip():
                    seeds.append(Seed(f"{name}#{i}", chunk, _pipelines(raw), False, annotated))
    return seeds


# ---------------------------------------------------------------------------------------------
# Mutations: each takes the input bytes and a seeded generator and returns new bytes
# ---------------------------------------------------------------------------------------------

EXTREME_INTS = (
    "0", "-1", "1", "7", "2147483648", "4294967296", "9223372036854775807", "9223372036854775808",
    "18446744073709551615", "18446744073709551616", "-9223372036854775809", "99999999999",
    "1099511627776", "340282366920938463463374607431768211456",
)  # fmt: skip
ELEMENT_TYPES = ("f16", "f32", "bf16", "i1", "i8", "i32", "i64", "f8E4M3FN", "f64", "i17", "index", "ui8")
BAD_BYTES = (b"\xff", b"\xfe\xff", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\x00", b"\xf4\x90\x80\x80")
_INT = re.compile(rb"(?<![\w.#%@^])-?\d+(?![\w.])")
_DIMS = re.compile(rb"tensor<((?:[0-9?]+x)*)")
_ELEMENT = re.compile(rb"\b(f16|f32|bf16|i1|i8|i32|i64|f8E4M3FN)\b")
_LIST = re.compile(rb"(device_size|stride_map|dims|perm|low|high|normalized_shape) = \[([^\]]*)\]")


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def flip_bytes(data: bytes, rng: random.Random) -> bytes:
    """Flip one bit in one to four bytes."""
    if not data:
        return data
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    return bytes(buf)


def delete_lines(data: bytes, rng: random.Random) -> bytes:
    """Delete one to three consecutive lines."""
    lines = _lines(data)
    start = rng.randrange(len(lines))
    del lines[start : start + rng.randint(1, 3)]
    return b"\n".join(lines)


def duplicate_line(data: bytes, rng: random.Random) -> bytes:
    """Repeat one line one to three times."""
    lines = _lines(data)
    i = rng.randrange(len(lines))
    lines[i:i] = [lines[i]] * rng.randint(1, 3)
    return b"\n".join(lines)


def swap_lines(data: bytes, rng: random.Random) -> bytes:
    """Swap two lines."""
    lines = _lines(data)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def extreme_int(data: bytes, rng: random.Random) -> bytes:
    """Replace one to three integer literals with extreme values."""
    for _ in range(rng.randint(1, 3)):
        matches = list(_INT.finditer(data))
        if not matches:
            return data
        m = rng.choice(matches)
        data = data[: m.start()] + rng.choice(EXTREME_INTS).encode() + data[m.end() :]
    return data


def _nested_region(depth: int) -> bytes:
    return b'"test.op"() ({\n' * depth + b'"test.op"() : () -> ()\n' + b"}) : () -> ()\n" * depth


def _nested_attr(depth: int) -> bytes:
    return b'"test.op"() {deep = ' + b"[" * depth + b"1" + b"]" * depth + b"} : () -> ()\n"


def _nested_type(depth: int) -> bytes:
    inner = b"tensor<4xf16>"
    for _ in range(depth):
        inner = b"tuple<" + inner + b">"
    return b'"test.op"() : () -> ' + inner + b"\n"


def deep_nesting(data: bytes, rng: random.Random) -> bytes:
    """Insert a region, attribute or type nested 50 to 3000 levels deep before a line."""
    depth = rng.choice((50, 200, 499, 501, 800, 3000))
    make = rng.choice((_nested_region, _nested_attr, _nested_type))
    lines = _lines(data)
    lines.insert(rng.randrange(len(lines) + 1), make(depth))
    return b"\n".join(lines)


def non_utf8(data: bytes, rng: random.Random) -> bytes:
    """Insert bytes that are not UTF-8 (or a NUL) at a random position."""
    i = rng.randrange(len(data) + 1)
    return data[:i] + rng.choice(BAD_BYTES) + data[i:]


def edit_element_type(data: bytes, rng: random.Random) -> bytes:
    """Change one to all occurrences of an element type into another."""
    matches = list(_ELEMENT.finditer(data))
    if not matches:
        return data
    new = rng.choice(ELEMENT_TYPES).encode()
    if rng.random() < 0.5:
        m = rng.choice(matches)
        return data[: m.start()] + new + data[m.end() :]
    return re.sub(rb"\b" + re.escape(rng.choice(matches).group(0)) + rb"\b", new, data)


def _new_dims(dims: list[bytes], rng: random.Random) -> list[bytes]:
    choice = rng.randrange(5)
    if choice == 0 and dims:
        dims[rng.randrange(len(dims))] = rng.choice((*EXTREME_INTS[:12], "?", "3", "65")).encode()
    elif choice == 1:
        dims.insert(rng.randrange(len(dims) + 1), rng.choice((b"1", b"2", b"3", b"128")))
    elif choice == 2 and dims:
        del dims[rng.randrange(len(dims))]
    elif choice == 3:
        dims = [b"2"] * rng.choice((7, 8, 9, 12))
    else:
        dims = [rng.choice((b"99999999999", b"4096", b"65536", b"16384")), *dims]
    return dims


def edit_shape(data: bytes, rng: random.Random) -> bytes:
    """Change the shape of one tensor type, or of every tensor with that shape."""
    matches = list(_DIMS.finditer(data))
    if not matches:
        return data
    m = rng.choice(matches)
    dims = [d for d in m.group(1).split(b"x") if d]
    new = b"tensor<" + b"".join(d + b"x" for d in _new_dims(dims, rng))
    if rng.random() < 0.5:
        return data[: m.start()] + new + data[m.end() :]
    return data.replace(m.group(0), new)


def edit_attribute(data: bytes, rng: random.Random) -> bytes:
    """Edit an integer list (device_size, stride_map, dims, perm, ...) or drop a layout."""
    if rng.random() < 0.2 and b"#ktir.tiled<" in data:
        return re.sub(rb", #ktir.tiled<[^>]*>", b"", data, count=rng.randint(1, 3))
    matches = list(_LIST.finditer(data))
    if not matches:
        return extreme_int(data, rng)
    m = rng.choice(matches)
    values = [v.strip() for v in m.group(2).split(b",") if v.strip()]
    op = rng.randrange(4)
    if op == 0 and values:
        values[rng.randrange(len(values))] = rng.choice(EXTREME_INTS).encode()
    elif op == 1 and values:
        del values[rng.randrange(len(values))]
    elif op == 2:
        values.insert(rng.randrange(len(values) + 1), rng.choice((b"1", b"0", b"-1", b"64", b"2")))
    else:
        rng.shuffle(values)
    new = m.group(1) + b" = [" + b", ".join(values) + b"]"
    return data[: m.start()] + new + data[m.end() :]


def truncate(data: bytes, rng: random.Random) -> bytes:
    """Cut the input at a random byte."""
    return data[: rng.randrange(len(data) + 1)]


def delete_token(data: bytes, rng: random.Random) -> bytes:
    """Delete or duplicate one whitespace-separated token."""
    tokens = re.split(rb"(\s+)", data)
    words = [i for i, t in enumerate(tokens) if t.strip()]
    if not words:
        return data
    i = rng.choice(words)
    tokens[i] = b"" if rng.random() < 0.5 else tokens[i] + b" " + tokens[i]
    return b"".join(tokens)


_TENSOR_DIM = re.compile(rb"(?<=[<x])(\d+)(?=x)")


def scale_dim(data: bytes, rng: random.Random) -> bytes:
    """Replace one dim size by another in every tensor type, so the shapes stay consistent."""
    sizes = sorted({m.group(1) for m in _TENSOR_DIM.finditer(data)})
    if not sizes:
        return data
    old = rng.choice(sizes)
    new = rng.choice(
        (b"1", b"3", b"65", b"127", b"4096", b"99999999999", b"2147483648", b"4611686018427387904")
    )
    return re.sub(rb"(?<=[<x])" + old + rb"(?=x)", new, data)


def drop_layouts(data: bytes, rng: random.Random) -> bytes:
    """Remove every `#ktir.tiled` encoding (or every `ktir.layout` pin)."""
    if rng.random() < 0.5:
        return re.sub(rb", #ktir.tiled<[^>]*>", b"", data)
    return re.sub(rb"\{ktir.layout = #ktir.tiled<[^>]*>\}", b"", data)


def unmutated(data: bytes, rng: random.Random) -> bytes:
    """No change: the corpus input as is (a baseline every run should pass)."""
    return data


MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "none": unmutated,
    "scale-dim": scale_dim,
    "drop-layouts": drop_layouts,
    "flip": flip_bytes,
    "delete-lines": delete_lines,
    "duplicate-line": duplicate_line,
    "swap-lines": swap_lines,
    "extreme-int": extreme_int,
    "deep-nesting": deep_nesting,
    "non-utf8": non_utf8,
    "element-type": edit_element_type,
    "shape": edit_shape,
    "attribute": edit_attribute,
    "truncate": truncate,
    "token": delete_token,
}
WEIGHTS = {"none": 2, "scale-dim": 4, "extreme-int": 3, "shape": 3, "attribute": 3, "element-type": 2}


# ---------------------------------------------------------------------------------------------
# Cases: a mutated input and one tool invocation
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One invocation: `argv` with `{input}`, `{out}`, `{trace}` and `{tmp}` placeholders."""

    index: int
    seed: str
    mutations: tuple[str, ...]
    tool: str
    mode: str
    argv: tuple[str, ...]
    data: bytes
    outputs: tuple[str, ...] = ()  # placeholders of files that must not exist after a failure
    files: tuple[tuple[str, bytes], ...] = ()  # more inputs, written into {tmp} under these names


BAD_OPTIONS = (
    ("ktir-opt", ("-p", "ktir-compile{cores=0}")),
    ("ktir-opt", ("-p", "ktir-compile{cores=99}")),
    ("ktir-opt", ("-p", "ktir-compile{policy=bogus}")),
    ("ktir-opt", ("-p", "ktir-compile{solver=bogus}")),
    ("ktir-opt", ("-p", "ktir-divide-work{cores=-1}")),
    ("ktir-opt", ("-p", "ktir-propagate-layouts{beam-width=-5}")),
    ("ktir-opt", ("-p", "ktir-compile{cores=9223372036854775808}")),
    ("ktir-run", ("--cores", "0")),
    ("ktir-run", ("--cores", "64")),
    ("ktir-run", ("--policy", "bogus")),
    ("ktir-run", ("--top", "x")),
)


def _mutate(seed: Seed, rng: random.Random) -> tuple[bytes, tuple[str, ...]]:
    names = list(MUTATIONS)
    weights = [WEIGHTS.get(n, 1) for n in names]
    chosen = tuple(rng.choices(names, weights, k=rng.choice((1, 1, 1, 2, 2, 3))))
    data = seed.text.encode()
    for name in chosen:
        data = MUTATIONS[name](data, rng)
    return data, chosen


def _opt_invocation(seed: Seed, pipelines: Sequence[str], rng: random.Random) -> tuple[str, list[str]]:
    roll = rng.random()
    split = ["--split-input-file"] if seed.split else []
    if seed.annotated and roll < 0.3:
        return "verify-diagnostics", ["--split-input-file", "--verify-diagnostics", *_pipeline_of(seed)]
    if roll < 0.45:
        return "compile", [*split, "-p", f"ktir-compile{{cores={rng.choice((1, 2, 4, 32))}}}"]
    if roll < 0.75:
        spec = rng.choice(seed.pipelines) if seed.pipelines and rng.random() < 0.6 else rng.choice(pipelines)
        return "pipeline", [*split, "-p", spec]
    if roll < 0.85:
        return "generic", [*split, "--print-op-generic"]
    return "plain", split


def _pipeline_of(seed: Seed) -> list[str]:
    return ["-p", seed.pipelines[0]] if seed.pipelines else []


def seed_weight(seed: Seed) -> int:
    """
    Inputs that are valid as written weigh 3, the invalid-input tests 1: mutations of valid
    IR reach the passes and the simulator more often."""
    return 1 if "invalid" in seed.name or "expected-error" in seed.text else 3


def make_case(index: int, seed_value: int, corpus: Sequence[Seed], pipelines: Sequence[str]) -> Case:
    """Case `index` of run `seed_value`: a function of those two and the corpus only."""
    rng = random.Random(f"{seed_value}:{index}")
    seed = rng.choices(corpus, [seed_weight(s) for s in corpus])[0]
    data, mutations = _mutate(seed, rng)
    kernel = kernel_inputs(seed.name, seed.text) if seed.name.startswith(KERNELS) else None
    if kernel is not None and rng.random() < 0.5:  # a ktdp kernel on the ktdp engine
        function, inputs = kernel
        argv = ("{input}", "--function", function, "--inputs", "{tmp}/inputs.npz", "-o", "{out}.npz")
        files = (("inputs.npz", inputs),)
        return Case(index, seed.name, mutations, "ktir-run", "ktdp", argv, data, ("{out}.npz",), files)
    if rng.random() < 0.02:
        tool, extra = rng.choice(BAD_OPTIONS)
        return Case(index, seed.name, mutations, tool, "bad-option", ("{input}", *extra), data)
    if rng.random() < 0.25:
        extra = ["--cores", str(rng.choice((1, 2, 4)))]
        outputs: tuple[str, ...] = ()
        if rng.random() < 0.3:
            extra += ["-o", "{out}.npz", "--trace", "{trace}"]
            outputs = ("{out}.npz", "{trace}")
        return Case(index, seed.name, mutations, "ktir-run", "run", ("{input}", *extra), data, outputs)
    mode, extra = _opt_invocation(seed, pipelines, rng)
    argv = ("{input}", *extra, "-o", "{out}")
    return Case(index, seed.name, mutations, "ktir-opt", mode, argv, data, ("{out}",))


def iter_cases(seed: int, count: int, only: str = "") -> Iterator[Case]:
    """The cases of a run (on the corpus inputs whose name contains `only`), for tests and reproduction."""
    corpus = [s for s in load_corpus() if only in s.name]
    if not corpus:
        raise ValueError(f"no corpus input under {CORPUS} has '{only}' in its name")
    pipelines = sorted({p for s in corpus for p in s.pipelines} | {"ktir-compile{cores=2}"})
    for i in range(count):
        yield make_case(i, seed, corpus, pipelines)
