"""
One regression per class of failure the fuzzing campaign found (tools/fuzz.py): each now exits
1 with a located error (2 for a bad option), on one line where it is not about the input text,
never an "internal error", a traceback or a hang; and nothing is written on failure. The exact
messages are also checked by test/lit/ktir-opt/fuzz_regressions.mlir and ktir-run/.
"""

import math
import re
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f16, f32, i1, i8, i32

import ktir
from ktir.cores.factors import divisors, prime_factors
from ktir.cores.work_division import check_device_memory
from ktir.ir.diagnostics import MAX_NESTING, DiagnosticError, check_nesting, decode_source
from ktir.pipeline import PipelineError
from ktir.tools import ktir_opt, ktir_run, sim_run

LOCATED = re.compile(r"^\S+:\d+:\d+: error: ", re.MULTILINE)
ABS = """func.func @abs(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %y = ktir.abs %x : tensor<4x64xf16> -> tensor<4x64xf16>
  return %y : tensor<4x64xf16>
}
"""
L = "#ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>"
KERNEL = (
    f"func.func @k(%x: tensor<4x64xf16, {L}>) -> tensor<4x64xf16, {L}> {{\n"
    '  %y = ktir.kernel "ktir.abs" cores 2 chunks 1 work_division {d0 = 2 : i64, d1 = 1 : i64} tiles '
    "[#ktir.tile<extent = [1, 2, 64], starts = [[0, 0, 0], [0, START, 0]], chunk_starts = [[0, 0, 0]]>, "
    "#ktir.tile<extent = [1, 2, 64], starts = [[0, 0, 0], [0, 2, 0]], chunk_starts = [[0, 0, 0]]>]"
    f"(%x) : (tensor<4x64xf16, {L}>) -> tensor<4x64xf16, {L}> {{\n"
    f"  ^bb0(%in: tensor<4x64xf16, {L}>, %out: tensor<4x64xf16, {L}>):\n"
    "    ktir.yield\n  }\n"
    f"  EXTRA  return %RESULT : tensor<4x64xf16, {L}>\n}}\n"
)


def kernel(start: int = 2, extra: str = "") -> str:
    result = "z" if extra else "y"
    return KERNEL.replace("START", str(start)).replace("EXTRA", extra).replace("RESULT", result)


def write(tmp_path: Path, text: str | bytes, name: str = "in.mlir") -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


def opt(tmp_path: Path, capsys, text: str | bytes, *args: str) -> tuple[int, str]:
    code = ktir_opt.main([write(tmp_path, text), *args])
    return code, capsys.readouterr().err


def run(tmp_path: Path, capsys, text: str | bytes, *args: str) -> tuple[int, str]:
    code = ktir_run.main([write(tmp_path, text), *args])
    return code, capsys.readouterr().err


def assert_located(err: str, message: str, position: str | None = None) -> None:
    assert "internal error" not in err and "Traceback" not in err
    first = err.splitlines()[0]
    assert LOCATED.match(first), err
    assert message in first, err
    if position is not None:
        assert f"in.mlir:{position}: error: " in first, err


# ---- input that is not UTF-8 ------------------------------------------------------------------


@pytest.mark.parametrize("tool", [opt, run])
def test_not_utf8_names_file_line_and_byte_offset(tmp_path, capsys, tool):
    code, err = tool(tmp_path, capsys, ABS.encode() + b"// caf\xc3\xa9 \xff\n")
    assert code == 1
    offset = len(ABS.encode()) + 9  # the é before it is two bytes, one column
    message = f"the input is not valid UTF-8: byte 0xff at byte offset {offset} (invalid start byte)"
    assert_located(err, message, "5:9")
    assert err.splitlines()[1:] == ["// café \ufffd", "        ^"]


@pytest.mark.parametrize("tool", [opt, run])
def test_a_control_character_as_the_first_token_is_located_and_shown_escaped(tmp_path, capsys, tool):
    """The lexer reads the first token when the parser is made: it failed outside the error handling."""
    code, err = tool(tmp_path, capsys, "// a comment\n\n\x0e" + ABS)
    assert code == 1
    assert_located(err, "Unexpected character: \\x0e", "3:1")


