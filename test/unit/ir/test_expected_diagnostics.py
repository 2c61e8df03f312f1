"""MLIR -verify-diagnostics semantics, checked against synthetic diagnostics."""

from ktir.ir.diagnostics import Diagnostic, Location, Severity, render
from ktir.ir.expected_diagnostics import check, parse_expectations

SOURCE = """\
op1  // expected-warning {{same line}}
// expected-note @+1 {{next line}}
op3
op4
// expected-remark @above {{above}}
// expected-error @below {{below}}
// expected-warning @below {{below too}}
op8
// expected-error-re @-1 {{value {{[0-9]+}} too big}}
// expected-error @unknown {{nowhere}}
"""


def at(line: int) -> Location:
    return Location("f.mlir", line, 1)


def test_designators_resolve_like_mlir():
    lines = {e.text: e.line for e in parse_expectations(SOURCE, "f.mlir")}
    assert lines == {
        "same line": 1,
        "next line": 3,
        "above": 4,
        "below": 8,
        "below too": 8,
        "value {{[0-9]+}} too big": 8,
        "nowhere": None,
    }


def test_offset_chunks_keep_file_lines():
    (expectation,) = parse_expectations("x\n// expected-error @-1 {{m}}", "f.mlir", first_line=40)
    assert expectation.line == 40
    assert expectation.written_at == Location("f.mlir", 41, 4, len("expected-error @-1 {{m}}"))


def test_all_matched():
    produced = [
        Diagnostic(Severity.WARNING, "on the same line", at(1)),
        Diagnostic(
            Severity.ERROR,
            "below it is",
            at(8),
            notes=[Diagnostic(Severity.NOTE, "the next line", at(3))],
        ),
        Diagnostic(Severity.REMARK, "from above", at(4)),
        Diagnostic(Severity.WARNING, "below too", at(8)),
        Diagnostic(Severity.ERROR, "value 1234 too big", at(8)),
        Diagnostic(Severity.ERROR, "nowhere to be found", None),
    ]
    assert check(parse_expectations(SOURCE, "f.mlir"), produced) == []


def test_mismatches_are_reported():
    produced = [
        Diagnostic(Severity.ERROR, "same line", at(1)),  # wrong severity
        Diagnostic(Severity.ERROR, "value x too big", at(8)),  # regex does not match
    ]
    messages = [d.message for d in check(parse_expectations(SOURCE, "f.mlir"), produced)]
    assert "unexpected error: same line" in messages
    assert "unexpected error: value x too big" in messages
    assert 'expected warning "same line" was not produced' in messages
    assert 'expected note "next line" was not produced' in messages
    assert len(messages) == 2 + 7


def test_one_diagnostic_satisfies_one_expectation():
    source = "// expected-error @+2 {{a}}\n// expected-error @+1 {{a}}\nop"
    produced = [Diagnostic(Severity.ERROR, "a", at(3))]
    assert [d.message for d in check(parse_expectations(source, "f.mlir"), produced)] == [
        'expected error "a" was not produced'
    ]


def test_render_shows_line_and_caret():
    text = render(
        Diagnostic(
            Severity.ERROR,
            "bad",
            Location("f.mlir", 2, 3, 4),
            [Diagnostic(Severity.NOTE, "see", None)],
        ),
        {"f.mlir": "first\n  second line\n"},
    )
    assert text == "f.mlir:2:3: error: bad\n  second line\n  ^^^^\n<unknown>:0: note: see"
