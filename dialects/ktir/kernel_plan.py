"""
The attributes of a kernel's plan: what `ktir-plan-kernels` decides for each divided graph op
and `ktir-lower-to-cores` builds from (and drops: core-level IR does not carry them).

```mlir
%y = ktir.matmul %a, %w {ktir.work_division = {m = 2 : i64, n = 1 : i64, k = 1 : i64},
                         ktir.chunk_plan = #ktir.chunk_plan<m = 1, n = 16, k = 2>,
                         ktir.lx_buffers = #ktir.lx_buffers<in0 = 0, in1 = 1153408, acc = 16384>,
                         ktir.prefetch = #ktir.prefetch<1>} : ...
```

- `#ktir.chunk_plan<dim = count, ..., whole_x>`: each core's slice cut into `count` chunks along
  each iteration dim (1: whole), the product being the kernel's chunks; `whole_x` keeps a
  matmul's x in LX (its whole slice loaded once). The staging buffers (`in<i>`, `out0`, `acc`,
  ...), their slots and extents follow from it (`ktir.cores.chunking.staged_buffers`).
- `#ktir.lx_buffers<role = address, ...>`: the LX byte address of each staging buffer.
- `#ktir.prefetch<i, ...>`: the tensor inputs (indices among the op's tensor operands) whose
  first load is a `ktir.dma_load ... prefetch`, run in the previous kernel's time. Without the
  attribute nothing is prefetched.

Like `attributes`, this module imports no other module of the dialect.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import ArrayAttr, IntAttr, NoneAttr, StringAttr, UnitAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

I64_MAX = 2**63 - 1
"""Addresses and counts are stored as i64 where the IR hands them on (`ktir.lx_alloc`)."""

BUFFER_ROLE = re.compile(r"in[0-9]+|out0|acc[0-9]*|scratch|online")
"""The staging buffers a kernel may have (`ktir.cores.chunking.Staged.role`)."""


def _parse_entries(parser: AttrParser, value: Callable[[], int]) -> tuple[list[str], list[int], bool]:
    """`<name = value, ..., whole_x>`: the names, the values, and whether `whole_x` ends the list."""
    names: list[str] = []
    values: list[int] = []
    flag = False

    def entry() -> None:
        nonlocal flag
        start = parser.pos
        name = parser.parse_identifier()
        if parser.parse_optional_punctuation("=") is None:
            if name != "whole_x" or flag:
                parser.raise_error(f"expected '=' after '{name}'", start, parser.pos)
            flag = True
            return
        if flag:
            parser.raise_error("'whole_x' must come last", start, parser.pos)
        names.append(name)
        values.append(value())

    with parser.in_angle_brackets():
        parser.parse_comma_separated_list(parser.Delimiter.NONE, entry)
    return names, values, flag


def _print_entries(printer: Printer, names: Sequence[str], values: Sequence[int], flag: str = "") -> None:
    """Print as `_parse_entries` reads."""
    items = [f"{n} = {v}" for n, v in zip(names, values, strict=True)] + ([flag] if flag else [])
    printer.print_string(f"<{', '.join(items)}>")


def _non_negative(parser: AttrParser) -> int:
    """An integer in [0, i64 max]; a located error otherwise."""
    start = parser.pos
    value = parser.parse_integer(allow_boolean=False)
    if not 0 <= value <= I64_MAX:
        parser.raise_error(f"expected an integer in [0, {I64_MAX}], not {value}", start, parser.pos)
    return value


def _check_names(what: str, names: Sequence[str]) -> None:
    """Each name once."""
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise VerifyException(f"{what} {', '.join(repeated)} given more than once")


@irdl_attr_definition
class ChunkPlanAttr(ParametrizedAttribute):
    """
    `#ktir.chunk_plan<m = 1, n = 16, k = 2>`: chunks per core along each iteration dim (at
    least 1; a dim not named is not cut), and `whole_x` last when a matmul keeps its x in LX.
    """

    name = "ktir.chunk_plan"

    dims: ArrayAttr[StringAttr]
    counts: ArrayAttr[IntAttr]
    whole_x: UnitAttr | NoneAttr

    def __init__(self, cuts: dict[str, int], whole_x: bool = False) -> None:
        super().__init__(
            ArrayAttr(StringAttr(d) for d in cuts),
            ArrayAttr(IntAttr(c) for c in cuts.values()),
            UnitAttr() if whole_x else NoneAttr(),
        )

    @property
    def cuts(self) -> dict[str, int]:
        """Chunks per dim, in the recorded order."""
        return {d.data: c.data for d, c in zip(self.dims.data, self.counts.data, strict=True)}

    @property
    def keeps_whole_x(self) -> bool:
        """Whether a matmul's x stays in LX, loaded whole once."""
        return isinstance(self.whole_x, UnitAttr)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        """`<dim = count, ..., whole_x>`."""
        names, values, whole_x = _parse_entries(parser, lambda: _non_negative(parser))
        return (
            ArrayAttr(StringAttr(n) for n in names),
            ArrayAttr(IntAttr(v) for v in values),
            UnitAttr() if whole_x else NoneAttr(),
        )

    def print_parameters(self, printer: Printer) -> None:
        """Print as `parse_parameters` reads."""
        cuts = self.cuts
        _print_entries(printer, list(cuts), list(cuts.values()), "whole_x" if self.keeps_whole_x else "")

    def verify(self) -> None:
        names = [d.data for d in self.dims.data]
        if len(names) != len(self.counts.data):
            raise VerifyException("#ktir.chunk_plan needs one count per dim")
        _check_names("#ktir.chunk_plan dim", names)
        bad = [f"{n} = {c.data}" for n, c in zip(names, self.counts.data, strict=True) if c.data < 1]
        if bad:
            raise VerifyException(f"#ktir.chunk_plan counts must be at least 1, not {', '.join(bad)}")


