"""
MLIR's attribute aliases for affine maps and sets: a printed module names each distinct map
`#map`, `#map1`, ... and each distinct set `#set`, `#set1`, ..., in order of first use, and
defines them before the module, as mlir-opt prints them (the builtin dialect's `map` and `set`
alias names). Upstream MLIR reads either form; it cannot read a set with an inequality in place
inside a type's `<...>` (its `>=` ends the type), which an alias avoids.

```mlir
#map = affine_map<(d0, d1) -> (d0, d1)>
#set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>
module {
  ... ktdp.construct_access_tile %va[%id, 0] {access_tile_order = #map, access_tile_set = #set} ...
}
```

`aliased_text(module, printer_class, **options)` prints a module so: while it prints, a table
in a context variable gives each map and set its name (`alias_of`, which the ktdp printers ask
through `print_affine`, and `AliasPrinter.print_attribute`, which xDSL's printers of builtin
attributes reach: `linalg` indexing maps, the generic form's properties), and the definitions
are written before the text. Outside it, `alias_of` is None and maps and sets print in place.
"""

from __future__ import annotations

import io
from typing import Any

from xdsl.ir import Attribute, Operation
from xdsl.printer import Printer

from ktir.dialects.ktdp.syntax import affine_attribute_text, alias_of, aliases


def definitions(table: dict[Attribute, str]) -> str:
    """The aliases' definitions, one line each, in order of first use (`#map = affine_map<...>`)."""
    return "".join(f"{name} = {affine_attribute_text(attribute)}\n" for attribute, name in table.items())


class AliasPrinting(Printer):
    """A printer whose affine maps and sets print as their aliases while `aliases` is active."""

    def print_attribute(self, attribute: Attribute) -> None:
        """`attribute`, or its alias (`alias_of`)."""
        if (name := alias_of(attribute)) is not None:
            self.print_string(name)
            return
        super().print_attribute(attribute)


class AliasPrinter(AliasPrinting, Printer):
    """xDSL's printer with aliases (`AliasPrinting`)."""


def aliased_text(op: Operation, printer_class: type[Printer] = AliasPrinter, **options: Any) -> str:
    """
    `op` printed by `printer_class` (an `AliasPrinter`; `options` are the printer's fields) with
    its maps and sets as aliases, their definitions first.
    """
    body = io.StringIO()
    with aliases() as table:
        printer_class(stream=body, **options).print_op(op)
    return definitions(table) + body.getvalue()


__all__ = ["AliasPrinter", "AliasPrinting", "aliased_text", "definitions"]
