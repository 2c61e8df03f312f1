"""
`tools/fuzz.py`: a deterministic mutation fuzzer of `ktir-opt` and `ktir-run` over the lit corpus.

```
.venv/bin/python tools/fuzz.py --short                 # ~500 invocations, under 2 minutes on 2 cores
.venv/bin/python tools/fuzz.py --long --jobs 2         # >= 10,000 invocations
.venv/bin/python tools/fuzz.py --seed 7 --count 2000 --failures /tmp/fuzz
```

The corpus is every `.mlir` file under `test/lit` (and each `// -----` chunk of it), with the
RUN and FileCheck lines blanked (so line numbers stay those of the file); `expected-*`
annotations stay for `--verify-diagnostics`. Case `i` of seed `s` is derived from
`random.Random(f"{s}:{i}")` alone: the same seed and count give the same inputs and command
lines, whatever `--jobs` is. Each case applies one to three mutations (byte flips, deleted,
duplicated or swapped lines, integers swapped for extreme values such as 2**63 or 99999999999,
deep nesting, non-UTF-8 bytes, element type and shape edits, `#ktir.tiled` and other attribute
edits, truncation, splicing lines of another input) and runs one tool invocation: `ktir-opt`
with no pipeline, with `ktir-compile`, with a pipeline taken from the corpus RUN lines, with
`--split-input-file --verify-diagnostics`, or `ktir-run`; a few use bad options on purpose.

Invocations run in place (the tools' `main(argv)`) inside worker subprocesses, one case at a
time each, under a watchdog: a case that outlives `--timeout` is a hang, and its worker is
killed and replaced. Each outcome is classified:

| outcome | meaning |
|---|---|
| ok | exit 0 |
| error | exit 1 with a located `file:line:col: error:` line |
| tool error | exit 1 with one `ktir-opt: error:` / `ktir-run: error:` line (a file, the inputs) |
| usage | exit 2 (a bad command line or pass option) |
| unlocated | exit 1 with only `<unknown>:0: error:` diagnostics |
| internal error | the tools' last-resort `internal error` line |
| traceback | an exception escaped `main` (or a traceback was printed) |
| hang | the case outlived `--timeout` |
| wrote on failure | a non-zero exit that left an `-o`/`--trace` file behind |
| crash | the worker died (a signal, the memory limit) or another exit code or output |

The run prints the outcome table (per tool and mode) and the distinct failure messages,
writes each failing case (input and command line) to `--failures`, and exits 1 if any
internal error, traceback, hang, write on failure or crash occurred (0 otherwise).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "test" / "lit"
SHORT_COUNT = 500
LONG_COUNT = 10_000
FAILING = ("internal error", "traceback", "hang", "wrote on failure", "crash")
OUTCOMES = ("ok", "error", "tool error", "usage", "unlocated", *FAILING)

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
    from ktir.compile import PipelineError, parse_pipeline

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


# ---------------------------------------------------------------------------------------------
# Outcomes
# ---------------------------------------------------------------------------------------------

_LOCATED_ERROR = re.compile(r"^[^\s<].*?:\d+:\d+: error: ", re.MULTILINE)
_TOOL_ERROR = re.compile(r"^ktir-(opt|run): error: ", re.MULTILINE)


@dataclass
class Result:
    """What one case did: exit code (None: hung or died), stderr, and the classification."""

    case: Case
    code: int | None
    stderr: str
    outcome: str = ""
    seconds: float = 0.0
    leftovers: list[str] = field(default_factory=list)


def classify(code: int | None, stderr: str, traceback_text: str, leftovers: Sequence[str]) -> str:
    """The outcome of one invocation (see the module docstring)."""
    if code is None:
        return "hang" if traceback_text == "timeout" else "crash"
    if traceback_text or "Traceback (most recent call last)" in stderr:
        return "traceback"
    if "internal error" in stderr:
        return "internal error"
    if code != 0 and leftovers:
        return "wrote on failure"
    return {0: "ok", 2: "usage"}.get(code) or _error_kind(code, stderr)


def _error_kind(code: int, stderr: str) -> str:
    """Exit 1: located, tool-level or unlocated error; anything else is a crash."""
    if code != 1:
        return "crash"
    if _LOCATED_ERROR.search(stderr):
        return "error"
    if _TOOL_ERROR.search(stderr):
        return "tool error"
    if "<unknown>:0: error: " in stderr:
        return "unlocated"
    return "crash"


def failure_key(result: Result) -> str:
    """A short message naming the kind of failure, numbers and quoted names blanked, to group them."""
    case = result.case
    lines = result.stderr.strip().splitlines()
    if result.outcome == "internal error":
        text = next(line for line in lines if "internal error" in line)
    elif result.outcome == "traceback":
        text = lines[-1] if lines else "traceback"
    elif result.outcome == "wrote on failure":
        text = f"{case.tool} {case.mode} left {', '.join(Path(p).name for p in result.leftovers)}"
    else:  # hang, crash
        text = f"{case.tool} {case.mode}" + (f": {lines[0]}" if lines else "")
    text = re.sub(r"\d+", "N", text)
    text = re.sub(r"'[^']*'", "'…'", text)
    return f"{result.outcome}: {text[:160]}"


# ---------------------------------------------------------------------------------------------
# The worker: runs cases in place, one at a time, reading JSON requests on stdin
# ---------------------------------------------------------------------------------------------


def _run_tool(tool: str, argv: list[str]) -> tuple[int, str, str]:
    """Run `tool`'s `main(argv)` in this process; (exit code, stderr, escaped traceback)."""
    if tool == "ktir-opt":
        from ktir.tools.ktir_opt import main
    else:
        from ktir.tools.ktir_run import main
    out, err = io.StringIO(), io.StringIO()
    escaped = ""
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        except BaseException:
            code, escaped = 1, traceback.format_exc()
    return int(code), err.getvalue(), escaped


