"""
Run the model zoo: compile every architecture of `architectures.py` with `ktir.compile`, run it on
the simulator and compare it with eager PyTorch (`helpers.check_against_eager`, the bounds of
`test/unit/test_compile_models.py`).

```
python test/zoo/run.py                           # every architecture, in registry order
python test/zoo/run.py --only llama,bert,vit     # some of them
python test/zoo/run.py --family moe --json moe.json
python test/zoo/run.py --min-pass 40             # exit 1 if fewer than 40 pass
```

Each architecture runs in a forked process (a crash or a hang stops only that one; `--timeout`,
300 s by default) and gives one row: its status, the graph-level ops imported, the device
kernels and host ops (`ktir.cpu_fallback`) of the compiled program, the largest difference from
eager in fp16 ulps (of the fp64 truth's largest magnitude), the simulated and the wall time.

Every architecture that runs is also run timing-only (`Program.estimate`): its kernels must take
the cycles of the run on values (a grouped matmul's, which depend on the routing, left out).

Statuses: `pass`; `mismatch` (ran, outside the bounds, or its timing-only cycles differ);
`unsupported` (the importer rejects ATen ops: they are listed as the row's blockers);
`export-error` (`torch.export` cannot trace the model); `error` (anything else: the build, a
compiler stage, the simulator, a timeout). A failed row keeps the first line of its error. The
end prints the table, the blockers with the architectures each one stops, and "N/M
architectures pass".
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from zoo.architectures import ARCHITECTURES, FAMILIES, SKIPPED, Architecture

Status = Literal["pass", "mismatch", "unsupported", "export-error", "error"]
STATUSES: tuple[Status, ...] = ("pass", "mismatch", "unsupported", "export-error", "error")
TIMEOUT = 300.0
"""Seconds one architecture may take (build, compile, run and compare)."""


@dataclass
class Row:
    """What one architecture did."""

    model: str
    family: str
    status: Status = "error"
    stage: str = ""
    """The last stage started: build, export, import, compile, run, timing or compare."""
    ops: int | None = None
    """Graph-level ktir ops of the imported module."""
    kernels: int | None = None
    """Device kernels of the compiled program (`Report.device_kernels`)."""
    host_ops: list[str] = field(default_factory=list)
    """The ATen ops run on the host, one entry per host kernel."""
    error_ulps: float | None = None
    """max |ours - eager|, in fp16 ulps of the truth's largest magnitude."""
    truth_ulps: float | None = None
    """max |ours - fp64 truth| in the same ulps."""
    eager_truth_ulps: float | None = None
    """max |eager - fp64 truth| in the same ulps (eager's own error)."""
    time_us: float | None = None
    """Simulated time of one call."""
    seconds: float = 0.0
    """Wall time of the whole row."""
    message: str = ""
    """The first line of the error: `ExceptionType: message`."""
    blockers: list[str] = field(default_factory=list)
    """What stopped it: the ATen ops the importer rejected, or the error kind."""


#### One architecture (in the worker process) ####


class Mismatch(Exception):
    """The compiled model ran but is outside `check_against_eager`'s bounds."""


StageHook = Callable[[str], None]


def evaluate(architecture: Architecture, on_stage: StageHook | None = None) -> Row:
    """Build, import, compile, run and compare one architecture; never raises."""
    row = Row(architecture.name, architecture.family)
    start = time.perf_counter()

    def enter(stage: str) -> None:
        row.stage = stage
        if on_stage is not None:
            on_stage(stage)

    try:
        _evaluate(architecture, row, enter)
        row.status = "pass"
    except Exception as error:
        row.status = status_of(row.stage, error)
        row.message = first_line(error)
        row.blockers = blockers_of(row.stage, error)
    row.seconds = time.perf_counter() - start
    return row


def _evaluate(architecture: Architecture, row: Row, enter: StageHook) -> None:
    import ktir
    from ktir.frontend.fx import export_program, import_exported

    enter("build")
    model16, model64, args, kwargs = architecture.build()
    enter("export")
    exported = export_program(model16, args, kwargs)
    enter("import")
    row.ops = count_ops(import_exported(exported).module)
    enter("compile")
    program = ktir.compile(model16, args, kwargs, quiet=True)
    enter("run")
    output = program(*args)
    report = program.report
    row.kernels, row.time_us = report.device_kernels, report.time_us
    row.host_ops = host_ops(program)
    enter("timing")
    check_timing_only(program)
    enter("compare")
    compare(output, model16, model64, args, kwargs, row)