@pytest.mark.parametrize(("name", "batch"), [("linalg.matmul", ""), ("linalg.batch_matmul", "2x")])
def test_a_named_linalg_op_without_outs_is_located(tmp_path, capsys, name, batch):
    text = (
        f"func.func @f(%p: tensor<{batch}8x16xf32>, %q: tensor<{batch}16x4xf32>) {{\n"
        f"  %b = {name} ins(%p, %q : tensor<{batch}8x16xf32>, tensor<{batch}16x4xf32>)"
        f" -> tensor<{batch}8x4xf32>\n"
        "  return\n}\n"
    )
    code, err = opt(tmp_path, capsys, text)
    assert code == 1
    assert_located(err, f"'{name}' has operands that do not fit its form", "2:8")


@pytest.mark.parametrize("tool", [opt, run])
@pytest.mark.parametrize(
    "line",
    [
        "%r = linalg.fill ins(%n : index) outs(%e : tensor<4xf32>) -> tensor<4xf32>",
        "%r = linalg.add ins(%i, %i : tensor<4xindex>, tensor<4xindex>) outs(%i : tensor<4xindex>)"
        " -> tensor<4xindex>",
    ],
)
def test_a_named_linalg_op_on_index_elements_is_located(tmp_path, capsys, tool, line):
    """xDSL asserted building the body (fuzzing a ktdp kernel made a fill's scalar an index)."""
    text = (
        "func.func @f(%n: index, %i: tensor<4xindex>) {\n"
        "  %e = tensor.empty() : tensor<4xf32>\n"
        f"  {line}\n"
        "  return\n}\n"
    )
    code, err = tool(tmp_path, capsys, text)
    assert code == 1
    name = line.split()[2]
    assert_located(err, f"'{name}' builds its body from float or integer elements only", "3:8")


def test_decode_source_locates_the_first_bad_byte():
    with pytest.raises(DiagnosticError) as info:
        decode_source(b"ok\n\xe2\x82", "f.mlir")
    [diagnostic] = info.value.diagnostics
    assert (diagnostic.location.line, diagnostic.location.column) == (2, 1)
    assert "byte 0xe2 0x82 at byte offset 3 (unexpected end of data)" in diagnostic.message


# ---- integers out of range of i64 ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message", "position"),
    [
        (
            ABS.replace("4x64", "18446744073709551616x64"),
            "dimension 18446744073709551616 is out of range of i64",
            "1:20",
        ),
        (
            ABS.replace("4x64", "9223372036854775808x64"),
            "dimension 9223372036854775808 is out of range",
            "1:20",
        ),
        (
            ABS.replace(
                "ktir.abs %x :", "ktir.rms_norm %x normalized_shape [9223372036854775808] {eps = 0.0 : f64} :"
            ),
            "integer 9223372036854775808 is out of range of i64",
            "2:43",
        ),
        (
            ABS.replace("ktir.abs %x :", "ktir.slice %x dim 0 start 0 end 4 step 18446744073709551616 :"),
            "Integer value 18446744073709551616 is out of range for type i64",
            "2:47",
        ),
        (kernel(start=-9223372036854775809), "integer -9223372036854775809 is out of range of i64", None),
    ],
)
def test_integers_out_of_range_are_located(tmp_path, capsys, text, message, position):
    code, err = opt(tmp_path, capsys, text)
    assert code == 1
    assert_located(err, message, position)


# ---- verifier checks that used to fail later ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            ABS.replace(
                "(%x: tensor<4x64xf16>)",
                "(%x: tensor<4x64xf16> {ktir.layout = #ktir.tiled<device_size = [4, 1], "
                "stride_map = [64, 1]>})",
            ),
            "'func.func' op argument 0: the ktir.layout pin does not fit tensor<4x64xf16>: "
            "the last device dim is the stick",
        ),
        (
            ABS.replace("4x64", "2x2x2x2x2x2x2"),
            "'func.func' op argument 0 has rank 7; Spyre layouts hold tensors of rank at most 6",
        ),
        (
            kernel(start=3),
            "'ktir.kernel' op tile 0 leaves its tensor on core 1, chunk 0: box [0, 3, 0] + [1, 2, 64] "
            "does not fit the device size [1, 4, 64]",
        ),
        (
            kernel(extra=f"%z = ktir.abs %y : tensor<4x64xf16, {L}> -> tensor<4x64xf16, {L}>\n"),
            "'ktir.abs' op is a graph-level op in a function of ktir.kernel ops",
        ),
        (
            ABS.replace("  return %y", "  return %y : tensor<4x64xf16>\n^bb1:\n  return %y"),
            "'func.func' op has 2 blocks",
        ),
        (
            ABS.replace("%y = ktir.abs %x", "%y = ktir.abs %w").replace(
                "  return", "  %w = ktir.abs %x : tensor<4x64xf16> -> tensor<4x64xf16>\n  return"
            ),
            "'ktir.abs' op operand #0 does not dominate this use",
        ),
        (
            ABS.replace("4x64", "99999999999999x3"),
            "holds 545.7 TiB, more than the 16 TiB of device memory a target may have",
        ),
    ],
)
@pytest.mark.parametrize("tool", [opt, run])
def test_verifier_rejects_with_a_location(tmp_path, capsys, tool, text, message):
    code, err = tool(tmp_path, capsys, text)
    assert code == 1
    assert_located(err, message)