@irdl_attr_definition
class LxBuffersAttr(ParametrizedAttribute):
    """
    `#ktir.lx_buffers<in0 = 0, in1 = 8192, out0 = 16384>`: the LX byte address of each staging
    buffer of a kernel, by role (`in<i>`, `out0`, `acc`, `acc<p>`, `scratch`, `online`).
    """

    name = "ktir.lx_buffers"

    roles: ArrayAttr[StringAttr]
    addresses: ArrayAttr[IntAttr]

    def __init__(self, addresses: dict[str, int]) -> None:
        super().__init__(
            ArrayAttr(StringAttr(r) for r in addresses), ArrayAttr(IntAttr(a) for a in addresses.values())
        )

    @property
    def by_role(self) -> dict[str, int]:
        """Address per role."""
        return {r.data: a.data for r, a in zip(self.roles.data, self.addresses.data, strict=True)}

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        """`<role = address, ...>`."""
        names, values, whole_x = _parse_entries(parser, lambda: _non_negative(parser))
        if whole_x:
            parser.raise_error("'whole_x' belongs to #ktir.chunk_plan, not #ktir.lx_buffers")
        return ArrayAttr(StringAttr(n) for n in names), ArrayAttr(IntAttr(v) for v in values)

    def print_parameters(self, printer: Printer) -> None:
        """Print as `parse_parameters` reads."""
        by_role = self.by_role
        _print_entries(printer, list(by_role), list(by_role.values()))

    def verify(self) -> None:
        roles = [r.data for r in self.roles.data]
        if len(roles) != len(self.addresses.data) or not roles:
            raise VerifyException("#ktir.lx_buffers needs one address per buffer, and a buffer")
        _check_names("#ktir.lx_buffers buffer", roles)
        unknown = [r for r in roles if not BUFFER_ROLE.fullmatch(r)]
        if unknown:
            raise VerifyException(
                f"#ktir.lx_buffers roles are in<i>, out0, acc<p>, scratch or online, not {', '.join(unknown)}"
            )
        if any(not 0 <= a.data <= I64_MAX for a in self.addresses.data):
            raise VerifyException("#ktir.lx_buffers addresses must be non-negative i64")


@irdl_attr_definition
class PrefetchAttr(ParametrizedAttribute):
    """
    `#ktir.prefetch<0, 2>`: the tensor inputs (indices among the op's tensor operands, in
    increasing order) whose first load is a prefetch.
    """

    name = "ktir.prefetch"

    inputs: ArrayAttr[IntAttr]

    def __init__(self, inputs: Sequence[int]) -> None:
        super().__init__(ArrayAttr(IntAttr(i) for i in inputs))

    @property
    def indices(self) -> frozenset[int]:
        """The prefetched inputs."""
        return frozenset(i.data for i in self.inputs.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        """`<i, ...>`."""
        with parser.in_angle_brackets():
            values = parser.parse_comma_separated_list(parser.Delimiter.NONE, lambda: _non_negative(parser))
        return (ArrayAttr(IntAttr(v) for v in values),)

    def print_parameters(self, printer: Printer) -> None:
        """Print as `parse_parameters` reads."""
        printer.print_string(f"<{', '.join(str(i.data) for i in self.inputs.data)}>")

    def verify(self) -> None:
        values = [i.data for i in self.inputs.data]
        if not values or any(v < 0 for v in values) or values != sorted(set(values)):
            raise VerifyException(
                f"#ktir.prefetch lists input indices once each, non-negative and increasing, not {values}"
            )


PLAN_ATTRIBUTES = [ChunkPlanAttr, LxBuffersAttr, PrefetchAttr]
"""The plan attributes the dialect registers."""