def check_timing_only(program: Any) -> None:
    """
    The timing-only run (`Program.estimate`) gives every kernel the cycles the run on values
    gave; a grouped matmul's line is left out, as its time depends on the routing it assumes.
    """
    run, estimated = program.report, program.estimate()
    keep = [i for i, k in enumerate(run.kernels) if k.op != "ktir.grouped_matmul"]
    ours = [estimated.kernels[i].cycles for i in keep]
    if ours != [run.kernels[i].cycles for i in keep] or len(run.kernels) != len(estimated.kernels):
        raise Mismatch("the timing-only run's cycles differ from the run on values")


def compare(output: Any, model16: Any, model64: Any, args: tuple, kwargs: dict, row: Row) -> None:
    """`check_against_eager` on the program's output; its errors go to `row` in ulps."""
    from helpers import check_against_eager, model_output

    ours = model_output(output).numpy()
    try:
        errors = check_against_eager(ours, model16, model64, args, kwargs)
    except AssertionError as error:
        found = error.args[0] if error.args else None
        if isinstance(found, dict):
            _record_errors(found, row)
            raise Mismatch(_bounds_missed(found)) from None
        raise Mismatch(f"output {found}") from None
    _record_errors(errors, row)


def _record_errors(errors: dict[str, float], row: Row) -> None:
    ulp = errors["ulp"]
    row.error_ulps = errors["ours_vs_eager"] / ulp
    row.truth_ulps = errors["ours_vs_truth"] / ulp
    row.eager_truth_ulps = errors["eager_vs_truth"] / ulp


def _bounds_missed(errors: dict[str, float]) -> str:
    ulp = errors["ulp"]
    names = ("ours_vs_eager", "ours_vs_truth", "eager_vs_truth")
    eager, truth, eager_truth = (errors[name] / ulp for name in names)
    return (
        f"{eager:.3g} ulp from eager (bound 8), {truth:.3g} ulp from the fp64 truth "
        f"(bound 1.5 * {eager_truth:.3g} + 2 = {1.5 * eager_truth + 2:.3g})"
    )


def count_ops(module: Any) -> int:
    """The ops of an imported module's function body (not the module, function or return)."""
    structural = {"builtin.module", "func.func", "func.return"}
    return sum(1 for op in module.walk() if op.name not in structural)


def host_ops(program: Any) -> list[str]:
    """The host kernels of the last run, each named by its ATen op (`embedding`, `index`, ...)."""
    aten = {
        op.results[0].name_hint: str(op.properties["aten"].data)
        for op in program.module.walk()
        if op.name == "ktir.cpu_fallback" and op.results and "aten" in op.properties
    }
    found = []
    for kernel in program.report.kernels:
        if "(host)" in kernel.op:
            name = aten.get(kernel.name.lstrip("%"), kernel.op.replace("(host)", "").strip())
            found.append(name.removeprefix("aten::").removesuffix(".default"))
    return found


#### Classifying failures ####

_UNSUPPORTED = re.compile(
    r"unsupported ATen op '(?P<op>[^']+)'"
    r"|cannot import '(?P<converter>[^']+)'"
    r"|data-dependent or symbolic shape computation '(?P<symbolic>[^']+)'"
    r"|in-place update of (?P<mutation>\S+)"
)
_CASCADES = ("has no tensor value", "getitem of an output ktir does not produce")
"""Import diagnostics about a node whose input failed to import: not causes of their own."""


def status_of(stage: str, error: BaseException) -> Status:
    """The row's status for an `error` raised in `stage`."""
    if isinstance(error, Mismatch):
        return "mismatch"
    if stage == "export" or "torch.export cannot trace" in str(error):
        return "export-error"
    if stage == "import" and _UNSUPPORTED.search(str(error)):
        return "unsupported"
    return "error"


def first_line(error: BaseException) -> str:
    """`ExceptionType: first non-empty line of the message`."""
    text = next((line.strip() for line in str(error).splitlines() if line.strip()), "")
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def blockers_of(stage: str, error: BaseException) -> list[str]:
    """The causes the importer reported (each once, cascades left out), or one error kind."""
    if isinstance(error, Mismatch):
        return ["compare: outside the eager bounds"]
    found: list[str] = []
    for diagnostic in getattr(error, "diagnostics", []):
        kind = _diagnostic_kind(diagnostic)
        if kind and kind not in found:
            found.append(kind)
    return found or [error_kind(stage, error)]


