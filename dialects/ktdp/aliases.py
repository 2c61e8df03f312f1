"""
MLIR's `#set` aliases for the group sets of `!ktdp.tile_future` types that upstream MLIR
cannot read in place: a set with an inequality (`affine_set<(d0) : (d0 >= 0, -d0 + 7 >= 0)>`)
inside a type's `<...>` ends the type at its `>`. Printed as `#set = affine_set<...>` lines
before the module and `groups = #set` in the type, as mlir-opt prints aliases; a set of
equalities only prints in place, as before.

```python
with future_set_aliases(module) as header:
    text = header + printed_module
```

The aliases live in a context variable while the module prints (`TileFutureType`'s printer
asks `alias_of`), so every printer of a module (ktir-opt, `module_text`) gets them by entering
this context around its printing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from xdsl.dialects.builtin import AffineSetAttr
from xdsl.ir import Attribute, Operation

from ktir.dialects.ktdp.syntax import affine_attribute_text

_ALIASES: ContextVar[dict[AffineSetAttr, str] | None] = ContextVar("ktdp_future_set_aliases", default=None)


def alias_of(tile_set: AffineSetAttr) -> str | None:
    """The alias `tile_set` prints as in the module being printed (None: in place)."""
    aliases = _ALIASES.get()
    return None if aliases is None else aliases.get(tile_set)


def _group_sets(types: Iterator[Attribute]) -> Iterator[AffineSetAttr]:
    for type_ in types:
        groups = getattr(type_, "groups", None) if type_.name == "ktdp.tile_future" else None
        if isinstance(groups, AffineSetAttr) and any(c.kind.value != "==" for c in groups.data.constraints):
            yield groups


def _types(module: Operation) -> Iterator[Attribute]:
    for op in module.walk():
        yield from (v.type for v in op.results)
        yield from (v.type for v in op.operands)


@contextmanager
def future_set_aliases(module: Operation) -> Iterator[str]:
    """
    While the body prints `module`, its future group sets with an inequality print as `#set`,
    `#set1`, ... in order of first use; yields their definitions, one line each, to print first.
    """
    aliases: dict[AffineSetAttr, str] = {}
    for tile_set in _group_sets(_types(module)):
        aliases.setdefault(tile_set, f"#set{len(aliases) or ''}")
    header = "".join(f"{name} = {affine_attribute_text(s)}\n" for s, name in aliases.items())
    token = _ALIASES.set(aliases)
    try:
        yield header
    finally:
        _ALIASES.reset(token)


__all__ = ["alias_of", "future_set_aliases"]
