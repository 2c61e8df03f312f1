"""The hardware description."""

import re

import pytest

from ktir.hardware.target import SPYRE, Target, TargetTypeError, resolve_target


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


def test_resolve_target_takes_a_target_a_path_or_none(tmp_path):
    chip = Target(name="small", cores=16, lx_bytes=1 << 20)
    assert resolve_target(chip) is chip
    assert resolve_target(None) is SPYRE and resolve_target("") is SPYRE
    path = tmp_path / "t.toml"
    path.write_text('name = "half"\ncores = 16\n')
    for given in (path, str(path)):
        assert (resolve_target(given).name, resolve_target(given).cores) == ("half", 16)


def test_resolve_target_refuses_other_types_and_unusable_targets():
    message = "target must be a ktir.hardware.target.Target, a path to a TOML file or None, not int"
    with pytest.raises(TargetTypeError, match=re.escape(message)):
        resolve_target(16)
    with pytest.raises(TargetTypeError, match="not dict"):
        resolve_target({"cores": 16})
    with pytest.raises(ValueError, match="target 'spyre': cores must be positive, not 0"):
        resolve_target(Target(cores=0))
