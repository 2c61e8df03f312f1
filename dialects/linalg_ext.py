"""
Upstream `linalg` as KTIR programs write it, where xDSL's `linalg` differs: `linalg.reduce` in
its short form, the named ops `linalg.div` and `linalg.batch_matmul` xDSL lacks, and
`linalg.matmul` whose f16 operands accumulate into an f32 output (its body casts them, as
upstream's does).

`LinalgExt` is xDSL's `linalg` dialect with these ops added or replacing xDSL's:

    %s = linalg.reduce { arith.addf } ins(%x : tensor<8x64xf32>) outs(%e : tensor<8xf32>) dimensions = [1]

is the same op as the region form

    %s = linalg.reduce ins(%x : tensor<8x64xf32>) outs(%e : tensor<8xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
      }

and, as mlir-opt does, a reduction whose body is one binary op of (input, accumulator) prints
in the short form.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Self, cast

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects import linalg as xdsl_linalg
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    AnyTensorType,
    ArrayAttr,
    DenseArrayBase,
    MemRefType,
    TensorType,
    i64,
)
from xdsl.dialects.linalg import ops as linalg_ops
from xdsl.dialects.linalg.abstract_ops import ElementwiseOperation, NamedOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import YieldOp
from xdsl.ir import Attribute, Block, BlockArgument, Dialect, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    IRDLOperation,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


def _parse_typed_operand(parser: Parser, keyword: str) -> SSAValue:
    """`ins(%x : tensor<8x64xf32>)`: the operand after `keyword`, resolved to its type."""
    parser.parse_characters(keyword)
    parser.parse_punctuation("(")
    unresolved = parser.parse_unresolved_operand()
    parser.parse_punctuation(":")
    value = parser.resolve_operand(unresolved, parser.parse_type())
    parser.parse_punctuation(")")
    return value


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """
    `linalg.reduce` (xDSL's definition and verifier), with the short `{ combiner }` form parsed
    and printed (module docstring).
    """

    name = "linalg.reduce"

    input = operand_def(base(MemRefType) | base(AnyTensorType))
    init = operand_def(base(MemRefType) | base(AnyTensorType))
    result = var_result_def(AnyTensorType)
    region: Region = region_def("single_block")
    dimensions = prop_def(DenseArrayBase.constr(i64))

    def __init__(self, input: SSAValue, init: SSAValue, dimensions: Attribute, region: Region) -> None:
        result = (init.type,) if isinstance(init.type, TensorType) else ()
        super().__init__(
            properties={"dimensions": dimensions},
            operands=(input, init),
            regions=[region],
            result_types=[result],
        )

    def verify_(self) -> None:
        linalg_ops.ReduceOp.verify_(self)  # pyright: ignore[reportArgumentType]  # linalg.reduce's own verifier, on a copy of its fields

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        if parser.parse_optional_punctuation("{") is None:
            return cast(Self, linalg_ops.ReduceOp.parse.__func__(cls, parser))
        combiner_at = parser.pos
        combiner = parser.parse_identifier(" (the reduction's combining op, e.g. arith.addf)")
        parser.parse_punctuation("}")
        combiner_type = parser.ctx.get_optional_op(combiner)
        if combiner_type is None:
            parser.raise_error(f"unknown combining op '{combiner}'", combiner_at, parser.pos)
        source = _parse_typed_operand(parser, "ins")
        init = _parse_typed_operand(parser, "outs")
        parser.parse_keyword("dimensions")
        parser.parse_punctuation("=")
        dimensions = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
        element = cast(TensorType[Attribute], init.type).element_type
        block = Block(arg_types=(element, element))
        combined = combiner_type.create(operands=list(block.args), result_types=[element])
        block.add_ops([combined, YieldOp(combined.results[0])])
        return cls(source, init, DenseArrayBase.from_list(i64, dimensions), Region(block))

    def short_combiner(self) -> Operation | None:
        """The body's one op when it combines (input, accumulator) into the yielded value."""
        ops = list(self.region.block.ops)
        if len(ops) != 2 or not isinstance(ops[1], YieldOp):
            return None
        combiner, args = ops[0], self.region.block.args
        if tuple(combiner.operands) != tuple(args) or len(combiner.results) != 1:
            return None
        if tuple(ops[1].operands) != (combiner.results[0],) or combiner.attributes or combiner.regions:
            return None
        fastmath = combiner.properties.get("fastmath")
        if set(combiner.properties) - {"fastmath"} or (
            fastmath is not None and fastmath != arith.FastMathFlagsAttr("none")
        ):
            return None
        return combiner

    def print(self, printer: Printer) -> None:
        combiner = self.short_combiner()
        if combiner is not None:
            printer.print_string(f" {{ {combiner.name} }}")
        printer.print_string(" ins(")
        printer.print_ssa_value(self.input)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        printer.print_string(") outs(")
        printer.print_ssa_value(self.init)
        printer.print_string(" : ")
        printer.print_attribute(self.init.type)
        printer.print_string(") dimensions = [")
        printer.print_list(self.dimensions.get_values(), printer.print_int)
        printer.print_string("]")
        if combiner is not None:
            return
        printer.print_string("\n")
        with printer.in_parens():
            printer.print_list(self.region.blocks[0].args, printer.print_block_argument)
        printer.print_string(" ")
        printer.print_region(self.region, print_entry_block_args=False)


def _named_op_arguments(
    op_type: type[NamedOperation],
    inputs: Sequence[SSAValue],
    outputs: Sequence[SSAValue],
    res: Sequence[Attribute] | None,
    attributes: dict[str, Attribute] | None,
) -> dict[str, object]:
    """A named op's constructor arguments: results of its tensor outputs' types, its body."""
    if res is None:
        res = tuple(o.type for o in outputs if isinstance(o.type, TensorType))
    return {
        "ins": inputs,
        "outs": outputs,
        "result_types": res,
        "attributes": attributes,
        "hidden_region": op_type.get_hidden_region(inputs, outputs),
    }


class _BuiltFromOutputs:
    """The constructor of a named op: its results typed as its tensor outputs, its body built."""

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        outputs: Sequence[SSAValue] = (),
        res: Sequence[Attribute] | None = None,
        attributes: dict[str, Attribute] | None = None,
    ) -> None:
        op_type = cast("type[NamedOperation]", type(self))  # a mixin of named ops
        super().__init__(**_named_op_arguments(op_type, inputs, outputs, res, attributes))


