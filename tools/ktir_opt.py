"""
`ktir-opt`: the ktir modular optimizer driver, with `mlir-opt` conventions.

```
ktir-opt model.mlir -p 'canonicalize,arith-add-fastmath{flags=none}' -o out.mlir
ktir-opt invalid.mlir --split-input-file --verify-diagnostics
```

It is xDSL's `xDSLOptMain` with the ktir dialect and passes and its own flag set (mlir-opt's
names; docs/ktir-opt.md), plus what `mlir-opt` users rely on and xDSL does not do: diagnostics
as `file:line:col: error: message` with the source line and a caret; MLIR's
`--verify-diagnostics` (`expected-error @+1 {{...}}` annotations); `--pass-pipeline`,
`--mlir-print-ir-*`, `--mlir-timing` and `--list-passes` (`ktir.tools.pass_instrumentation`);
exit code 1 for bad input and 2 for a bad command line; no traceback; and nothing written to
`-o` unless every input chunk succeeded.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.syntax_printer import SyntaxPrinter
from xdsl.targets.mlir import MLIRTarget
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException
from xdsl.xdsl_opt_main import VersionAction, xDSLOptMain

from ktir import __version__
from ktir.dialects.ktdp.aliases import AliasPrinter, AliasPrinting, definitions
from ktir.dialects.ktdp.syntax import aliases
from ktir.ir.context import register_dialects
from ktir.ir.diagnostics import (
    Diagnostic,
    DiagnosticError,
    Location,
    Severity,
    SourceError,
    collect_diagnostics,
    decode_source,
    parse_module,
    render,
    verify_module,
)
from ktir.ir.expected_diagnostics import Expectation, check, parse_expectations
from ktir.ir.expected_diagnostics import _regex_of as regex_of
from ktir.passes.stages import expand_stages
from ktir.pipeline import PipelineError, available_passes, with_target
from ktir.tools.arguments import did_you_mean, suggesting
from ktir.tools.output_files import OutputError, check_writable, write_all
from ktir.tools.pass_instrumentation import (
    Instrumentation,
    describe_passes,
    pipeline_from_mlir,
    timing_report,
    timing_rows,
)

SPLIT_MARKER = "// -----"


class UsageError(Exception):
    """A bad command line (unknown pass or pass option); exit code 2."""


@dataclass
class Chunk:
    """One `// -----`-separated piece of the input; `first_line` is its 1-based line."""

    text: str
    first_line: int


class _AliasSyntaxPrinter(AliasPrinting, SyntaxPrinter):
    """xDSL's syntax-highlighting printer with aliases (`--syntax-highlight`)."""


@dataclass(frozen=True)
class AliasedMLIRTarget(MLIRTarget):
    """xDSL's MLIR text target, affine maps and sets printed as `#map` / `#set` aliases, as mlir-opt does."""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        """The module after its aliases' definitions (`ktir.dialects.ktdp.aliases`)."""
        body = StringIO()
        with aliases() as table:
            printer = (_AliasSyntaxPrinter if self.syntax_highlight else AliasPrinter)(
                stream=body,
                print_generic_format=self.print_generic_format,
                print_properties_as_attributes=self.print_properties_as_attributes,
                print_debuginfo=self.print_debuginfo,
            )
            printer.print_op(module)
            printer.print_metadata(ctx.loaded_dialects)
        output.write(definitions(table) + body.getvalue())
        print("\n", file=output)