def test_the_kernel_fixture_is_valid_with_tiles_inside(tmp_path, capsys):
    assert opt(tmp_path, capsys, kernel())[0] == 0


@pytest.mark.parametrize(
    ("tile", "rows", "message"),
    [
        (1, 2, ""),
        (2, 2, "'ktir.dma_load' op tile 2 is not one of the kernel's 2 tiles"),
        (
            0,
            1,
            "'ktir.dma_load' op the target memref<1x1x1x64xf16, \"lx\"> must hold slots of tile 0's extent",
        ),
    ],
)
def test_dma_tiles_and_buffers_match_the_kernel(tmp_path, capsys, tile, rows, message):
    buffer = f'memref<1x1x{rows}x64xf16, "lx">'
    body = (
        "    %core = ktir.core_id : index\n    %zero = arith.constant 0 : index\n"
        f"    %b = ktir.lx_alloc address 0 : {buffer}\n"
        f"    ktir.dma_load %in -> %b[%core, %zero, %zero] tile {tile} : tensor<4x64xf16, {L}> -> {buffer}\n"
    )
    code, err = run(tmp_path, capsys, kernel().replace("    ktir.yield", body + "    ktir.yield"))
    if not message:  # valid IR (the load is of no use, but the kernel runs)
        assert (code, err) == (0, "")
        return
    assert code == 1
    assert_located(err, message, "7:5")


# ---- huge dims: milliseconds, or a refusal ------------------------------------------------------


def test_divisors_come_from_the_factorization():
    assert all(divisors(n) == [d for d in range(1, n + 1) if n % d == 0] for n in range(1, 2000))
    start = time.monotonic()
    assert divisors(1_073_741_789) == [1, 1_073_741_789]  # prime: counting to it took a minute
    assert len(divisors(99_999_999_999)) == 12
    assert prime_factors(2**64) == {2: 64}
    assert prime_factors((2**31 - 1) * (2**61 - 1)) == {2**31 - 1: 1, 2**61 - 1: 1}
    assert time.monotonic() - start < 1


def test_a_prime_row_count_divides_at_once(tmp_path, capsys):
    text = ABS.replace("4x64", "1073741789x64")
    start = time.monotonic()
    code = ktir_opt.main([write(tmp_path, text), "-p", "ktir-propagate-layouts,ktir-divide-work"])
    assert code == 0 and "ktir.work_division = {d0 = 1 : i64, d1 = 1 : i64}" in capsys.readouterr().out
    assert time.monotonic() - start < 10


def test_a_tensor_padded_past_device_memory_is_refused(tmp_path, capsys):
    code, err = opt(tmp_path, capsys, ABS.replace("4x64", "34359738368x1"), "-p", "ktir-compile")
    assert code == 1
    assert_located(
        err, "a tensor of shape [34359738368, 1] takes 4,096.0 GiB of device memory, more than the 128.0 GiB"
    )


def test_check_device_memory_names_the_tensor():
    from ktir.cores.tiling import Access
    from ktir.layout.spyre import SpyreTensorLayout

    small = Access(SpyreTensorLayout((4, 64), "float16"), (4, 64), ("d0", "d1"))
    check_device_memory([small], ktir.hardware.target.SPYRE)
    column = Access(SpyreTensorLayout((2**30, 1), "float16"), (2**30, 1), ("d0", None))
    with pytest.raises(ValueError, match=r"shape \[1073741824, 1\] takes 128.0 GiB"):
        check_device_memory([column, column], ktir.hardware.target.Target(device_memory_bytes=2**30))


# ---- ktir-run inputs ------------------------------------------------------------------------------


def test_non_tensor_argument_is_located(tmp_path, capsys):
    text = ABS.replace("(%x: tensor<4x64xf16>)", "(%n: i32, %x: tensor<4x64xf16>)")
    code, err = run(tmp_path, capsys, text)
    assert code == 1
    assert_located(
        err, "'func.func' op ktir-run cannot pass argument 0 (%n): its type i32 is not a tensor", "1:1"
    )


