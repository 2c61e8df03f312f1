"""The hardware description."""

import dataclasses
import re
from pathlib import Path

import pytest

from ktir.hardware import cost_model
from ktir.hardware.target import (
    SPYRE,
    SPYRE_DATASHEET,
    Target,
    TargetTypeError,
    load_target,
    resolve_target,
    target_from_fields,
)


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


def test_more_cores_give_the_chip_more_peak_and_keep_each_cores_rate(tmp_path):
    """The PE rate is per core: 64 cores have twice Spyre's fp16 peak, each core Spyre's rate."""
    path = tmp_path / "t.toml"
    path.write_text("cores = 64\n")
    target = Target.from_toml(path)
    assert SPYRE.peak_macs_per_us_per_core == 1.536e6 and SPYRE.fp16_peak_flops == 98.304e12
    assert target.peak_macs_per_us_per_core == 1.536e6
    assert target.fp16_peak_flops == 2 * 98.304e12
    tile = 128 * 512 * 512  # one core's matmul tile takes as long on either chip
    assert target.sustained_macs_per_us_per_core == SPYRE.sustained_macs_per_us_per_core == 1.14e6
    assert cost_model.pt_cycles(tile, 128, target) == cost_model.pt_cycles(tile, 128, SPYRE)
    assert cost_model.pt_cycles(tile, 128, SPYRE) == pytest.approx(tile / 1.14e6 * 1500, rel=1e-12)


def test_the_per_core_rate_is_a_field(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text("peak_macs_per_us_per_core = 3.072e6\n")
    target = load_target(str(path))
    assert target.peak_macs_per_us_per_core == 3.072e6 and target.fp16_peak_flops == 2 * 98.304e12


def test_the_estimating_docs_x2_chip_doubles_what_they_say(tmp_path):
    """
    docs/estimating.md's `x2.toml`: twice the cores, so twice the fp16 peak and the total LX,
    and twice the LPDDR5 bandwidth; each core is one of Spyre's.
    """
    docs = (Path(__file__).parents[3] / "docs" / "estimating.md").read_text()
    text = re.search(r"printf '([^']*)' > x2\.toml", docs)
    assert text is not None
    path = tmp_path / "x2.toml"
    path.write_text(text[1].replace("\\n", "\n"))
    x2 = load_target(str(path))
    assert x2.fp16_peak_flops == 2 * SPYRE.fp16_peak_flops
    assert x2.device_memory_bandwidth == 2 * SPYRE.device_memory_bandwidth
    assert x2.cores * x2.lx_bytes == 2 * SPYRE.cores * SPYRE.lx_bytes
    per_core = ("peak_macs_per_us_per_core", "sfu_pass_elems_per_us", "reduce_elems_per_us", "lx_bytes")
    assert [getattr(x2, name) for name in per_core] == [getattr(SPYRE, name) for name in per_core]


def test_a_chip_peak_from_an_older_file_is_read_as_its_per_core_rate(tmp_path):
    """`fp16_peak_flops` (the field before the per-core rate) still reads, over the file's cores."""
    path = tmp_path / "t.toml"
    path.write_text("cores = 64\nfp16_peak_flops = 98.304e12\n")
    target = load_target(str(path))
    assert target.peak_macs_per_us_per_core == 0.768e6 and target.fp16_peak_flops == 98.304e12
    # A report saved before: the same fields with the chip peak instead of the per-core rate.
    fields = {**dataclasses.asdict(SPYRE), "fp16_peak_flops": 98.304e12}
    del fields["peak_macs_per_us_per_core"]
    assert target_from_fields(fields, "report") == SPYRE


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "fp16_peak_flops = 98.304e12\npeak_macs_per_us_per_core = 1.536e6\n",
            "give peak_macs_per_us_per_core or fp16_peak_flops, not both "
            "(the chip's peak is 2 x peak_macs_per_us_per_core x 1e6 x cores)",
        ),
        ('fp16_peak_flops = "fast"\n', "fp16_peak_flops must be a positive number, not 'fast'"),
        ("fp16_peak_flops = 0\n", "fp16_peak_flops must be a positive number, not 0"),
    ],
)
def test_a_bad_chip_peak_is_refused_with_its_file(tmp_path, text, message):
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}: {re.escape(message)}$"):
        load_target(str(path))
    path.write_text("cores = 0\nfp16_peak_flops = 1e12\n")  # no rate from a bad core count
    bad_cores = f"^target file '{re.escape(str(path))}': cores must be positive, not 0$"
    with pytest.raises(ValueError, match=bad_cores):
        load_target(str(path))


def test_the_pe_rate_per_precision_is_the_isscc_ratio_to_fp16():
    # fp16 98.304e12 (torch-spyre's DL16 peak); fp8 157, int8 315, int4 629 TOPS (ISSCC 2026, via
    # a secondary write-up): the chip peaks follow from the ratios.
    assert SPYRE.pe_rate_ratio("fp16") == 1.0
    assert SPYRE.peak_flops("fp16") == pytest.approx(98.304e12)
    assert SPYRE.peak_flops("fp8") == pytest.approx(157e12)
    assert SPYRE.peak_flops("int8") == pytest.approx(315e12)
    assert SPYRE.peak_flops("int4") == pytest.approx(629e12)
    with pytest.raises(ValueError, match="unknown PE precision 'fp4'"):
        SPYRE.pe_rate_ratio("fp4")


def test_an_fp8_matmul_tile_takes_the_fp16_cycles_over_the_fp8_ratio(tmp_path):
    fp16 = cost_model.pt_cycles(128 * 512 * 512, 128, target=SPYRE)
    fp8 = cost_model.pt_cycles(128 * 512 * 512, 128, precision="fp8", target=SPYRE)
    assert fp16 == pytest.approx(44150.6, abs=0.1)  # 1.14e6 MAC/µs sustained
    assert fp8 == pytest.approx(fp16 * 98.304 / 157)
    path = tmp_path / "fp8x2.toml"
    path.write_text("fp8_pe_rate_ratio = 2.0\n")
    assert cost_model.pt_cycles(1e6, 64, load_target(str(path)), "fp8") == pytest.approx(
        cost_model.pt_cycles(1e6, 64, target=SPYRE) / 2
    )


def test_a_target_may_have_at_most_16_tib_of_device_memory(tmp_path):
    """The dialect's verifiers hold every tensor to `MAX_DEVICE_MEMORY_BYTES`, so no target may have more."""
    largest, larger = tmp_path / "largest.toml", tmp_path / "larger.toml"
    largest.write_text(f"device_memory_bytes = {2**44}\n")
    larger.write_text(f"device_memory_bytes = {2**44 + 1}\n")
    assert load_target(str(largest)).device_memory_bytes == 2**44
    with pytest.raises(ValueError, match=r"device_memory_bytes must be at most 2\*\*44 \(16 TiB\)"):
        load_target(str(larger))