class KtirOptMain(xDSLOptMain):
    """`xDSLOptMain` with the ktir dialect and passes and MLIR's diagnostic conventions."""

    version_format = f"ktir-opt {__version__} built on xdsl {{xdsl_version}}"

    def __init__(self, args: Sequence[str] | None = None) -> None:
        super().__init__(description="ktir modular optimizer driver", args=args)

    def register_all_dialects(self) -> None:
        register_dialects(self.ctx)

    def register_all_passes(self) -> None:
        for name, factory in available_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        # ktir-opt writes MLIR text only (xDSL's assembly and code targets do not apply).
        super().register_all_targets()
        self.available_targets = {"mlir": lambda: AliasedMLIRTarget}

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        # ktir-opt's own flag set (mlir-opt's names), not xdsl-opt's: no output targets,
        # frontends or shrinking. xDSL reads these defaults; `--disable-verify` has its own dest,
        # since xDSL's would switch attribute verification off process-wide.
        suggesting(arg_parser, "ktir-opt")
        arg_parser.set_defaults(
            target="mlir", frontend=None, disable_verify=False, no_implicit_module=False, shrink=False
        )
        add = arg_parser.add_argument
        add("input_file", nargs="?", help="input file (default and '-': stdin)")
        add("-o", "--output-file", help="output file (default and '-': stdout)")
        add(
            "-p", "--passes", default="", help="pass pipeline, comma-separated: 'cse,ktir-fuse{remarks=true}'"
        )
        add(
            "--pass-pipeline",
            default="",
            help="MLIR pipeline syntax: 'builtin.module(cse,ktir-compile{cores=8})'",
        )
        add("--list-passes", action="store_true", help="list the passes with their options and exit")
        add(
            "--target",
            dest="chip",
            metavar="FILE.toml",
            default="",
            help="the chip, as a TOML file, for every pass with a target option (default: Spyre)",
        )
        for names, help_text in _SWITCHES:
            add(*names, action="store_true", help=help_text)
        add(
            "--disable-verify",
            dest="no_verify",
            action="store_true",
            help="do not run the verifier after parsing and after each pass",
        )
        for name in ("--mlir-print-ir-before", "--mlir-print-ir-after"):
            when = name.rsplit("-", 1)[1]
            add(
                name,
                action="append",
                default=[],
                metavar="PASS",
                help=f"print the IR {when} PASS (repeatable, or comma-separated)",
            )
        add(
            "--version",
            action=VersionAction,
            version_format=self.version_format,
            help="print the version and exit",
        )

    def setup_pipeline(self) -> None:
        if self.args.passes and self.args.pass_pipeline:
            raise UsageError("-p and --pass-pipeline are alternatives: give one of them")
        if self.args.pass_pipeline:
            try:
                self.args.passes = pipeline_from_mlir(self.args.pass_pipeline)
            except ValueError as error:
                raise UsageError(f"argument --pass-pipeline: {error}") from None
        try:
            pipeline = PassPipeline.parse_spec(self.available_passes, self.args.passes, self._after_pass)
            passes = with_target(list(pipeline.passes), self.args.chip)
        except ArgSpecParseError as error:
            detail = _option_hint(str(error).strip().splitlines()[-1].strip())
            available = ", ".join(sorted(self.available_passes))
            raise UsageError(
                f"invalid pass pipeline '{self.args.passes}': {detail}; available passes: {available}"
            ) from error
        except PipelineError as error:  # from `with_target`: the --target file
            raise UsageError(f"argument --target: {error}") from None
        except Exception as error:  # xDSL raises ValueError/Exception for unknown passes/options
            raise UsageError(self._explain_pipeline_error(error)) from error
        self.stages = expand_stages(passes)
        self.stage_index = {id(stage.module_pass): i for i, stage in enumerate(self.stages)}
        self._check_printed_passes()
        self.instrumentation = Instrumentation(
            self.stages,
            self._dump,
            before_all=self.args.mlir_print_ir_before_all,
            after_all=self.args.mlir_print_ir_after_all,
            before=_names(self.args.mlir_print_ir_before),
            after=_names(self.args.mlir_print_ir_after),
        )
        self.pipeline = PassPipeline(tuple(s.module_pass for s in self.stages), self._after_pass)
        self.parse_seconds = self.output_seconds = 0.0

    def _check_printed_passes(self) -> None:
        """`--mlir-print-ir-before/after` must name a pass of the pipeline (or a stage of one)."""
        known = {s.module_pass.name for s in self.stages} | {s.parent for s in self.stages if s.parent}
        for flag in ("before", "after"):
            for name in sorted(_names(getattr(self.args, f"mlir_print_ir_{flag}")) - known):
                raise UsageError(
                    f"argument --mlir-print-ir-{flag}: '{name}' is not a pass of the pipeline "
                    f"'{self.args.passes}'{did_you_mean(name, known)}"
                )

    def _dump(self, header: str, module: ModuleOp) -> None:
        print(header, file=sys.stderr)
        print(self.output_resulting_program(module), file=sys.stderr)

    def _explain_pipeline_error(self, error: Exception) -> str:
        available = ", ".join(sorted(self.available_passes))
        message = _first_line(error)
        if message.startswith("Unrecognized passes"):
            names = re.findall(r"['\"]([^'\"]+)['\"]", message.split(":", 1)[1])
            unknown = ", ".join(f"'{n}'{did_you_mean(n, self.available_passes)}" for n in names)
            return f"unknown pass {unknown} in '{self.args.passes}'; available passes: {available}"
        detail = _option_hint(message)
        return f"invalid pass pipeline '{self.args.passes}': {detail}; available passes: {available}"

    def _after_pass(
        self, previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
    ) -> None:
        if previous is not None:
            stage = self.stages[self.stage_index[id(previous)]]
            self.instrumentation.stage_done(self.stage_index[id(previous)], module)
            # A pipeline pass is verified after its last stage, as when it runs as one pass.
            if stage.last and not self.args.no_verify and (errors := verify_module(module)):
                name = stage.parent or previous.name
                for error in errors:
                    error.message += f" (after pass '{name}')"
                raise DiagnosticError(errors)
        if following is not None:
            self.instrumentation.stage_next(self.stage_index[id(following)], module)

    # -- running ------------------------------------------------------------------------------

    def run(self) -> int:  # returns the exit code
        """Process every chunk; print or check diagnostics; write output only on success."""
        if self.args.list_passes:
            print(describe_passes(self.available_passes))
            return 0
        try:
            return self._run()
        finally:
            if self.args.mlir_timing:
                rows = timing_rows(
                    self.stages, self.instrumentation.times, self.parse_seconds, self.output_seconds
                )
                print(timing_report(rows), file=sys.stderr)

    def _run(self) -> int:
        if self.args.output_file == "-":  # mlir-opt's `-o -`: stdout
            self.args.output_file = None
        if self.args.output_file is not None:
            check_writable(self.args.output_file)
        try:
            filename, text = self._read_input()
        except SourceError as error:
            print(error.rendered(), file=sys.stderr)
            return 1
        sources = {filename: text}
        outputs: list[str] = []
        failed = False
        for chunk in self._chunks(text):
            output, diagnostics = self._process(chunk, filename)
            if self.args.verify_diagnostics:
                expectations = parse_expectations(chunk.text, filename, chunk.first_line)
                invalid = _invalid_regexes(expectations)
                diagnostics = invalid or check(expectations, diagnostics)
            for diagnostic in diagnostics:
                print(render(diagnostic, sources), file=sys.stderr)
            failed |= any(d.severity == Severity.ERROR for d in diagnostics)
            if output is not None:
                outputs.append(output)
        if failed:
            return 1
        self._write_output(f"{SPLIT_MARKER}\n".join(outputs))
        return 0

    def _process(self, chunk: Chunk, filename: str) -> tuple[str | None, list[Diagnostic]]:
        """Parse, verify, run the pipeline and print one chunk; return output and diagnostics."""
        # Blank lines in front keep line numbers those of the whole file.
        text = "\n" * (chunk.first_line - 1) + chunk.text
        with collect_diagnostics() as emitted:
            try:
                clock = time.perf_counter()
                module = parse_module(self.ctx, text, filename)
                self.parse_seconds += time.perf_counter() - clock
                if not self.args.no_verify and (errors := verify_module(module)):
                    raise DiagnosticError(errors)
                self.apply_passes(module)
                clock = time.perf_counter()
                output = self.output_resulting_program(module)
                self.output_seconds += time.perf_counter() - clock
                if self.args.verify_roundtrip:
                    self._verify_roundtrip(output, filename)
            except DiagnosticError as error:
                return None, [*emitted, *error.diagnostics]
            except DiagnosticException as error:  # a pass failed without a location
                return None, [*emitted, Diagnostic(Severity.ERROR, _first_line(error))]
        return output, emitted

    def _verify_roundtrip(self, output: str, filename: str) -> None:
        """
        `DiagnosticError` unless `output` parses, verifies and prints back to itself: what ktir-opt
        prints, it reads (one process does what `ktir-opt | ktir-opt` checks, and more: equality).
        """
        printed = f"<printed {filename}>"
        module = parse_module(self.ctx, output, printed)
        if errors := verify_module(module):
            raise DiagnosticError(errors)
        again = self.output_resulting_program(module)
        if again == output:
            return
        pairs = itertools.zip_longest(output.split("\n"), again.split("\n"))
        line = next(number for number, (first, second) in enumerate(pairs, 1) if first != second)
        message = "the printed IR does not round-trip: printed again, this line differs"
        raise DiagnosticError([Diagnostic(Severity.ERROR, message, Location(printed, line, 1))])

    def _read_input(self) -> tuple[str, str]:
        """The input's name and text; `SourceError` if it is not UTF-8."""
        if self.args.input_file in (None, "-"):
            return "<stdin>", decode_source(sys.stdin.buffer.read(), "<stdin>")
        with open(self.args.input_file, "rb") as f:
            return self.args.input_file, decode_source(f.read(), self.args.input_file)

    def _chunks(self, text: str) -> list[Chunk]:
        if not self.args.split_input_file:
            return [Chunk(text, 1)]
        chunks: list[Chunk] = []
        current: list[str] = []
        first_line = 1
        for number, line in enumerate(text.split("\n"), start=1):
            if line.strip().startswith(SPLIT_MARKER):
                chunks.append(Chunk("\n".join(current), first_line))
                current, first_line = [], number + 1
                continue
            current.append(line)
        chunks.append(Chunk("\n".join(current), first_line))
        return chunks

    def _write_output(self, output: str) -> None:
        if self.args.output_file is None:
            sys.stdout.write(output)
            return
        write_all([(self.args.output_file, lambda path: Path(path).write_text(output, encoding="utf-8"))])