def test_inputs_larger_than_the_host_are_refused_before_allocating(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sim_run, "available_memory", lambda: 1024**2)
    code, err = run(tmp_path, capsys, ABS.replace("4x64", "1024x1024"))
    assert code == 1
    assert err.startswith("ktir-run: error: the inputs need 0.0 GiB of memory") and len(err.splitlines()) == 1
    assert "more than the 0.0 GiB available on this host" in err


def test_memory_error_while_simulating_is_one_line(tmp_path, capsys, monkeypatch):
    def out_of_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate 47.7 GiB")

    monkeypatch.setattr(sim_run, "simulate", out_of_memory)
    code, err = run(tmp_path, capsys, ABS)
    assert (code, err) == (1, "ktir-run: error: out of host memory (Unable to allocate 47.7 GiB)\n")


@pytest.mark.parametrize(
    ("element", "dtype"),
    [(f16, np.float16), (f32, np.float32), (i32, np.int32), (i8, np.int8), (i1, np.bool_)],
)
def test_random_inputs_are_made_in_their_own_dtype(element, dtype):
    shape = (512, 512)
    tracemalloc.start()
    try:
        array = sim_run.random_input(TensorType(element, shape), np.random.default_rng(0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert array.dtype == dtype and array.shape == shape
    # float64 first (8 bytes an element) is gone: f16 goes by way of f32, the others are direct.
    assert peak <= math.prod(shape) * (np.dtype(dtype).itemsize + (4 if dtype == np.float16 else 0)) + 65536


# ---- nesting ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda n: '"test.op"() ({\n' * n + '"test.op"() : () -> ()\n' + "}) : () -> ()\n" * n,
        lambda n: '"test.op"() {a = ' + "[" * n + "1" + "]" * n + "} : () -> ()\n",
        lambda n: '"test.op"() : () -> ' + "tuple<" * n + "f16" + ">" * n + "\n",
    ],
)
@pytest.mark.parametrize("tool", [opt, run])
def test_deep_nesting_is_a_located_error(tmp_path, capsys, tool, make):
    code, err = tool(tmp_path, capsys, make(600))
    assert code == 1
    assert_located(err, f"nesting deeper than {MAX_NESTING} levels")


def test_nesting_up_to_the_limit_is_accepted(tmp_path, capsys):
    check_nesting("[" * MAX_NESTING + "]" * MAX_NESTING)
    with pytest.raises(DiagnosticError):
        check_nesting("[" * (MAX_NESTING + 1))
    check_nesting('"((((" // [[[[\n' + "(" * MAX_NESTING + " -> >= <= ")  # strings, comments, arrows
    # The deepest nesting accepted still parses, verifies, prints and compiles.
    depth = (MAX_NESTING - 2) // 2
    end = '"test.termop"() : () -> ()\n'
    text = '"test.op"() ({\n' * depth + end + ("}) : () -> ()\n" + end) * depth
    for args in ([], ["--print-op-generic"], ["-p", "ktir-compile"]):
        code, err = opt(tmp_path, capsys, text, *args)
        assert code == 0, err


# ---- usage errors in options ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ("ktir-compile{cores=0}", "cores must be in 1..32, not 0"),
        ("ktir-compile{cores=33}", "cores must be in 1..32, not 33"),
        ("ktir-compile{policy=bogus}", "unknown policy 'bogus'"),
        ("ktir-compile{solver=bogus}", "unknown solver 'bogus'"),
    ],
)
def test_bad_pass_option_is_a_one_line_usage_error(tmp_path, capsys, pipeline, message):
    code, err = opt(tmp_path, capsys, ABS, "-p", pipeline)
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("ktir-opt: error: invalid pass pipeline")
    assert message in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cores", "0"], "argument --cores: must be in 1..32, not 0"),
        (["--cores", "64"], "argument --cores: must be in 1..32, not 64"),
        (["--top", "-1"], "argument --top: must be 0 (all) or positive, not -1"),
        (["--seed", "-1"], "argument --seed: must be non-negative, not -1"),
    ],
)
def test_bad_ktir_run_option_is_a_one_line_usage_error(tmp_path, capsys, args, message):
    code, err = run(tmp_path, capsys, ABS, *args)
    assert (code, err) == (2, f"ktir-run: error: {message}\n")


# ---- nothing written on failure -------------------------------------------------------------------------


