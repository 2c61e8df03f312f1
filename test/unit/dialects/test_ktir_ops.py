"""The graph-level ktir ops built from Python: construction, verification, registration, docs."""

import re
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    Builtin,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.dialects.func import Func
from xdsl.ir import Attribute
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from ktir.dialects.ktir import Ktir
from ktir.dialects.ktir.attributes import ATTRIBUTES, OperandRefAttr, operand_refs
from ktir.dialects.ktir.collective import COLLECTIVE_OPS
from ktir.dialects.ktir.core import CORE_OPS
from ktir.dialects.ktir.data import DATA_OPS
from ktir.dialects.ktir.elementwise import (
    ELEMENTWISE_OPS,
    AbsOp,
    AddOp,
    ClampOp,
    EqOp,
    ExpOp,
    FullOp,
    GeluOp,
    SoftplusOp,
    UnaryOp,
    WhereOp,
)
from ktir.dialects.ktir.kernel_plan import PLAN_ATTRIBUTES
from ktir.dialects.ktir.routing import ROUTING_OPS
from ktir.dialects.ktir.structured import (
    STRUCTURED_OPS,
    CpuFallbackOp,
    LayerNormOp,
    MatmulOp,
    SumOp,
    int_array,
)

ALL_OPS = [*ELEMENTWISE_OPS, *STRUCTURED_OPS, *DATA_OPS, *ROUTING_OPS, *COLLECTIVE_OPS, *CORE_OPS]
LIT_DIR = Path(__file__).parents[2] / "lit" / "dialects" / "ktir"


def tensor(element_type: Attribute, *shape: int) -> TensorType[Attribute]:
    return TensorType(element_type, list(shape))


def value(element_type: Attribute, *shape: int):
    return create_ssa_value(tensor(element_type, *shape))


def rejects(op, message: str) -> None:
    """`op` fails verification with exactly `message` (also within the full verify())."""
    with pytest.raises(VerifyException, match=re.escape(message)):
        op.verify()
    with pytest.raises(VerifyException) as info:
        op.verify_()
    assert str(info.value) == message


#### Construction and verification ####


def test_add_broadcasts():
    op = AddOp(value(f16, 4, 1, 64), value(f16, 8, 1), tensor(f16, 4, 8, 64))
    op.verify()
    assert op.result.type == tensor(f16, 4, 8, 64)
    assert [operand.type for operand in op.operands] == [tensor(f16, 4, 1, 64), tensor(f16, 8, 1)]


def test_add_rejects_a_wrong_result_shape():
    op = AddOp(value(f16, 4, 1, 64), value(f16, 8, 1), tensor(f16, 4, 1, 64))
    rejects(op, "result shape [4, 1, 64] does not match the broadcast shape [4, 8, 64]")


def test_comparison_gives_i1():
    EqOp(value(f32, 3), value(f32), tensor(i1, 3)).verify()
    rejects(
        EqOp(value(f32, 3), value(f32), tensor(f32, 3)), "result element type f32 must be i1 (a comparison)"
    )


def test_full_stores_an_f64_value():
    op = FullOp(0.5, tensor(f16, 1))
    op.verify()
    assert op.value == FloatAttr(0.5, f64)
    assert op.result.type == tensor(f16, 1)
    assert str(op) == "%0 = ktir.full 5.000000e-01 : tensor<1xf16>"
    negative_infinity = FullOp(float("-inf"), tensor(f16, 16, 16))
    assert str(negative_infinity) == "%0 = ktir.full 0xfff0000000000000 : tensor<16x16xf16>"


def test_full_rejects_a_dynamic_shape():
    rejects(
        FullOp(0.0, TensorType(f16, [-1])),
        "result must have a static shape (graph-level ktir has no dynamic dims)",
    )


@pytest.mark.parametrize("op_class", [cls for cls in ELEMENTWISE_OPS if issubclass(cls, UnaryOp)])
def test_unary_ops_keep_the_input_type(op_class):
    x = value(f32, 2, 3)
    op = op_class(x)
    op.verify()
    assert op.result.type == x.type
    assert op.input is x


def test_unary_float_only_and_i1_rules():
    rejects(ExpOp(value(i32, 4)), "ktir.exp needs a floating-point input, not i32")
    AbsOp(value(i32, 4)).verify()
    rejects(AbsOp(value(i1, 4)), "ktir.abs is not defined on i1 tensors")


def test_unary_properties():
    GeluOp(value(bf16, 4), {"approximate": StringAttr("tanh")}).verify()
    rejects(
        GeluOp(value(bf16, 4), {"approximate": StringAttr("erf")}),
        'approximate must be "none" or "tanh", not "erf"',
    )
    rejects(SoftplusOp(value(f16, 4), {"beta": FloatAttr(0.0, f64)}), "beta must be non-zero")


def test_where_and_clamp_from_build():
    where = WhereOp.build(
        operands=[value(i1, 8, 1), value(f16, 4, 1, 64), value(f16, 64)],
        result_types=[tensor(f16, 4, 8, 64)],
    )
    where.verify()
    x = value(f16, 4)
    ClampOp.build(operands=[x], result_types=[x.type], properties={"max": FloatAttr(6.0, f64)}).verify()
    rejects(ClampOp.build(operands=[x], result_types=[x.type]), "clamp needs a min or a max bound")