def _diagnostic_kind(diagnostic: Any) -> str | None:
    """One import or export diagnostic as a blocker: an ATen op, or a kind with its place."""
    message = diagnostic.message
    if any(cascade in message for cascade in _CASCADES):
        return None
    if message.startswith("torch.export cannot trace"):
        reason = re.search(r"\((\w+)\)", message)
        where = diagnostic.location
        place = f" at {Path(where.file).name}:{where.line}" if where else ""
        return f"export: {reason.group(1) if reason else 'untraceable'}{place}"
    match = _UNSUPPORTED.search(message)
    if match is None:
        return None
    op, converter, symbolic, mutation = match.group("op", "converter", "symbolic", "mutation")
    if op:
        return op
    if converter:
        return f"{converter}: {message.split('): ', 1)[-1]}"
    return f"symbolic: {symbolic}" if symbolic else f"in-place update of {mutation}"


def error_kind(stage: str, error: BaseException) -> str:
    """`stage: ExceptionType: message` with numbers and quoted names blanked, to group similar errors."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", first_line(error))
    text = re.sub(r"\d+(\.\d+)?", "N", text)
    return f"{stage}: {text[:140]}"


#### Running every architecture in its own process ####


def _worker(name: str, connection: Any, verbose: bool) -> None:
    """The forked process: evaluate one architecture, announcing each stage, and send its row."""
    if not verbose:  # torch.export prints whole graphs when it fails; the row keeps the error
        _silence()
    warnings.simplefilter("ignore")
    import transformers

    transformers.logging.set_verbosity_error()
    try:
        row = evaluate(ARCHITECTURES[name], lambda stage: connection.send(("stage", stage)))
    except BaseException as error:  # evaluate never raises; a SystemExit or an interrupt might
        row = Row(name, ARCHITECTURES[name].family, message=first_line(error), blockers=["worker"])
        traceback.print_exc()
    connection.send(("row", asdict(row)))
    connection.close()


def _silence() -> None:
    """Send this process's stdout and stderr (the file descriptors) to /dev/null."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
        os.dup2(devnull, stream.fileno())
    os.close(devnull)


def run_isolated(architecture: Architecture, timeout: float = TIMEOUT, verbose: bool = False) -> Row:
    """`evaluate` in a forked process, stopped after `timeout` seconds; `verbose` keeps its output."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    start = time.perf_counter()
    process = context.Process(target=_worker, args=(architecture.name, send, verbose), daemon=True)
    process.start()
    send.close()
    try:
        result = _receive(receive, start + timeout)
    finally:
        process.join(1.0)
        if process.is_alive():
            process.kill()
            process.join()
    if isinstance(result, Row):
        return result
    row = Row(architecture.name, architecture.family, stage=result)
    if time.perf_counter() - start >= timeout:
        row.message = f"Timeout: no result after {timeout:.0f} s (stage {result})"
        row.blockers = [f"timeout in {result}"]
    else:
        row.message = f"WorkerDied: exit code {process.exitcode} (stage {result})"
        row.blockers = [f"crash in {result}"]
    row.seconds = time.perf_counter() - start
    return row


def _receive(connection: Any, deadline: float) -> Row | str:
    """The worker's row, or the last stage it announced if it stopped or ran out of time."""
    stage = "start"
    while (remaining := deadline - time.perf_counter()) > 0 and connection.poll(remaining):
        try:
            kind, payload = connection.recv()
        except EOFError:
            break
        if kind == "row":
            return Row(**payload)
        stage = payload
    return stage


def run_all(
    architectures: Sequence[Architecture], timeout: float = TIMEOUT, verbose: bool = False
) -> list[Row]:
    """Every architecture in order, one line of progress each on stderr."""
    _preload()
    rows = []
    for i, architecture in enumerate(architectures, 1):
        row = run_isolated(architecture, timeout, verbose)
        rows.append(row)
        detail = f"  {row.message}" if row.status != "pass" else ""
        print(
            f"[{i}/{len(architectures)}] {row.model}: {row.status} ({row.seconds:.1f} s){detail}",
            file=sys.stderr,
            flush=True,
        )
    return rows


def _preload() -> None:
    """Import the heavy modules once, before forking, so every worker starts at once."""
    import helpers  # noqa: F401
    import torch  # noqa: F401
    import transformers  # noqa: F401

    import ktir.compiler
    import ktir.frontend.fx  # noqa: F401


#### Output ####


def host_summary(names: Sequence[str]) -> str:
    """`embedding, index x2`: each host op once, with its count."""
    return ", ".join(f"{op} x{n}" if n > 1 else op for op, n in Counter(names).items())