def test_verify_diagnostics_mismatch_leaves_output_alone(tmp_path, capsys):
    out = tmp_path / "out.mlir"
    out.write_text("previous")
    mismatch = "// expected-error @+1 {{never reported}}\n" + ABS
    code, _ = opt(
        tmp_path,
        capsys,
        mismatch + "// -----\n" + ABS,
        "--split-input-file",
        "--verify-diagnostics",
        "-o",
        str(out),
    )
    assert code == 1 and out.read_text() == "previous"
    code, _ = opt(tmp_path, capsys, ABS, "--verify-diagnostics", "-o", str(out))
    assert code == 0 and "ktir.abs" in out.read_text()


def test_unwritable_output_fails_before_any_work(tmp_path, capsys):
    code, err = opt(tmp_path, capsys, ABS, "-o", str(tmp_path / "missing" / "out.mlir"))
    missing = tmp_path / "missing"
    assert code == 1
    assert err == f"ktir-opt: error: cannot write '{missing}/out.mlir': no such directory '{missing}'\n"
    code, err = opt(tmp_path, capsys, ABS, "-o", str(tmp_path))
    assert code == 1 and "it is a directory" in err


def test_ktir_run_writes_no_output_when_another_cannot_be_written(tmp_path, capsys):
    npz = tmp_path / "o.npz"
    code, err = run(tmp_path, capsys, ABS, "--cores", "2", "-o", str(npz), "--png", "/bad/path.png")
    assert code == 1 and err == "ktir-run: error: cannot write '/bad/path.png': no such directory '/bad'\n"
    assert not npz.exists()


def test_ktir_run_writes_all_outputs_or_none(tmp_path, capsys, monkeypatch):
    def broken_png(report, path):
        raise ImportError("a PNG timeline needs matplotlib: pip install 'ktir[plot]'")

    monkeypatch.setattr(sim_run, "write_png", broken_png)
    npz, trace = tmp_path / "o.npz", tmp_path / "t.json"
    args = ["--cores", "2", "-o", str(npz), "--trace", str(trace), "--png", str(tmp_path / "t.png")]
    code, err = run(tmp_path, capsys, ABS, *args)
    assert code == 1 and "needs matplotlib" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.mlir"]  # no output, no temporary file
    monkeypatch.undo()
    code = ktir_run.main(
        [str(tmp_path / "in.mlir"), "--cores", "2", "-o", str(tmp_path / "o"), "--trace", str(trace)]
    )
    assert code == 0 and np.load(tmp_path / "o.npz")["out0"].shape == (4, 64) and trace.exists()


# ---- the Python API and the last resort ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "hint"), [(ABS, "parse MLIR text first"), (None, "not NoneType"), (42, "not int")]
)
def test_run_pipeline_on_something_else_than_a_module(value, hint):
    with pytest.raises(PipelineError, match=r"run_pipeline needs a builtin\.module") as info:
        ktir.run_pipeline(value, "cse")
    assert hint in str(info.value)


def test_the_catch_all_stays_as_a_last_resort(tmp_path, capsys, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(sim_run, "simulate", broken)
    code, err = run(tmp_path, capsys, ABS)
    assert (code, err) == (1, "ktir-run: internal error: RuntimeError: a bug (set KTIR_DEBUG=1)\n")


def test_a_tensor_larger_than_the_targets_memory_is_valid_ir_that_its_compile_refuses(
    tmp_path: Path, capsys
) -> None:
    """
    The verifiers know no target: a 256 GiB tensor (twice Spyre's device memory) is valid IR;
    `ktir-compile` refuses it for Spyre with Spyre's memory, and a target with 1 TiB divides it
    (planning only: nothing is allocated).
    """
    big = "tensor<2147483648x64xf16>"
    source = f"func.func @big(%x: {big}) -> {big} {{\n  %y = ktir.abs %x : {big} -> {big}\n"
    source += f"  return %y : {big}\n}}\n"
    assert opt(tmp_path, capsys, source, "-o", str(tmp_path / "out.mlir")) == (0, "")
    code, err = opt(tmp_path, capsys, source, "-p", "ktir-compile")
    assert code == 1
    assert_located(err, "takes 256.0 GiB of device memory, more than the 128.0 GiB of spyre")
    target = tmp_path / "big.toml"
    target.write_text(f'name = "big"\ndevice_memory_bytes = {2**40}\n')
    out = tmp_path / "divided.mlir"
    pipeline = "ktir-propagate-layouts,ktir-divide-work"
    assert opt(tmp_path, capsys, source, "-p", pipeline, "--target", str(target), "-o", str(out)) == (0, "")
    assert "ktir.work_division" in out.read_text()
