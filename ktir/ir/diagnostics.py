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
import re
import struct
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import cast

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    FileLineColLoc,
    FunctionType,
    IntAttr,
    ModuleOp,
    ShapedType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, ParametrizedAttribute
from xdsl.parser import Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.traits import IsolatedFromAbove
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer

from ktir.dialects.ktdp.aliases import aliased_text
from ktir.dialects.ktir.attributes import verify_tiled_tensor
from ktir.dialects.ktir.functions import OpVerifyException, verify_function


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


class ExecutionError(RuntimeError):
    """The module cannot be run on these inputs (wrong count, shape or dtype, unknown op)."""


def location_of(op: Operation) -> Location | None:
    """The source location of `op`, if it was parsed from a file or given an explicit one."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return Location(loc.filename.data, loc.line.data, loc.column.data)
    return None


def op_message(name: str, message: str) -> str:
    """
    MLIR's wording of an op's error, `'name' op message`; a message that starts with the op's
    quoted name already (`'ktir.abs' has no ...`) does not repeat it.
    """
    quoted = f"'{name}'"
    return f"{quoted} op {message.removeprefix(quoted + ' ')}"


def op_error(op: Operation, message: str) -> DiagnosticError:
    """An error located at `op`, worded as MLIR words op errors (`op_message`)."""
    return DiagnosticError([Diagnostic(Severity.ERROR, op_message(op.name, message), location_of(op))])


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


class _LinearLexer(MLIRLexer):
    """
    xDSL's lexer with a string-literal pattern that cannot backtrack exponentially: xDSL's
    `"(?:[^"...]+|...)*"` nests two quantifiers, so an unterminated string such as `"tensor<4x6`
    took time exponential in the rest of the line. One character per repetition is linear.
    """

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


TOO_LARGE = "the input needs more memory than there is (a constant or shape too large)"


class KtirParser(Parser):
    """
    An xDSL parser that gives every op a `FileLineColLoc` and locates attribute errors.

    Ops parsed without an explicit `loc(...)` get the position of their name. A type or
    attribute whose verifier fails (including a `#ktir.tiled` tensor that does not fit its
    shape) becomes a `ParseError` spanning its text, so the error points at it.
    """

    def __init__(self, ctx: Context, input: str, name: str = "<unknown>") -> None:
        super().__init__(ctx, input, name)
        self._parser_state = ParserState(_LinearLexer(Input(input, name)))

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        try:
            op = super().parse_operation()
        except (VerifyException, struct.error, OverflowError, ValueError) as error:
            # An op's own syntax built an attribute from a value that does not fit it (an
            # `array<i64>` property, an `i64` integer): point at the offending literal.
            raise self._bad_literal(start, error) from error
        except MemoryError:  # xDSL expands a splat `dense<0.0>` of a huge shape element by element
            raise self._located(start, TOO_LARGE) from None
        except IndexError:  # an op's syntax built its body from operands it did not get
            position, name = self._op_name(start)
            hint = " (a named linalg op needs ins(...) and outs(...))" if name.startswith("linalg.") else ""
            raise self._located(position, f"'{name}' has operands that do not fit its form{hint}") from None
        except AssertionError:
            # xDSL builds a named linalg op's body from its operands' element types and asserts
            # they are floats or integers (an `index` fill or add has no body upstream either).
            position, name = self._op_name(start)
            if not name.startswith("linalg."):
                raise
            message = f"'{name}' builds its body from float or integer elements only"
            raise self._located(position, f"{message} (not index or another type)") from None
        if not isinstance(op.location, FileLineColLoc):
            line, column = self._line_column(self._op_name_position(start))
            op.location = FileLineColLoc(StringAttr(self.lexer.input.name), IntAttr(line), IntAttr(column))
        return op

    def _op_name(self, start: int) -> tuple[int, str]:
        """The position and name of the op whose text begins at `start` (its results first)."""
        position = self._op_name_position(start)
        found = re.match(r'"?([\w.$]+)', self.lexer.input.content[position:]) or [None, "op"]
        return position, cast(str, found[1])

    def _get_op_by_name(self, name: str) -> type[Operation]:
        try:
            return super()._get_op_by_name(name)
        except ParseError as error:
            # xDSL points past the name (at the next token): point at the name, with its quotes
            # in the generic form, where the op's location is.
            text = self.lexer.input.content
            start = text.rfind(name, 0, self._current_token.span.start)
            if start < 0:
                raise
            quoted = int(text[start - 1 : start] == '"')
            span = Span(start - quoted, start + len(name) + quoted, self.lexer.input)
            raise ParseError(span, error.msg) from None

    def parse_optional_type(self):
        start = self._current_token.span.start
        try:
            parsed = super().parse_optional_type()
            if isinstance(parsed, ShapedType):
                _check_dims(parsed)
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

    def _bad_literal(self, start: int, error: Exception) -> ParseError:
        """A `ParseError` at the integer literal of the op text from `start` that `error` is about."""
        end = self._current_token.span.start
        text = self.lexer.input.content
        literals = [(m, int(m.group())) for m in _INTEGER_LITERAL.finditer(text, start, end)]
        mentioned = {int(n) for n in re.findall(r"-?\d+", str(error))}
        chosen = next((m for m, v in literals if v in mentioned and not _fits_i64(v)), None)
        chosen = chosen or next((m for m, v in literals if not _fits_i64(v)), None)
        message = str(error) if isinstance(error, VerifyException) else ""
        if chosen is None:
            return ParseError(Span(start, max(end, start + 1), self.lexer.input), message or str(error))
        value = int(chosen.group())
        message = message or f"integer {value} is out of range of i64 [{I64_MIN}, {I64_MAX}]"
        return ParseError(Span(chosen.start(), chosen.end(), self.lexer.input), message)

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


I64_MIN, I64_MAX = -(2**63), 2**63 - 1
_INTEGER_LITERAL = re.compile(r"(?<![\w.#%@^\"])-?\d+(?![\w.])")


def _fits_i64(value: int) -> bool:
    return I64_MIN <= value <= I64_MAX


def _check_dims(shaped: ShapedType) -> None:
    """MLIR shapes are `int64_t`: a dim past `I64_MAX` is a `VerifyException`."""
    for dim in shaped.get_shape():
        if dim > I64_MAX:
            raise VerifyException(f"dimension {dim} is out of range of i64 (at most {I64_MAX})")


def parse_error_diagnostic(error: ParseError) -> Diagnostic:
    """A located diagnostic for an xDSL `ParseError`."""
    span = error.span
    loc = span.get_location()
    # a control character in the message (xDSL's "Unexpected character: ...") is shown escaped
    message = "".join(c if c.isprintable() or c in "\n\t" else f"\\x{ord(c):02x}" for c in error.msg)
    return Diagnostic(
        Severity.ERROR,
        message,
        Location(span.input.name, loc.line, loc.col, max(span.end - span.start, 1)),
    )


MAX_NESTING = 100
"""Deepest bracket nesting (`(`, `[`, `{`, `<`) `parse_module` accepts: xDSL parses, verifies and
prints recursively, and Python's default recursion limit holds about 150 levels of nesting."""

