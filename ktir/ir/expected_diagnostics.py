"""
MLIR's `-verify-diagnostics`: check produced diagnostics against `expected-*` annotations.

A test states the diagnostics it expects in comments, exactly as upstream MLIR tests do:

```mlir
// expected-error @+1 {{must hold 64 f16 elements}}
%0 = "test.op"() : () -> tensor<4x64xf16, #ktir.tiled<...>>
%1 = "test.op"() : () -> i32  // expected-warning {{on this very line}}
// expected-note @below {{on the next line that is not an annotation}}
// expected-remark @above {{on the last line above that is not an annotation}}
// expected-error-re @-2 {{regex {{[0-9]+}} inside}}
// expected-error @unknown {{a diagnostic without location}}
```

Every produced diagnostic (notes included) must match an expectation of the same severity
on the same line whose text is contained in its message (for `-re`, the `{{...}}` parts are
regular expressions); every expectation must be matched. Mismatches are reported as errors
located at the diagnostic or at the annotation, with MLIR's wording.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ktir.ir.diagnostics import Diagnostic, Location, Severity

_ANNOTATION = re.compile(
    r"expected-(?P<severity>error|warning|note|remark)(?P<regex>-re)?"
    r" *(?:@(?P<where>[+-]\d+|above|below|unknown))? *\{\{(?P<text>.*)\}\}"
)


@dataclass
class Expectation:
    """One `expected-*` annotation: what should be reported on which line (None: unknown)."""

    severity: Severity
    line: int | None
    text: str
    is_regex: bool
    written_at: Location
    matched: bool = False

    def matches(self, diagnostic: Diagnostic) -> bool:
        """Same severity, same line and the text found in the message."""
        if self.matched or diagnostic.severity != self.severity:
            return False
        line = None if diagnostic.location is None else diagnostic.location.line
        if line != self.line:
            return False
        if self.is_regex:
            return re.search(_regex_of(self.text), diagnostic.message) is not None
        return self.text in diagnostic.message


def _regex_of(text: str) -> str:
    """`-re` text: literal except inside `{{...}}`, as in FileCheck."""
    parts = re.split(r"\{\{(.*?)\}\}", text)
    return "".join(part if i % 2 else re.escape(part) for i, part in enumerate(parts))


def parse_expectations(text: str, filename: str, first_line: int = 1) -> list[Expectation]:
    """
    Read the annotations of `text`, whose first line is line `first_line` of `filename`.

    `@+N`/`@-N` are relative to the annotation's line; `@above` means the last line above
    without an annotation, `@below` the next such line; no `@` means the same line.
    """
    expectations: list[Expectation] = []
    pending_below: list[Expectation] = []
    last_plain_line = first_line - 1
    for number, line_text in enumerate(text.split("\n"), start=first_line):
        found = list(_ANNOTATION.finditer(line_text))
        if not found:
            for expectation in pending_below:
                expectation.line = number
            pending_below.clear()
            last_plain_line = number
            continue
        for match in found:
            where = match.group("where")
            expectation = Expectation(
                Severity(match.group("severity")),
                _target_line(where, number, last_plain_line),
                match.group("text"),
                match.group("regex") is not None,
                Location(filename, number, match.start() + 1, match.end() - match.start()),
            )
            if where == "below":
                pending_below.append(expectation)
            expectations.append(expectation)
    return expectations


def _target_line(where: str | None, line: int, last_plain_line: int) -> int | None:
    if where is None:
        return line
    if where == "unknown":
        return None
    if where == "above":
        return last_plain_line
    if where == "below":
        return line  # resolved when the next plain line is seen
    return line + int(where)


def check(expectations: Sequence[Expectation], produced: Sequence[Diagnostic]) -> list[Diagnostic]:
    """
    Match produced diagnostics against expectations; return the mismatches as errors.

    An empty result means the check passed. Each expectation matches at most one diagnostic.
    """
    mismatches: list[Diagnostic] = []
    for diagnostic in (d for top in produced for d in top.flatten()):
        expectation = next((e for e in expectations if e.matches(diagnostic)), None)
        if expectation is None:
            mismatches.append(
                Diagnostic(
                    Severity.ERROR,
                    f"unexpected {diagnostic.severity}: {diagnostic.message}",
                    diagnostic.location,
                )
            )
            continue
        expectation.matched = True
    for expectation in expectations:
        if not expectation.matched:
            mismatches.append(
                Diagnostic(
                    Severity.ERROR,
                    f'expected {expectation.severity} "{expectation.text}" was not produced',
                    expectation.written_at,
                )
            )
    return mismatches