COLUMNS = ("model", "family", "status", "ops", "kernels", "host ops", "ulps vs eager", "sim µs", "wall s")
NUMERIC = frozenset({"ops", "kernels", "ulps vs eager", "sim µs", "wall s"})


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def print_table(rows: Sequence[Row]) -> None:
    """The rows as a rich table, then the blockers and the summary line."""
    from rich.console import Console
    from rich.table import Table

    console = Console() if sys.stdout.isatty() else Console(width=220)
    table = Table(title="ktir model zoo", show_lines=False)
    for column in COLUMNS:
        table.add_column(column, justify="right" if column in NUMERIC else "left")
    table.add_column("error", overflow="fold")
    style = {"pass": "green", "mismatch": "yellow"}
    for row in rows:
        table.add_row(
            row.model, row.family, f"[{style.get(row.status, 'red')}]{row.status}[/]",
            _number(row.ops, 0), _number(row.kernels, 0), host_summary(row.host_ops),
            _number(row.error_ulps, 2), _number(row.time_us), f"{row.seconds:.1f}",
            "" if row.status == "pass" else row.message,
        )  # fmt: skip
    console.print(table)
    print_blockers(console, rows)
    console.print(summary(rows))


def blockers(rows: Sequence[Row]) -> dict[str, list[str]]:
    """Blocker -> the architectures it stops, most architectures first."""
    found: dict[str, list[str]] = {}
    for row in rows:
        if row.status != "pass":
            for blocker in row.blockers:
                found.setdefault(blocker, []).append(row.model)
    return dict(sorted(found.items(), key=lambda item: -len(item[1])))


def print_blockers(console: Any, rows: Sequence[Row]) -> None:
    """What stops the failing architectures: each ATen op or error kind, with the models it blocks."""
    from rich.table import Table

    table = Table(title="blockers (an architecture may have several)")
    table.add_column("ATen op or error", overflow="fold")
    table.add_column("n", justify="right")
    table.add_column("architectures", overflow="fold")
    for blocker, models in blockers(rows).items():
        table.add_row(blocker, str(len(models)), ", ".join(models))
    console.print(table)


def summary(rows: Sequence[Row]) -> str:
    """`N/M architectures pass` and the count of every other status."""
    counts = Counter(row.status for row in rows)
    others = ", ".join(f"{counts[s]} {s}" for s in STATUSES[1:] if counts[s])
    return f"{counts['pass']}/{len(rows)} architectures pass" + (f" ({others})" if others else "")


def write_json(path: Path, rows: Sequence[Row], seconds: float) -> None:
    """The rows, the blockers, the skipped architectures and the summary as JSON."""
    document = {
        "summary": summary(rows),
        "seconds": seconds,
        "rows": [asdict(row) for row in rows],
        "blockers": blockers(rows),
        "skipped": SKIPPED,
    }
    path.write_text(json.dumps(document, indent=2) + "\n")


#### Command line ####


def selected(only: str | None, family: str | None) -> list[Architecture]:
    """The architectures `--only` and `--family` select, in registry order."""
    chosen = list(ARCHITECTURES.values())
    if only:
        names = [n.strip() for n in only.split(",") if n.strip()]
        unknown = [n for n in names if n not in ARCHITECTURES]
        if unknown:
            known = ", ".join(ARCHITECTURES)
            raise SystemExit(f"unknown architecture(s): {', '.join(unknown)}; known: {known}")
        chosen = [a for a in chosen if a.name in names]
    if family:
        chosen = [a for a in chosen if a.family == family]
    return chosen


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description="Compile, simulate and check the ktir model zoo.")
    parser.add_argument("--only", help="comma-separated architecture names")
    parser.add_argument("--family", choices=FAMILIES)
    parser.add_argument("--json", type=Path, help="write the rows to this JSON file")
    parser.add_argument("--min-pass", type=int, default=0, help="exit 1 if fewer pass (default 0)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds per architecture")
    parser.add_argument("--verbose", action="store_true", help="keep the workers' own output")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the selected architectures, print the table; 0 if at least `--min-pass` pass."""
    arguments = parse_arguments(argv)
    architectures = selected(arguments.only, arguments.family)
    start = time.perf_counter()
    rows = run_all(architectures, arguments.timeout, arguments.verbose)
    seconds = time.perf_counter() - start
    print_table(rows)
    print(f"wall time {seconds:.0f} s")
    if arguments.json:
        write_json(arguments.json, rows, seconds)
    passed = sum(row.status == "pass" for row in rows)
    return 0 if passed >= arguments.min_pass else 1


if __name__ == "__main__":
    sys.exit(main())