_NESTING_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|->|[<>]=|[\[\]{}()<>]')
_OPENERS = frozenset("([{<")


def check_nesting(text: str, filename: str = "<stdin>", limit: int = MAX_NESTING) -> None:
    """
    Reject input nested deeper than `limit` brackets (regions, attributes, types), located at
    the first bracket past the limit, instead of letting the recursive parser overflow the stack.

    Strings, `//` comments and the `->`, `>=` and `<=` tokens do not count.
    """
    depth = 0
    for match in _NESTING_TOKEN.finditer(text):
        token = match.group()
        if len(token) != 1:
            continue
        if token not in _OPENERS:
            depth = max(depth - 1, 0)
            continue
        depth += 1
        if depth > limit:
            raise DiagnosticError([_nesting_error(text, filename, match.start(), limit)])


def _nesting_error(text: str, filename: str, position: int, limit: int) -> Diagnostic:
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    message = f"nesting deeper than {limit} levels of brackets, regions, attributes or types is not supported"
    return Diagnostic(Severity.ERROR, message, Location(filename, line, column))


class SourceError(DiagnosticError):
    """An input file that is not UTF-8; `text` is it decoded with replacement characters, to quote."""

    def __init__(self, diagnostic: Diagnostic, text: str) -> None:
        super().__init__([diagnostic])
        self.text = text

    def rendered(self) -> str:
        """The error as `render` prints it, quoting the line with the bad byte replaced."""
        location = self.diagnostics[0].location
        return render(self.diagnostics[0], {location.file: self.text} if location else {})