_SWITCHES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("--split-input-file",), "process each '// -----' chunk on its own"),
    (
        ("--verify-diagnostics",),
        "check the diagnostics against the input's expected-error/warning/note/remark annotations "
        "(MLIR semantics); exit 1 on any mismatch",
    ),
    (("--allow-unregistered-dialect",), "parse ops of unknown dialects"),
    (
        ("--verify-roundtrip",),
        "parse the printed output again and check it prints the same (exit 1 if not)",
    ),
    (("--mlir-print-ir-before-all",), "print the IR before every pass (stderr)"),
    (
        ("--mlir-print-ir-after-all", "--print-between-passes"),
        "print the IR after every pass, also the stages of ktir-compile (stderr)",
    ),
    (("--mlir-timing", "--time-passes"), "print the wall time of parsing, each pass and output (stderr)"),
    (("--print-op-generic", "--mlir-print-op-generic"), "print ops in the generic form"),
    (("--print-no-properties",), "print properties as attributes"),
    (("--print-debuginfo", "--mlir-print-debuginfo"), "print each op's location (loc(...))"),
    (("--syntax-highlight",), "color the output on a terminal"),
)
"""ktir-opt's on/off flags (mlir-opt's names first, older spellings after) and their help."""


def _names(values: Sequence[str]) -> frozenset[str]:
    """Pass names from repeated, comma-separated flag values."""
    return frozenset(name.strip() for value in values for name in value.split(",") if name.strip())


