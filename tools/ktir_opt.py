"""
`ktir-opt`: the ktir modular optimizer driver, with `mlir-opt` conventions.

```
ktir-opt model.mlir -p 'canonicalize,arith-add-fastmath{flags=none}' -o out.mlir
ktir-opt invalid.mlir --split-input-file --verify-diagnostics
```

It is xDSL's `xDSLOptMain` with the ktir dialect and passes, plus what `mlir-opt` users rely
on and xDSL does not do: diagnostics as `file:line:col: error: message` with the source line
and a caret; MLIR's `--verify-diagnostics` (`expected-error @+1 {{...}}` annotations); exit
code 1 for bad input and 2 for a bad command line; no traceback; and nothing written to `-o`
unless every input chunk succeeded.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException
from xdsl.xdsl_opt_main import xDSLOptMain

from ktir import __version__
from ktir.compile import PipelineError, available_passes, with_target
from ktir.ir.context import register_dialects
from ktir.ir.diagnostics import (
    Diagnostic,
    DiagnosticError,
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
from ktir.tools.output_files import OutputError, check_writable, write_all

SPLIT_MARKER = "// -----"


class UsageError(Exception):
    """A bad command line (unknown pass or pass option); exit code 2."""


@dataclass
class Chunk:
    """One `// -----`-separated piece of the input; `first_line` is its 1-based line."""

    text: str
    first_line: int


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

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        # xDSL's `-t/--target` picks the output format; in ktir `--target` names the chip, so
        # the output format keeps `-t` and becomes `--output-target`.
        output = arg_parser._option_string_actions.pop("--target")
        output.option_strings = ["-t", "--output-target"]
        arg_parser._option_string_actions["--output-target"] = output
        arg_parser.add_argument(
            "--target",
            dest="chip",
            metavar="FILE.toml",
            default="",
            help="the chip, as a TOML file, for every pass with a target option (default: Spyre)",
        )
        # MLIR's spelling of the debug-info flag, next to xDSL's.
        debuginfo = arg_parser._option_string_actions["--print-debuginfo"]
        debuginfo.option_strings.append("--mlir-print-debuginfo")
        arg_parser._option_string_actions["--mlir-print-debuginfo"] = debuginfo
        for action in arg_parser._actions:
            if "-o" in action.option_strings:
                action.help = "output file (default and '-': stdout)"
            if "--verify-diagnostics" in action.option_strings:
                action.help = (
                    "check the diagnostics against the input's expected-error/warning/note/"
                    "remark annotations (MLIR semantics); exit 1 on any mismatch"
                )

    def setup_pipeline(self) -> None:
        try:
            pipeline = PassPipeline.parse_spec(self.available_passes, self.args.passes, self._after_pass)
            passes = with_target(list(pipeline.passes), self.args.chip)
            self.pipeline = PassPipeline(tuple(passes), self._after_pass)
        except ArgSpecParseError as error:
            detail = str(error).strip().splitlines()[-1].strip()
            available = ", ".join(sorted(self.available_passes))
            raise UsageError(
                f"invalid pass pipeline '{self.args.passes}': {detail}; available passes: {available}"
            ) from error
        except PipelineError as error:  # from `with_target`: the --target file
            raise UsageError(f"argument --target: {error}") from None
        except Exception as error:  # xDSL raises ValueError/Exception for unknown passes/options
            raise UsageError(self._explain_pipeline_error(error)) from error

    def _explain_pipeline_error(self, error: Exception) -> str:
        available = ", ".join(sorted(self.available_passes))
        message = _first_line(error)
        if message.startswith("Unrecognized passes"):
            names = message.split(":", 1)[1].strip(" []").replace('"', "'")
            return f"unknown pass {names} in '{self.args.passes}'; available passes: {available}"
        return f"invalid pass pipeline '{self.args.passes}': {message}; available passes: {available}"

    def _after_pass(
        self, previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
    ) -> None:
        if previous is not None and not self.args.disable_verify:
            if errors := verify_module(module):
                for error in errors:
                    error.message += f" (after pass '{previous.name}')"
                raise DiagnosticError(errors)
        if previous is not None and following is not None and self.args.print_between_passes:
            print(f"// -----// IR after {previous.name} //----- //", file=sys.stderr)
            print(self.output_resulting_program(module), file=sys.stderr)

    # -- running ------------------------------------------------------------------------------

    def run(self) -> int:  # type: ignore[override]  (returns the exit code)
        """Process every chunk; print or check diagnostics; write output only on success."""
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
                module = parse_module(self.ctx, text, filename)
                if not self.args.disable_verify and (errors := verify_module(module)):
                    raise DiagnosticError(errors)
                self.apply_passes(module)
                output = self.output_resulting_program(module)
            except DiagnosticError as error:
                return None, [*emitted, *error.diagnostics]
            except DiagnosticException as error:  # a pass failed without a location
                return None, [*emitted, Diagnostic(Severity.ERROR, _first_line(error))]
        return output, emitted

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