def test_matmul_and_sum_from_build():
    MatmulOp.build(
        operands=[value(f16, 2, 16, 64), value(f16, 64, 128)], result_types=[tensor(f16, 2, 16, 128)]
    ).verify()
    rejects(
        MatmulOp.build(
            operands=[value(f16, 2, 4, 64), value(f16, 2, 64, 8)], result_types=[tensor(f16, 2, 4, 8)]
        ),
        "ktir.matmul takes 2D x 2D, 3D x 2D, not 3D x 3D",
    )
    SumOp.build(
        operands=[value(f32, 2, 4, 64)], result_types=[tensor(f32, 4)], properties={"dims": int_array([0, 2])}
    ).verify()
    assert int_array([0, 2]) == DenseArrayBase.from_list(i64, [0, 2])


def test_layer_norm_operands_are_input_weight_bias():
    x, w, b = value(f16, 2, 4, 64), value(f16, 64), value(f16, 64)
    props = {
        "normalized_shape": int_array([64]),
        "eps": FloatAttr(1e-5, f64),
        "operandSegmentSizes": DenseArrayBase.from_list(i32, [1, 1, 1]),
    }
    op = LayerNormOp.build(operands=[x, [w], [b]], result_types=[x.type], properties=props)
    op.verify()
    assert (op.input, op.weight, op.bias) == (x, w, b)
    assert list(op.operands) == [x, w, b]
    bias_only = LayerNormOp.build(
        operands=[x, [], [b]],
        result_types=[x.type],
        properties={**props, "operandSegmentSizes": DenseArrayBase.from_list(i32, [1, 0, 1])},
    )
    bias_only.verify()
    assert (bias_only.input, bias_only.weight, bias_only.bias) == (x, None, b)


def test_cpu_fallback_operand_references():
    ids = value(IntegerType(64), 16)
    args = ArrayAttr([OperandRefAttr(0), IntegerAttr(0, i64)])
    op = CpuFallbackOp.build(
        operands=[[ids]],
        result_types=[[ids.type]],
        properties={"aten": StringAttr("aten::cumsum.default"), "args": args},
    )
    op.verify()
    assert operand_refs(args) == [0]
    assert operand_refs(ArrayAttr([ArrayAttr([OperandRefAttr(2)]), OperandRefAttr(1)])) == [2, 1]
    unused = CpuFallbackOp.build(
        operands=[[ids, ids]],
        result_types=[[ids.type]],
        properties={"aten": StringAttr("aten::cumsum.default"), "args": args},
    )
    rejects(unused, "operand 1 is not referenced by args or kwargs")
    assert str(OperandRefAttr(3)) == "#ktir.operand<3>"
    with pytest.raises(VerifyException, match=r"^#ktir.operand index must be non-negative, not -1$"):
        OperandRefAttr(-1)


#### Parsing with the dialect loaded ####


def test_parse_print_round_trip():
    context = Context()
    for dialect in (Builtin, Func, Ktir):
        context.load_dialect(dialect)
    source = (
        "%x = ktir.full -2.500000e-01 : tensor<4x64xf16>\n"
        '%y = ktir.gelu %x {approximate = "tanh"} : tensor<4x64xf16> -> tensor<4x64xf16>\n'
        "%z = ktir.sum %y dims [1] keepdim : tensor<4x64xf16> -> tensor<4x1xf16>"
    )
    module = Parser(context, source).parse_module()
    module.verify()
    printed = str(module)
    for line in source.splitlines():
        assert line in printed


#### Every op: name, docstring, registration ####


def test_op_lists_are_complete_and_distinct():
    names = [cls.name for cls in ALL_OPS]
    assert len(ELEMENTWISE_OPS) == 46
    assert len(STRUCTURED_OPS) == 20
    assert len(DATA_OPS) == 3
    assert len(ROUTING_OPS) == 5
    assert len(COLLECTIVE_OPS) == 2
    assert len(CORE_OPS) == 9
    assert len(set(names)) == len(names) == 85


@pytest.mark.parametrize("op_class", ALL_OPS, ids=lambda cls: cls.name)
def test_every_op_is_named_and_documented(op_class):
    assert op_class.name.startswith("ktir.")
    assert re.fullmatch(r"ktir\.[a-z][a-z0-9_]*", op_class.name)
    assert op_class.__doc__ is not None
    assert op_class.__doc__.strip()


def test_dialect_registers_every_op_and_attribute():
    registered = list(Ktir.operations)
    assert set(registered) == set(ALL_OPS)
    assert len(registered) == len(ALL_OPS)
    attributes = list(Ktir.attributes)
    assert attributes == [*ATTRIBUTES, *PLAN_ATTRIBUTES]
    assert {attr.name for attr in attributes} == {
        "ktir.tiled",
        "ktir.device_dtype",
        "ktir.operand",
        "ktir.tile",
        "ktir.unit",
        "ktir.combine",
        "ktir.chunk_plan",
        "ktir.lx_buffers",
        "ktir.prefetch",
    }
    assert Ktir.name == "ktir"


@pytest.mark.parametrize(
    "lit_files",
    [
        ("elementwise.mlir", "structured.mlir", "data.mlir", "routing.mlir", "collective.mlir", "core.mlir"),
        (
            "elementwise_invalid.mlir",
            "structured_invalid.mlir",
            "data_invalid.mlir",
            "routing_invalid.mlir",
            "collective_invalid.mlir",
            "core_invalid.mlir",
        ),
    ],
    ids=["roundtrip", "invalid"],
)
def test_every_op_has_lit_tests(lit_files):
    text = "\n".join((LIT_DIR / name).read_text() for name in lit_files)
    missing = [cls.name for cls in ALL_OPS if not re.search(rf'"?{re.escape(cls.name)}\b"?[ "(]', text)]
    assert missing == []
