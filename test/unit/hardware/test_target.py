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


def test_a_target_file_may_start_from_the_datasheet_rates(tmp_path):
    """
    A TOML file that sets the sustained rate to the datasheet's and turns the read/write
    turnaround off (0 is allowed there, not below) is the datasheet target.
    """
    path = tmp_path / "t.toml"
    path.write_text(
        'name = "spyre-datasheet"\nsustained_memory_bandwidth = 204.8e9\nrw_turnaround_ns_per_byte = 0\n'
    )
    assert load_target(str(path)) == SPYRE_DATASHEET
    bad = tmp_path / "bad.toml"
    bad.write_text("rw_turnaround_ns_per_byte = -0.001\n")
    with pytest.raises(ValueError, match=r"rw_turnaround_ns_per_byte must not be negative, not -0\.001"):
        load_target(str(bad))