@irdl_op_definition
class DivOp(_BuiltFromOutputs, ElementwiseOperation):
    """`linalg.div`: elementwise division of two tensors (upstream's named op)."""

    name = "linalg.div"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        """The scalar body: `arith.divf` (or `arith.divsi` on integers), yielded."""
        arg_types = cls.body_arg_types((*inputs, *outputs))
        div = arith.DivfOp if isinstance(arg_types[-1], AnyFloat) else arith.DivSIOp

        @Builder.implicit_region(arg_types)
        def hidden_region(args: tuple[BlockArgument, ...]) -> None:
            YieldOp(div(args[0], args[1]))

        return hidden_region


def _multiply_accumulate(arg_types: Sequence[Attribute]) -> Region:
    """
    A matmul's scalar body: the operands cast to the accumulator's type, as upstream's named op
    casts them (`arith.extf` of f16 operands into an f32 accumulator), multiplied, added to the
    accumulator, yielded.
    """
    acc_type = arg_types[-1]
    add, mul = (
        (arith.AddfOp, arith.MulfOp) if isinstance(acc_type, AnyFloat) else (arith.AddiOp, arith.MuliOp)
    )

    @Builder.implicit_region(arg_types)
    def hidden_region(args: tuple[BlockArgument, ...]) -> None:
        x, y = (
            arith.ExtFOp(a, acc_type).result if isinstance(acc_type, AnyFloat) and a.type != acc_type else a
            for a in args[:2]
        )
        YieldOp(add(mul(x, y), args[2]))

    return hidden_region


def _batch_maps() -> ArrayAttr[AffineMapAttr]:
    return ArrayAttr(
        [
            AffineMapAttr(AffineMap.from_callable(lambda b, i, _, k: (b, i, k))),
            AffineMapAttr(AffineMap.from_callable(lambda b, _, j, k: (b, k, j))),
            AffineMapAttr(AffineMap.from_callable(lambda b, i, j, _: (b, i, j))),
        ]
    )


MATMUL_MAPS = ArrayAttr(
    [
        AffineMapAttr(AffineMap.from_callable(lambda i, _, k: (i, k))),
        AffineMapAttr(AffineMap.from_callable(lambda _, j, k: (k, j))),
        AffineMapAttr(AffineMap.from_callable(lambda i, j, _: (i, j))),
    ]
)
"""`linalg.matmul`'s default indexing maps: A (m, k), B (k, n), C (m, n)."""

_OPERAND_ORDERS = (("d0", "d2"), ("d2", "d0"), ("d2", "d1"), ("d1", "d2"))
"""What an operand's map may read: A as (m, k) or transposed (k, m), B as (k, n) or (n, k)."""


