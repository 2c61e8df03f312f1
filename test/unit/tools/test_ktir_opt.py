"""ktir-opt as a user runs it: exit codes, output file handling, stdin, no tracebacks."""

import subprocess
import sys
from pathlib import Path

import pytest

from ktir.tools.ktir_opt import main

GOOD = """func.func @f(%a: tensor<64xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>) {
  func.return
}
"""
BAD = """func.func @f(%a: tensor<64xf16, #ktir.tiled<device_size = [1, 32], stride_map = [64, 1]>>) {
  func.return
}
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_success_writes_output_file(tmp_path, capsys):
    out = tmp_path / "out.mlir"
    assert main([write(tmp_path, "good.mlir", GOOD), "-o", str(out)]) == 0
    assert "#ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>" in out.read_text()


def test_verify_error_exits_1_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "out.mlir"
    assert main([write(tmp_path, "bad.mlir", BAD), "-o", str(out)]) == 1
    assert not out.exists()
    err = capsys.readouterr().err
    assert "bad.mlir:1:18: error: the last device dim is the stick" in err
    assert "Traceback" not in err


def test_failure_in_one_chunk_writes_nothing(tmp_path):
    out = tmp_path / "out.mlir"
    source = write(tmp_path, "mixed.mlir", GOOD + "// -----\n" + BAD)
    assert main([source, "--split-input-file", "-o", str(out)]) == 1
    assert not out.exists()


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ("nope", "unknown pass 'nope'"),
        ("cse{x=1}", "Provided arguments"),
        ("cse{", "invalid pass pipeline"),
    ],
)
def test_bad_pipeline_exits_2_with_one_line(tmp_path, capsys, pipeline, message):
    assert main([write(tmp_path, "good.mlir", GOOD), "-p", pipeline]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert message in err and "available passes: " in err


def test_missing_file_is_one_line(tmp_path, capsys):
    assert main([str(tmp_path / "missing.mlir")]) == 1
    assert "No such file or directory" in capsys.readouterr().err


def test_console_script_reads_stdin_and_has_no_traceback():
    result = subprocess.run(
        [sys.executable, "-m", "ktir.tools.ktir_opt", "-"],
        input="func.func @f( {\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("<stdin>:1:15: error:")
    assert "Traceback" not in result.stderr


def test_verify_diagnostics_mismatch_exits_1(tmp_path, capsys):
    text = "// expected-error @+1 {{not this message}}\n" + BAD
    assert main([write(tmp_path, "bad.mlir", text), "--verify-diagnostics"]) == 1
    err = capsys.readouterr().err
    assert 'expected error "not this message" was not produced' in err
    assert "unexpected error: the last device dim is the stick" in err
    good = "// expected-error @+2 {{must hold 64 f16 elements, not 32}}\n" + BAD.replace(
        "func.func", "\nfunc.func", 1
    )
    assert main([write(tmp_path, "ok.mlir", good), "--verify-diagnostics"]) == 0


def test_verify_roundtrip_prints_the_same_output(tmp_path, capsys):
    source = write(tmp_path, "good.mlir", GOOD)
    assert main([source]) == 0
    plain = capsys.readouterr().out
    assert main([source, "--verify-roundtrip"]) == 0
    assert capsys.readouterr().out == plain


def test_verify_roundtrip_names_the_first_line_printed_differently(tmp_path, capsys, monkeypatch):
    # A printer that is not idempotent (here: a comment that grows on every print) fails the check.
    from ktir.tools import ktir_opt

    printed = ktir_opt.KtirOptMain.output_resulting_program
    calls = iter(range(1, 100))

    def growing(self, module):
        return printed(self, module) + f"// print {next(calls)}\n"

    monkeypatch.setattr(ktir_opt.KtirOptMain, "output_resulting_program", growing)
    out = tmp_path / "out.mlir"
    assert main([write(tmp_path, "good.mlir", GOOD), "--verify-roundtrip", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "<printed " in err and "good.mlir>:7:1: error: the printed IR does not round-trip" in err
    assert not out.exists()
