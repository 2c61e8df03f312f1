"""
Located diagnostics for ktir: parse, verify and pass errors as `file:line:col: error: message`.

xDSL reports a verifier failure by printing the whole module, and a parse-time attribute
error without a location. MLIR users expect what `mlir-opt` prints:

```
model.mlir:3:8: error: 'ktir.tiled' ...: the last device dim is the stick ...
  %0 = "test.op"() : () -> tensor<4x64xf16, #ktir.tiled<...>>
       ^
```

This module provides that: `KtirParser` records a `FileLineColLoc` on every op it parses (at
the op name, as MLIR does) and reports a type or attribute that fails verification at its
own position; `verify_module` checks every op and every `#ktir.tiled` tensor type and returns
located diagnostics; passes report warnings and remarks with `emit`. `render` prints one
diagnostic with its source line and a caret.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum

from xdsl.context import Context
from xdsl.dialects.builtin import (
    FileLineColLoc,
    FunctionType,
    IntAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, ParametrizedAttribute
from xdsl.parser import Parser
from xdsl.traits import IsolatedFromAbove
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Span

from ktir.dialects.ktir import verify_tiled_tensor


class Severity(StrEnum):
    """MLIR's diagnostic severities."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"
    REMARK = "remark"


@dataclass(frozen=True)
class Location:
    """A position in a source file: 1-based line and column, `length` characters long."""

    file: str
    line: int
    column: int
    length: int = 1


@dataclass
class Diagnostic:
    """One message with its severity, location (None if unknown) and attached notes."""

    severity: Severity
    message: str
    location: Location | None = None
    notes: list[Diagnostic] = field(default_factory=list["Diagnostic"])

    def flatten(self) -> Iterator[Diagnostic]:
        """The diagnostic followed by its notes, as MLIR reports them."""
        yield self
        for note in self.notes:
            yield from note.flatten()


class DiagnosticError(DiagnosticException):
    """An error carrying located diagnostics; raised by parsing, verification and passes."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(d.message for d in self.diagnostics))


def location_of(op: Operation) -> Location | None:
    """The source location of `op`, if it was parsed from a file or given an explicit one."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return Location(loc.filename.data, loc.line.data, loc.column.data)
    return None


def op_error(op: Operation, message: str) -> DiagnosticError:
    """An error located at `op`, worded as MLIR words op errors: `'name' op message`."""
    return DiagnosticError([Diagnostic(Severity.ERROR, f"'{op.name}' op {message}", location_of(op))])


# ---------------------------------------------------------------------------------------------
# Diagnostics emitted by passes
# ---------------------------------------------------------------------------------------------

_collector: contextvars.ContextVar[list[Diagnostic] | None] = contextvars.ContextVar(
    "ktir_diagnostics", default=None
)


@contextmanager
def collect_diagnostics() -> Iterator[list[Diagnostic]]:
    """Collect the warnings, remarks and notes that `emit` reports inside the block."""
    collected: list[Diagnostic] = []
    token = _collector.set(collected)
    try:
        yield collected
    finally:
        _collector.reset(token)


def emit(op: Operation, severity: Severity, message: str, notes: Sequence[Diagnostic] = ()) -> None:
    """
    Report a non-fatal diagnostic at `op` (for errors raise `op_error` instead).

    Inside `collect_diagnostics` it is collected; otherwise it is lost, which is what a
    library caller that did not ask for diagnostics wants.
    """
    if (collected := _collector.get()) is not None:
        collected.append(Diagnostic(severity, message, location_of(op), list(notes)))


# ---------------------------------------------------------------------------------------------
# Parsing with locations
# ---------------------------------------------------------------------------------------------


class KtirParser(Parser):
    """
    An xDSL parser that gives every op a `FileLineColLoc` and locates attribute errors.

    Ops parsed without an explicit `loc(...)` get the position of their name. A type or
    attribute whose verifier fails (including a `#ktir.tiled` tensor that does not fit its
    shape) becomes a `ParseError` spanning its text, so the error points at it.
    """

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        op = super().parse_operation()
        if not isinstance(op.location, FileLineColLoc):
            line, column = self._line_column(self._op_name_position(start))
            op.location = FileLineColLoc(StringAttr(self.lexer.input.name), IntAttr(line), IntAttr(column))
        return op

    def parse_optional_type(self):
        start = self._current_token.span.start
        try:
            parsed = super().parse_optional_type()
            if isinstance(parsed, TensorType):
                verify_tiled_tensor(parsed)
        except VerifyException as error:
            raise self._located(start, str(error)) from error
        return parsed

    def parse_optional_attribute(self) -> Attribute | None:
        start = self._current_token.span.start
        try:
            return super().parse_optional_attribute()
        except VerifyException as error:
            raise self._located(start, str(error)) from error

    def _located(self, start: int, message: str) -> ParseError:
        end = self._current_token.span.start
        text = self.lexer.input.content
        while end > start and text[end - 1].isspace():
            end -= 1
        return ParseError(Span(start, max(end, start + 1), self.lexer.input), message)

    def _op_name_position(self, start: int) -> int:
        """Skip a result list (`%a, %b:2 = `) to the op name, where MLIR puts the location."""
        text = self.lexer.input.content
        if text[start] != "%":
            return start
        position = text.index("=", start) + 1
        while text[position].isspace():
            position += 1
        return position

    def _line_column(self, position: int) -> tuple[int, int]:
        text = self.lexer.input.content
        line_start = text.rfind("\n", 0, position) + 1
        return text.count("\n", 0, position) + 1, position - line_start + 1


