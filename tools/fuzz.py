"""
`tools/fuzz.py`: a deterministic mutation fuzzer of `ktir-opt` and `ktir-run` over the lit corpus.

```
.venv/bin/python tools/fuzz.py --short                 # ~500 invocations, under 2 minutes on 2 cores
.venv/bin/python tools/fuzz.py --long --jobs 2         # >= 10,000 invocations
.venv/bin/python tools/fuzz.py --seed 7 --count 2000 --failures /tmp/fuzz
```

The cases (the corpus, the mutations, the tool invocations, all a function of the seed) come
from `tools/fuzz_cases.py`; this module runs them and reports.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ktir.tools.fuzz_cases import Case, iter_cases

SHORT_COUNT = 500
LONG_COUNT = 10_000
FAILING = ("internal error", "traceback", "hang", "wrote on failure", "crash")
OUTCOMES = ("ok", "error", "tool error", "usage", "unlocated", *FAILING)


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
    import ktir.tools.ktir_run
    import ktir.tools.sim_run  # noqa: F401  (the tools and the simulator imported once, up front)

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
        for name, content in case.files:
            (self.directory / "tmp" / name).write_bytes(content)
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
        if case.files:  # the extra inputs beside the case, in a directory of its own
            extra = stem.with_name(stem.name + "-tmp")
            extra.mkdir(exist_ok=True)
            for name, content in case.files:
                (extra / name).write_bytes(content)
            paths["{tmp}"] = str(extra)
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


if __name__ == "__main__":
    sys.exit(main())