def _limit_memory(limit_bytes: int) -> None:
    if limit_bytes <= 0:
        return
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))


def worker(memory_limit: int) -> int:
    """The worker loop: one JSON request per line on stdin, one JSON answer per line on stdout."""
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # stray writes to the real stdout must not corrupt the answers
    os.dup2(devnull, 2)
    _limit_memory(memory_limit)
    import ktir.tools.ktir_opt
    import ktir.tools.ktir_run  # noqa: F401  (both imported once, up front)

    for line in sys.stdin:
        request = json.loads(line)
        code, stderr, escaped = _run_tool(request["tool"], request["argv"])
        if len(stderr) > 24_000:  # keep the first diagnostics and the end
            stderr = stderr[:20_000] + "\n[...]\n" + stderr[-4_000:]
        answers.write(json.dumps({"code": code, "stderr": stderr, "traceback": escaped}) + "\n")
        answers.flush()
    return 0


class Worker:
    """A worker subprocess and its private directory; restarted after a hang or a crash."""

    RECYCLE_AFTER = 400
    """Cases one subprocess runs before it is replaced, so state the tools cache stays bounded."""

    def __init__(self, directory: Path, memory_limit: int) -> None:
        self.directory = directory
        self.memory_limit = memory_limit
        self.process: subprocess.Popen[bytes] | None = None
        self.served = 0

    def start(self) -> subprocess.Popen[bytes]:
        """Start the subprocess if it is not running (or has run `RECYCLE_AFTER` cases)."""
        if self.served >= self.RECYCLE_AFTER:
            self.stop()
        if self.process is None or self.process.poll() is not None:
            self.served = 0
            env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
            env.pop("KTIR_DEBUG", None)
            self.process = subprocess.Popen(
                [sys.executable, __file__, "--worker", "--memory-limit", str(self.memory_limit)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd=self.directory,
            )
        return self.process

    def stop(self) -> None:
        """Kill the subprocess this worker started (hung, or at the end)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
        if self.process is not None:
            self.process.wait()
        self.process = None

    def paths(self, case: Case) -> dict[str, str]:
        """The placeholder values of this worker's directory."""
        return {
            "{input}": str(self.directory / "input.mlir"),
            "{out}": str(self.directory / "out"),
            "{trace}": str(self.directory / "trace.json"),
            "{tmp}": str(self.directory / "tmp"),
        }

    def prepare(self, case: Case) -> list[str]:
        """Write the input, clear old outputs; the concrete argv."""
        for child in self.directory.iterdir():
            if child.is_dir():
                shutil.rmtree(child)
            else:
                child.unlink()
        (self.directory / "tmp").mkdir()
        paths = self.paths(case)
        Path(paths["{input}"]).write_bytes(case.data)
        return [_substitute(arg, paths) for arg in case.argv]

    def run(self, case: Case, timeout: float) -> Result:
        """Run one case under the watchdog."""
        argv = self.prepare(case)
        process = self.start()
        self.served += 1
        assert process.stdin is not None and process.stdout is not None
        start = time.monotonic()
        try:
            process.stdin.write((json.dumps({"tool": case.tool, "argv": argv}) + "\n").encode())
            process.stdin.flush()
        except BrokenPipeError:
            return self._died(case, start)
        ready, _, _ = select.select([process.stdout], [], [], timeout)
        if not ready:
            self.stop()
            return Result(case, None, "", classify(None, "", "timeout", []), time.monotonic() - start)
        line = process.stdout.readline()
        if not line:
            return self._died(case, start)
        answer = json.loads(line)
        leftovers = [p for p in (_substitute(o, self.paths(case)) for o in case.outputs) if Path(p).exists()]
        outcome = classify(answer["code"], answer["stderr"], answer["traceback"], leftovers)
        stderr = answer["stderr"] + answer["traceback"]
        return Result(case, answer["code"], stderr, outcome, time.monotonic() - start, leftovers)

    def _died(self, case: Case, start: float) -> Result:
        code = self.process.wait() if self.process is not None else None
        self.process = None
        return Result(case, None, f"worker died (exit {code})", "crash", time.monotonic() - start)


def _substitute(arg: str, paths: dict[str, str]) -> str:
    for key, value in paths.items():
        arg = arg.replace(key, value)
    return arg


# ---------------------------------------------------------------------------------------------
# Driving a run
# ---------------------------------------------------------------------------------------------


@dataclass
class Options:
    """A run's settings."""

    seed: int
    count: int
    jobs: int
    timeout: float
    memory_limit: int
    failures: Path
    quiet: bool = False
    only: str = ""


def generate(options: Options) -> list[Case]:
    """The run's cases, in index order."""
    return list(iter_cases(options.seed, options.count, options.only))


def execute(cases: Sequence[Case], options: Options, progress: Callable[[], None]) -> list[Result]:
    """Run every case on `options.jobs` workers; results in case order."""
    results: list[Result | None] = [None] * len(cases)
    pending = iter(range(len(cases)))
    lock = threading.Lock()

    def drive(work: Worker) -> None:
        try:
            while True:
                with lock:
                    index = next(pending, None)
                if index is None:
                    return
                results[index] = work.run(cases[index], options.timeout)
                progress()
        finally:
            work.stop()

    with tempfile.TemporaryDirectory(prefix="ktir-fuzz-") as root:
        workers = []
        for j in range(max(options.jobs, 1)):
            directory = Path(root) / f"worker{j}"
            directory.mkdir()
            workers.append(Worker(directory, options.memory_limit))
        threads = [threading.Thread(target=drive, args=(w,), daemon=True) for w in workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return [r for r in results if r is not None]


def save_failures(results: Sequence[Result], directory: Path) -> int:
    """Write each failing case's input and a reproduction note; the number written."""
    failing = [r for r in results if r.outcome in FAILING]
    if not failing:
        return 0
    directory.mkdir(parents=True, exist_ok=True)
    for result in failing:
        case = result.case
        stem = directory / f"case{case.index:05d}-{result.outcome.replace(' ', '-')}"
        stem.with_suffix(".mlir").write_bytes(case.data)
        paths = {"{input}": str(stem.with_suffix(".mlir")), "{out}": "/tmp/out", "{trace}": "/tmp/t.json"}
        paths["{tmp}"] = "/tmp"
        command = " ".join([case.tool, *(repr(_substitute(a, paths)) for a in case.argv)])
        note = {
            "command": command,
            "seed": case.seed,
            "mutations": case.mutations,
            "exit": result.code,
            "seconds": round(result.seconds, 2),
            "stderr": result.stderr[-4000:],
        }
        stem.with_suffix(".json").write_text(json.dumps(note, indent=2) + "\n", encoding="utf-8")
    return len(failing)


def outcome_table(results: Sequence[Result], title: str) -> object:
    """A `rich` table: one row per tool and mode, one column per outcome seen, and totals."""
    from rich.table import Table

    counts: Counter[tuple[str, str]] = Counter((f"{r.case.tool} {r.case.mode}", r.outcome) for r in results)
    rows = sorted({row for row, _ in counts})
    columns = [o for o in OUTCOMES if any(outcome == o for _, outcome in counts)]
    table = Table(title=title)
    table.add_column("tool / mode")
    for column in [*columns, "total"]:
        table.add_column(column, justify="right")
    for row in rows:
        cells = [str(counts.get((row, c), 0) or "") for c in columns]
        table.add_row(row, *cells, str(sum(counts.get((row, c), 0) for c in columns)))
    totals = Counter(r.outcome for r in results)
    table.add_row("total", *[str(totals.get(c, 0)) for c in columns], str(len(results)), style="bold")
    return table


def report(results: Sequence[Result], options: Options, seconds: float) -> int:
    """Print the table and the failure groups; write failures; the exit code."""
    from rich.console import Console

    console = Console(stderr=False, width=None if sys.stdout.isatty() else 160)
    title = (
        f"ktir fuzz: seed {options.seed}, {len(results)} invocations, {seconds:.1f} s, {options.jobs} jobs"
    )
    console.print(outcome_table(results, title))
    groups = Counter(failure_key(r) for r in results if r.outcome in FAILING)
    for key, n in groups.most_common():
        console.print(f"{n:6d}  {key}", markup=False, highlight=False)
    if written := save_failures(results, options.failures):
        console.print(f"{written} failing case(s) written to {options.failures}", markup=False)
        return 1
    slowest = max(results, key=lambda r: r.seconds, default=None)
    if slowest is not None and not options.quiet:
        console.print(
            f"slowest: case {slowest.case.index} ({slowest.case.tool} {slowest.case.mode}) "
            f"{slowest.seconds:.1f} s",
            markup=False,
        )
    return 0


def fuzz(options: Options) -> int:
    """Generate, run and report; the exit code (1 if anything failed)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    start = time.monotonic()
    cases = generate(options)
    columns = (TextColumn("fuzzing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, transient=True, disable=options.quiet or not sys.stderr.isatty()) as bar:
        task = bar.add_task("cases", total=len(cases))
        results = execute(cases, options, lambda: bar.advance(task))
    return report(results, options, time.monotonic() - start)


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="fuzz.py", description="Mutation fuzzer of ktir-opt and ktir-run.")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--short", action="store_true", help=f"{SHORT_COUNT} invocations (the default)")
    size.add_argument("--long", action="store_true", help=f"{LONG_COUNT} invocations")
    parser.add_argument("--count", type=int, help="number of invocations (overrides --short/--long)")
    parser.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds before a case is a hang")
    parser.add_argument(
        "--memory-limit", type=int, default=3 * 1024**3, help="address-space limit per worker, bytes"
    )
    parser.add_argument("--failures", type=Path, help="directory for failing cases")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--only", default="", help="fuzz only corpus inputs whose name contains this")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.count is not None and args.count < 1:
        parser.error("--count must be positive")
    if args.jobs < 1 or args.timeout <= 0:
        parser.error("--jobs and --timeout must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; the exit code."""
    args = _arguments(argv)
    if args.worker:
        return worker(args.memory_limit)
    count = args.count or (LONG_COUNT if args.long else SHORT_COUNT)
    failures = args.failures or Path(tempfile.gettempdir()) / f"ktir-fuzz-failures-{args.seed}"
    options = Options(
        args.seed, count, args.jobs, args.timeout, args.memory_limit, failures, args.quiet, args.only
    )
    return fuzz(options)


def iter_cases(seed: int, count: int, only: str = "") -> Iterator[Case]:
    """The cases of a run (on the corpus inputs whose name contains `only`), for tests and reproduction."""
    corpus = [s for s in load_corpus() if only in s.name]
    if not corpus:
        raise ValueError(f"no corpus input under {CORPUS} has '{only}' in its name")
    pipelines = sorted({p for s in corpus for p in s.pipelines} | {"ktir-compile{cores=2}"})
    for i in range(count):
        yield make_case(i, seed, corpus, pipelines)


if __name__ == "__main__":
    sys.exit(main())