class _Product(_BuiltFromOutputs):
    """A matmul named op: its body (`_multiply_accumulate`) and its indexing maps (a property)."""

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        """The scalar body (`_multiply_accumulate`)."""
        named = cast("type[NamedOperation]", cls)  # a mixin of named ops
        return _multiply_accumulate(named.body_arg_types((*inputs, *outputs)))

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        """x's, y's and the output's maps."""
        return tuple(m.data for m in self.get_indexing_maps().data)

    def get_indexing_maps(self) -> ArrayAttr[AffineMapAttr]:
        """The op's indexing maps (the defaults unless given)."""
        return self.indexing_maps  # pyright: ignore[reportAttributeAccessIssue]  # a mixin: the named op's xDSL prop_def


@irdl_op_definition
class MatmulOp(_Product, NamedOperation):
    """
    `linalg.matmul`: C += A @ B, as xDSL's, but f16 operands may accumulate into an f32 C
    (upstream's body casts them; xDSL's would add an f16 product to an f32).
    """

    name = "linalg.matmul"

    PRINT_ATTRS_IN_FRONT: ClassVar[bool] = True

    indexing_maps = prop_def(ArrayAttr[AffineMapAttr], default_value=MATMUL_MAPS)

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        """Rows and columns parallel; K a reduction."""
        parallel, reduction = IteratorTypeAttr.parallel(), IteratorTypeAttr.reduction()
        return ArrayAttr([parallel, parallel, reduction])

    @classmethod
    def parse(cls, parser: Parser) -> MatmulOp:
        """Upstream's form: an optional `indexing_maps = [...]` (a transposed operand), then xDSL's."""
        maps = None
        if parser.parse_optional_keyword("indexing_maps"):
            parser.parse_punctuation("=")
            pos = parser.pos
            maps = parser.parse_attribute()
            if not isinstance(maps, ArrayAttr) or not all(isinstance(m, AffineMapAttr) for m in maps.data):
                parser.raise_error("indexing_maps must be a list of affine maps", pos, parser.pos)
        op = cast(MatmulOp, super().parse(parser))
        if maps is not None:
            op.properties["indexing_maps"] = maps
        return op

    def print(self, printer: Printer) -> None:
        if self.indexing_maps != MATMUL_MAPS:  # mlir-opt prints the maps only when not the default
            printer.print_string(" indexing_maps = ")
            printer.print_attribute(self.indexing_maps)
        super().print(printer)

    def verify_(self) -> None:
        maps = [m.data for m in self.indexing_maps.data]
        if len(maps) != 3 or any(m.num_dims != 3 or len(m.results) != 2 for m in maps):
            raise VerifyException("indexing_maps must be three maps of (m, n, k) to two dims each")
        if maps[2] != MATMUL_MAPS.data[2].data:
            raise VerifyException("the output's indexing map must be (m, n, k) -> (m, n)")
        reads = [tuple(map(str, m.results)) for m in maps[:2]]
        if reads[0] not in _OPERAND_ORDERS[:2] or reads[1] not in _OPERAND_ORDERS[2:]:
            raise VerifyException(
                "the operands' indexing maps must each read (m, k) or (k, m), (k, n) or (n, k)"
            )


@irdl_op_definition
class BatchMatmulOp(_Product, NamedOperation):
    """`linalg.batch_matmul`: C[b] += A[b] @ B[b] over a leading batch dim (upstream's named op)."""

    name = "linalg.batch_matmul"

    PRINT_ATTRS_IN_FRONT: ClassVar[bool] = True

    indexing_maps = prop_def(ArrayAttr[AffineMapAttr], default_value=_batch_maps())

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        """Batch, rows and columns parallel; K a reduction."""
        parallel, reduction = IteratorTypeAttr.parallel(), IteratorTypeAttr.reduction()
        return ArrayAttr([parallel, parallel, parallel, reduction])


_REPLACED = {ReduceOp.name, MatmulOp.name}

LinalgExt = Dialect(
    "linalg",
    [
        *(op for op in xdsl_linalg.Linalg.operations if op.name not in _REPLACED),
        ReduceOp,
        MatmulOp,
        DivOp,
        BatchMatmulOp,
    ],
    list(xdsl_linalg.Linalg.attributes),
)
"""xDSL's `linalg` with the short-form `linalg.reduce`, `linalg.div` and `linalg.batch_matmul`."""


__all__ = ["BatchMatmulOp", "DivOp", "LinalgExt", "MatmulOp", "ReduceOp"]
