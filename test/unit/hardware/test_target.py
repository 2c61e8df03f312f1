"""The hardware description."""

import pytest

from ktir.hardware.target import SPYRE, Target


def test_spyre_defaults():
    assert SPYRE.cores == 32
    assert SPYRE.stick_bytes == 128
    assert SPYRE.lx_usable_bytes == 1_677_721


def test_from_toml(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text('name = "half"\ncores = 16\n')
    target = Target.from_toml(path)
    assert (target.name, target.cores, target.stick_bytes) == ("half", 16, 128)
    path.write_text("corez = 1\n")
    with pytest.raises(ValueError, match="unknown target fields: corez"):
        Target.from_toml(path)