def _invalid_regexes(expectations: Sequence[Expectation]) -> list[Diagnostic]:
    """A located error for each `expected-*-re` annotation whose `{{...}}` is not a valid regex."""
    errors = []
    for expectation in expectations:
        if not expectation.is_regex:
            continue
        try:
            with warnings.catch_warnings():  # FutureWarnings about set syntax are not errors
                warnings.simplefilter("ignore")
                re.compile(regex_of(expectation.text))
        except re.error as error:
            message = f"invalid regular expression in expected-{expectation.severity}-re: {error}"
            errors.append(Diagnostic(Severity.ERROR, message, expectation.written_at))
    return errors


_UNKNOWN_OPTIONS = re.compile(
    r"Provided arguments \[(?P<given>[^\]]*)\] not found in expected arguments \[(?P<known>[^\]]*)\]"
)


def _option_hint(message: str) -> str:
    """xDSL's message for an unknown pass option, with "did you mean" for each option given."""
    if (match := _UNKNOWN_OPTIONS.search(message)) is None:
        return message
    known = re.findall(r'"([^"]*)"', match["known"])
    hints = "".join(did_you_mean(name, known) for name in re.findall(r'"([^"]*)"', match["given"]))
    return message + hints


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _run(entry: Callable[[], int]) -> int:
    """Run `entry`, turning any escaped Python error into one line (KTIR_DEBUG=1 re-raises)."""
    try:
        return entry()
    except UsageError as error:
        print(f"ktir-opt: error: {error}", file=sys.stderr)
        return 2
    except OutputError as error:
        print(f"ktir-opt: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"ktir-opt: error: {error.strerror}: {error.filename}", file=sys.stderr)
        return 1
    except Exception as error:
        if os.environ.get("KTIR_DEBUG"):
            raise
        print(
            f"ktir-opt: internal error: {type(error).__name__}: {_first_line(error)} "
            "(set KTIR_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point of `ktir-opt`; returns the exit code."""
    return _run(lambda: KtirOptMain(argv).run())


if __name__ == "__main__":
    sys.exit(main())
