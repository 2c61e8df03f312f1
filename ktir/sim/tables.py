"""
Report tables that fit the console: columns are chosen by width, numbers are not cut.

A table is a list of `Column`s, each with its cells already formatted. `fitted_table` keeps the
columns in their order; it adds the optional ones by priority (lowest number first) while the
table still fits `width` with every cell on one line (a narrow later column may still fit
where a wider earlier one did not); if the essential columns (priority 0) alone
do not fit, a text column (names) gets narrower, down to `min_width`, and its long cells continue
on the next lines (folded, never cut). A numeric column is never narrower than its widest cell,
as long as the essential columns fit at all: the kernel table needs about 57 columns; on a
narrower console rich squeezes every column, numbers included.
Cells are plain text (rich markup such as `[...]` in `ktir.fused[matmul+silu]` is shown, not
interpreted).

Example: a kernel table with short names at 80 columns keeps `#`, `result`, `op`, `cycles`,
`x sust`, `x roof`, `MB` and `traffic` and leaves out `sustained`, `bottleneck`, `min MB`,
`cores` and `chunks`; at 160 columns it keeps them all. With long names (the demo's Llama:
29-character results, 50-character fused op lists) only the essential columns stay, and the
names fold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table
from rich.text import Text

BORDER = 3
"""Characters a column adds besides its text in rich's default box: a space each side and a rule."""


@dataclass(frozen=True)
class Column:
    """One column: its header, its formatted cells, and how it may give way to a narrow console."""

    header: str
    cells: Sequence[str]
    numeric: bool = True
    priority: int = 0
    """Columns with the highest number are dropped first when the table does not fit."""
    min_width: int = 0
    """A text column's narrowest width (longer cells fold onto more lines); numbers keep theirs."""

    @property
    def natural(self) -> int:
        """The width that shows the header and every cell whole."""
        return max([len(self.header), *(len(c) for c in self.cells)])

    @property
    def narrowest(self) -> int:
        """The narrowest width this column may get."""
        return self.natural if self.numeric else min(self.natural, max(self.min_width, len(self.header)))


def fitted_table(
    title: str | None, columns: Sequence[Column], width: int, styles: Sequence[str | None] = ()
) -> Table:
    """
    A rich table of `columns` (in their order) that fits `width`: the columns that fit, by
    priority; the ones with priority 0 are always kept. `styles` colours whole rows.
    """
    kept: list[Column] = []
    for column in sorted(columns, key=lambda c: c.priority):
        trial = [*kept, column]  # an optional column comes only if every name stays whole
        if column.priority == 0 or 1 + sum(c.natural + BORDER for c in trial) <= width:
            kept = trial
    ordered = [c for c in columns if c in kept]
    widths = _shrunk([c.natural for c in ordered], [c.narrowest for c in ordered], width)
    table = Table(title=title)
    for column, column_width in zip(ordered, widths, strict=True):
        table.add_column(
            column.header,
            justify="right" if column.numeric else "left",
            no_wrap=column.numeric,
            overflow="ellipsis" if column.numeric else "fold",  # numbers always fit their width
            width=column_width,
        )
    rows = len(ordered[0].cells) if ordered else 0
    for i in range(rows):
        table.add_row(*(Text(c.cells[i]) for c in ordered), style=styles[i] if i < len(styles) else None)
    return table


def _shrunk(natural: list[int], narrowest: list[int], width: int) -> list[int]:
    """
    Column widths that fit `width` if they can: the natural ones, then one character at a time
    off the column with the most room above its narrowest, until the table fits or none may
    shrink more. Example: natural [3, 30, 8], narrowest [3, 12, 8], width 40: [3, 19, 8]
    (1 + 6 + 22 + 11 = 40, three borders of 3 and one of 1).
    """
    widths = list(natural)
    excess = 1 + sum(w + BORDER for w in widths) - width
    while excess > 0:
        room = [(w - n, i) for i, (w, n) in enumerate(zip(widths, narrowest, strict=True)) if w > n]
        if not room:
            break
        _, widest = max(room)
        widths[widest] -= 1
        excess -= 1
    return widths


__all__ = ["Column", "fitted_table"]