def decode_source(data: bytes, filename: str = "<stdin>") -> str:
    """
    The text of an input file read as bytes; `SourceError` located at the first byte that is
    not UTF-8, naming its value and byte offset.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        prefix = data[: error.start].decode("utf-8")
        line = prefix.count("\n") + 1
        column = len(prefix) - (prefix.rfind("\n") + 1) + 1
        bad = data[error.start : error.end].hex(" ").replace(" ", " 0x")
        message = f"the input is not valid UTF-8: byte 0x{bad} at byte offset {error.start} ({error.reason})"
        diagnostic = Diagnostic(Severity.ERROR, message, Location(filename, line, column))
        raise SourceError(diagnostic, data.decode("utf-8", "replace")) from error


def parse_module(ctx: Context, text: str, filename: str = "<stdin>") -> ModuleOp:
    """
    Parse MLIR text into a module with located ops; errors raise `DiagnosticError`, including
    input nested deeper than `MAX_NESTING`.
    """
    check_nesting(text, filename)
    try:
        # the lexer reads the first token here: an unexpected first character fails at once
        parser = KtirParser(ctx, text, filename)
    except ParseError as error:
        raise DiagnosticError([parse_error_diagnostic(error)]) from error
    try:
        return parser.parse_module()
    except ParseError as error:
        raise DiagnosticError([parse_error_diagnostic(error)]) from error
    except MemoryError:  # e.g. xDSL expands a splat `dense<0.0>` of a huge shape element by element
        span = parser._parser_state.current_token.span
        error = ParseError(span, TOO_LARGE)
        raise DiagnosticError([parse_error_diagnostic(error)]) from None


def module_text(module: ModuleOp, *, generic: bool = False, debuginfo: bool = False) -> str:
    """
    The MLIR text of `module`, ending in a newline, as `parse_module` reads it back: the custom
    form (or the `generic` one), with each op's `loc(...)` when `debuginfo`.
    """
    # maps and sets as #map / #set aliases, defined first, as mlir-opt prints them (ktdp.aliases)
    return aliased_text(module, print_generic_format=generic, print_debuginfo=debuginfo) + "\n"


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
    failed: set[Operation | None] = set()  # None: the module scope
    diagnostics: list[Diagnostic] = []
    positions: dict[Block, dict[Operation, int]] = {}
    for op in module.walk():
        scope = _isolation_scope(op)
        if any(ancestor in failed for ancestor in _ancestors(op)):
            continue
        if (failure := _verify_one(op)) is None and (failure := _dominance(op, positions)) is None:
            continue
        culprit, message = failure
        message = op_message(culprit.name, message)
        diagnostics.append(Diagnostic(Severity.ERROR, message, location_of(culprit)))
        failed.add(scope)
        failed.add(op)
    return diagnostics


def _verify_one(op: Operation) -> tuple[Operation, str] | None:
    """The op a failure is reported at and its message, or None if `op` verifies."""
    try:
        op.verify(verify_nested_ops=False)
        for tensor in _tensor_types_of(op):
            verify_tiled_tensor(tensor)
        if isinstance(op, func.FuncOp):
            verify_function(op)
    except OpVerifyException as error:
        return error.op, str(error)
    except VerifyException as error:
        return op, str(error)
    except (IndexError, KeyError, ValueError, TypeError) as error:
        # An upstream (xDSL) verifier that trips over malformed attributes instead of raising
        # VerifyException: still this op's failure, located here, not a crash.
        return op, f"failed to verify ({type(error).__name__}: {error})"
    return None


def _dominance(op: Operation, positions: dict[Block, dict[Operation, int]]) -> tuple[Operation, str] | None:
    """
    MLIR's dominance rule (one block per region, as in ktir): each operand is a block argument
    of a block enclosing `op`, or the result of an op earlier in such a block. xDSL's parser
    takes forward references anywhere, and an executor would then meet a value not yet defined.
    A module's body is a graph region, where the order does not matter.
    """
    for index, operand in enumerate(op.operands):
        owner = operand.owner
        block = owner if isinstance(owner, Block) else owner.parent_block()
        if block is None or isinstance(block.parent_op(), ModuleOp):
            continue
        user: Operation | None = op
        while user is not None and user.parent_block() is not block:
            user = user.parent_op()
        if user is not None and isinstance(owner, Block):
            continue
        if user is not None:
            order = positions.get(block)
            if order is None:  # numbered once per block (setdefault would number it per operand)
                order = positions[block] = {o: i for i, o in enumerate(block.ops)}
            if order[cast(Operation, owner)] < order[user]:  # a block argument's owner was skipped above
                continue
        return op, f"operand #{index} does not dominate this use"
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
