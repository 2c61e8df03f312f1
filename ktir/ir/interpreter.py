"""
How each of ktir's interpreters finds the code that runs an op: one registration convention.

There are four interpreters: the reference executor (`ktir.reference`, graph-level ops on whole
host arrays), the core executor (`ktir.sim.executor.KernelInterpreter`, kernel bodies for all
cores at once), the simulator (`ktir.sim.engine.SimKernel`, the core executor with timing) and
the ktdp engine (`ktir.ktdp_engine.engine.TileProgram`, RFC 0682 programs for all tiles at once). Each
keeps an `Implementations` table, op class -> the function that runs it:

- `@table.impl(OpClass, ...)` registers a function for op classes (`ktir.reference.ops`:
  `ELEMENTWISE.impl(ew.ExpOp)`); `@table.impl_dialect("linalg")` registers the fallback of
  every op of a dialect that has no entry of its own (the ktdp engine's `linalg`, `math` and
  `arith` ops beyond index arithmetic); `Implementations.compose(a, b)` is the union of tables,
  later ones winning, as the reference's `IMPLEMENTATIONS` joins its modules' tables.
- An interpreter written as a class (`Interpreter`) marks its methods with `@impl(OpClass)`
  (`@impl_dialect`); its table `IMPLS` is built once, when the class is created, from its
  bases' tables, the tables its body names in `IMPLS` and its own marked methods. A subclass
  overrides an op by marking its own method: `SimKernel` marks its `_dma` to add timing, and
  overriding a marked method without marking it is a `TypeError` at class creation (it would
  not run). `ktir.ir.lockstep` is the one such class both kernel interpreters derive from.

The functions of a class's table take `(interpreter, op)` (methods, unbound) and return the op's
results' values, or None for an op without results; the reference's take `(op, operand arrays)`,
since the simulator reuses them on host tiles without an interpreter.

Why not xDSL's `Interpreter` and `InterpreterFunctions` themselves: this is their shape (`@impl`,
`@register_impls`, an override in a subclass), but xDSL's `run_op` gathers the operands into a
tuple, wraps the results in an `OpImplResult`, checks their count and calls its listeners for
every op, and keeps one flat table without a dialect fallback. ktir's interpreters run each op
once for all cores or tiles as NumPy arrays, so what an op costs them beyond its NumPy call is
this dispatch: here it is one dict lookup by `type(op)` and a plain call (a subclass of a
registered op, as `ktir.dialects.scf_ext.ForOp` of xDSL's `scf.for`, walks its bases once more).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from xdsl.ir import Operation

F = TypeVar("F", bound=Callable[..., Any])

_MARK = "__ktir_impl__"
"""The attribute `impl` and `impl_dialect` set on a method: the op classes and dialect names it runs."""


class Implementations(dict[type[Operation], F]):
    """Op class -> the function that runs it, and dialect name -> the fallback of that dialect's ops."""

    def __init__(self, entries: dict[type[Operation], F] | None = None) -> None:
        super().__init__(entries or {})
        self.dialects: dict[str, F] = {}

    @classmethod
    def compose(cls, *tables: Implementations[F]) -> Implementations[F]:
        """The union of `tables` (op classes and dialect fallbacks alike), later ones winning."""
        union: Implementations[F] = cls()
        for table in tables:
            union.update(table)
            union.dialects.update(table.dialects)
        return union

    def impl(self, *op_classes: type[Operation]) -> Callable[[F], F]:
        """Register the decorated function for `op_classes`."""

        def register(function: F) -> F:
            for op_class in op_classes:
                self[op_class] = function
            return function

        return register

    def impl_dialect(self, name: str) -> Callable[[F], F]:
        """Register the decorated function for every op of dialect `name` without an entry of its own."""

        def register(function: F) -> F:
            self.dialects[name] = function
            return function

        return register

    def lookup(self, op: Operation) -> F | None:
        """
        The function that runs `op`: its class's (or, for a subclass of a registered op such as
        `ktir.dialects.scf_ext.ForOp`, its nearest base's), else its dialect's fallback; None if
        neither.
        """
        op_class = type(op)
        found = self.get(op_class)
        if found is None:
            found = next((self[base] for base in op_class.__mro__[1:] if base in self), None)
        if found is None and self.dialects:
            found = self.dialects.get(op.dialect_name())
        return found


def impl(*op_classes: type[Operation]) -> Callable[[F], F]:
    """Mark an `Interpreter` method as the implementation of `op_classes` (its class's `IMPLS`)."""

    def mark(method: F) -> F:
        setattr(method, _MARK, (*getattr(method, _MARK, ()), *op_classes))
        return method

    return mark


def impl_dialect(name: str) -> Callable[[F], F]:
    """Mark an `Interpreter` method as the fallback of dialect `name`'s ops."""

    def mark(method: F) -> F:
        setattr(method, _MARK, (*getattr(method, _MARK, ()), name))
        return method

    return mark


class Interpreter:
    """
    An interpreter whose op implementations are its marked methods (module docstring).

    `IMPLS` is the class's table, built when the class is created: its base's table, then any
    `IMPLS` the class body sets (e.g. module tables composed), then its marked methods.
    """

    IMPLS: ClassVar[Implementations[Callable[[Any, Any], Any]]] = Implementations()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        inherited = next(base.__dict__["IMPLS"] for base in cls.__mro__[1:] if "IMPLS" in base.__dict__)
        table = Implementations.compose(inherited, cls.__dict__.get("IMPLS", Implementations()))
        for name, member in cls.__dict__.items():
            marks = getattr(member, _MARK, ())
            if not marks:
                _check_not_overridden(cls, name)
            for key in marks:
                if isinstance(key, str):
                    table.dialects[key] = member
                else:
                    table[key] = member
        cls.IMPLS = table


def _check_not_overridden(cls: type, name: str) -> None:
    """A `TypeError` if `name` overrides a marked method of a base: the base's would keep running."""
    for base in cls.__mro__[1:]:
        if getattr(base.__dict__.get(name), _MARK, ()):
            raise TypeError(
                f"{cls.__name__}.{name} overrides an op implementation of {base.__name__}: mark it @impl"
            )


__all__ = ["Implementations", "Interpreter", "impl", "impl_dialect"]