def parse_error_diagnostic(error: ParseError) -> Diagnostic:
    """A located diagnostic for an xDSL `ParseError`."""
    span = error.span
    loc = span.get_location()
    return Diagnostic(
        Severity.ERROR,
        error.msg,
        Location(span.input.name, loc.line, loc.col, max(span.end - span.start, 1)),
    )


def parse_module(ctx: Context, text: str, filename: str = "<stdin>") -> ModuleOp:
    """Parse MLIR text into a module with located ops; errors raise `DiagnosticError`."""
    try:
        return KtirParser(ctx, text, filename).parse_module()
    except ParseError as error:
        raise DiagnosticError([parse_error_diagnostic(error)]) from error


# ---------------------------------------------------------------------------------------------
# Verification with locations
# ---------------------------------------------------------------------------------------------


def verify_module(module: Operation) -> list[Diagnostic]:
    """
    Verify every op and every `#ktir.tiled` tensor type; return located errors.

    Like MLIR's verifier, checking stops at the first failure inside each isolated-from-above
    op (each function), so one bad op does not drown the output in follow-on errors;
    independent functions are still all checked.
    """
    failed: set[Operation] = set()
    diagnostics: list[Diagnostic] = []
    for op in module.walk():
        scope = _isolation_scope(op)
        if any(ancestor in failed for ancestor in _ancestors(op)):
            continue
        if (message := _verify_one(op)) is None:
            continue
        diagnostics.append(Diagnostic(Severity.ERROR, f"'{op.name}' op {message}", location_of(op)))
        failed.add(scope)
        failed.add(op)
    return diagnostics


def _verify_one(op: Operation) -> str | None:
    try:
        op.verify(verify_nested_ops=False)
        for tensor in _tensor_types_of(op):
            verify_tiled_tensor(tensor)
    except VerifyException as error:
        return str(error)
    return None


def _tensor_types_of(op: Operation) -> Iterator[TensorType[Attribute]]:
    types: list[Attribute] = [v.type for v in op.results]
    types += [v.type for v in op.operands]
    types += [arg.type for region in op.regions for block in region.blocks for arg in block.args]
    types += [*op.properties.values(), *op.attributes.values()]
    yield from _find_tensor_types(types)


def _find_tensor_types(attrs: Sequence[Attribute]) -> Iterator[TensorType[Attribute]]:
    for attr in attrs:
        if isinstance(attr, TensorType):
            yield attr
        elif isinstance(attr, FunctionType):
            yield from _find_tensor_types([*attr.inputs.data, *attr.outputs.data])
        elif isinstance(attr, ParametrizedAttribute):
            yield from _find_tensor_types(
                [p for p in attr.parameters if isinstance(p, ParametrizedAttribute)]
            )


def _ancestors(op: Operation) -> Iterator[Operation]:
    parent = op.parent_op()
    while parent is not None:
        yield parent
        parent = parent.parent_op()


def _isolation_scope(op: Operation) -> Operation | None:
    return next((a for a in _ancestors(op) if a.has_trait(IsolatedFromAbove)), None)


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------


def render(diagnostic: Diagnostic, sources: dict[str, str]) -> str:
    """
    MLIR's text for one diagnostic and its notes: location, severity, message, source, caret.

    `sources` maps file names to their text, for the quoted line.
    """
    lines = []
    for diag in diagnostic.flatten():
        loc = diag.location
        if loc is None:
            lines.append(f"<unknown>:0: {diag.severity}: {diag.message}")
            continue
        lines.append(f"{loc.file}:{loc.line}:{loc.column}: {diag.severity}: {diag.message}")
        source_lines = sources.get(loc.file, "").split("\n")
        if 0 < loc.line <= len(source_lines):
            text = source_lines[loc.line - 1]
            width = max(1, min(loc.length, len(text) - loc.column + 1))
            lines.append(text)
            lines.append(" " * (loc.column - 1) + "^" * width)
    return "\n".join(lines)
