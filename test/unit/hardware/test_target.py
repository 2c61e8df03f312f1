"""The hardware description."""

import dataclasses

import pytest

from ktir.hardware.target import SPYRE, SPYRE_DATASHEET, Target, load_target


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


def test_named_targets_spyre_is_the_card_and_spyre_datasheet_the_datasheet():
    """
    `spyre` (the default) moves LPDDR5 bytes at the card's sustained 150 GB/s; `spyre-datasheet`
    keeps the datasheet's 204.8 GB/s. Both keep the datasheet figure as the roofline's rate.
    """
    assert load_target("spyre") is SPYRE is load_target("")
    datasheet = load_target("spyre-datasheet")
    assert datasheet is SPYRE_DATASHEET and datasheet.name == "spyre-datasheet"
    assert SPYRE.sustained_memory_bandwidth == 150e9 and SPYRE.sustained_bytes_per_cycle == 100.0
    assert datasheet.sustained_memory_bandwidth == datasheet.device_memory_bandwidth == 204.8e9
    assert SPYRE.device_memory_bandwidth == 204.8e9
    assert dataclasses.replace(datasheet, name="spyre") != SPYRE  # the two differ beyond their names


def test_a_target_file_with_the_datasheet_fields_is_the_datasheet_target(tmp_path):
    """
    A TOML file holding the datasheet target's fields (its mechanisms off: the turnaround and a
    row reduction's extra rate at 0, which is allowed there, not below) loads as that target.
    """
    path = tmp_path / "t.toml"
    lines = [
        f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"' for k, v in vars(SPYRE_DATASHEET).items()
    ]
    path.write_text("\n".join(lines) + "\n")
    assert load_target(str(path)) == SPYRE_DATASHEET
    bad = tmp_path / "bad.toml"
    bad.write_text("rw_turnaround_ns_per_byte = -0.001\n")
    with pytest.raises(ValueError, match=r"rw_turnaround_ns_per_byte must not be negative, not -0\.001"):
        load_target(str(bad))
