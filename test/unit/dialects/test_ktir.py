"""The #ktir.tiled encoding: construction, conversion to layouts, tensor checks."""

import pytest
from xdsl.dialects.builtin import Float16Type, Float32Type, IntegerType, TensorType
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.ktir.attributes import TiledLayoutAttr, verify_tiled_tensor
from ktir.layout.dtypes import DeviceDType
from ktir.layout.spyre import SpyreTensorLayout


def test_from_layout_and_back():
    stl = SpyreTensorLayout((5, 100, 150), "float16")
    attr = TiledLayoutAttr.from_layout(stl)
    assert str(attr) == ("#ktir.tiled<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>")
    assert attr.layout_for(Float16Type()) == stl
    explicit = TiledLayoutAttr.from_layout(stl, explicit_dtype=True)
    assert explicit.explicit_device_dtype is DeviceDType.SEN169_FP16
    assert explicit != attr


def test_tensor_checks():
    good = TensorType(Float16Type(), [4, 64], TiledLayoutAttr([1, 4, 64], [64, 64, 1]))
    verify_tiled_tensor(good)
    with pytest.raises(VerifyException, match="must hold 32 f32 elements, not 64"):
        verify_tiled_tensor(TensorType(Float32Type(), [4, 64], TiledLayoutAttr([1, 4, 64], [64, 64, 1])))
    with pytest.raises(VerifyException, match="does not fit tensor shape \\[8, 64\\]"):
        verify_tiled_tensor(TensorType(Float16Type(), [8, 64], TiledLayoutAttr([1, 4, 64], [64, 64, 1])))
    int64 = TensorType(IntegerType(64), [10], TiledLayoutAttr([1, 32], [32, 1], DeviceDType.IEEE_INT32))
    verify_tiled_tensor(int64)


def test_attribute_rejects_bad_layouts_on_construction():
    with pytest.raises(VerifyException, match="device_size has 2 dims but stride_map has 1"):
        TiledLayoutAttr([1, 64], [1])
