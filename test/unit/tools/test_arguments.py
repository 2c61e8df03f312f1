"""
The tools' messages: "did you mean" for a misspelled flag, choice, pass or pass option
(`ktir.tools.arguments`), an op's name said once, and the files `ktir-run` wrote.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ktir.tools import ktir_estimate, ktir_import, ktir_opt, ktir_run
from ktir.tools.arguments import did_you_mean

EXP = """func.func @f(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %a = ktir.exp %x : tensor<4x64xf16> -> tensor<4x64xf16>
  return %a : tensor<4x64xf16>
}
"""


@pytest.fixture
def module(tmp_path: Path) -> Path:
    path = tmp_path / "m.mlir"
    path.write_text(EXP)
    return path


def test_did_you_mean_names_the_closest_known_word() -> None:
    assert (
        did_you_mean("ktir-compil", ["cse", "ktir-compile", "ktir-fuse"]) == " (did you mean 'ktir-compile'?)"
    )
    assert did_you_mean("frobnicate", ["cse", "ktir-compile"]) == ""


def exit_code(tool: Any, argv: list[str]) -> int:
    """`tool.main(argv)`, or the code of the `SystemExit` argparse raises (as a console script exits)."""
    try:
        return tool.main(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)


PIPELINE = "builtin.module(cse)"


def m(name: str) -> str:
    """The suggestion of `name`."""
    return f"(did you mean '{name}'?)"


@pytest.mark.parametrize(
    ("tool", "argv", "ending"),
    [
        (ktir_opt, [f"--pass-pipline={PIPELINE}"], f"pipline={PIPELINE} {m('--pass-pipeline')}"),
        (ktir_opt, ["--pass-pipline", PIPELINE], m("--pass-pipeline")),
        (ktir_opt, ["--print-op-generc"], f"arguments: --print-op-generc {m('--print-op-generic')}"),
        (ktir_run, ["--polcy", "cost"], f"unrecognized arguments: --polcy cost {m('--policy')}"),
        (ktir_run, ["--policy", "dataflw"], f"'default', 'cost') {m('dataflow')}"),
        (ktir_estimate, ["--promt", "8"], f"unrecognized arguments: --promt 8 {m('--prompt')}"),
        (ktir_import, ["--weigths", "w.npz"], f"arguments: --weigths w.npz {m('--weights')}"),
    ],
)  # fmt: skip
def test_a_misspelled_flag_or_choice_gets_a_suggestion(
    module: Path, capsys: pytest.CaptureFixture[str], tool: Any, argv: list[str], ending: str
) -> None:
    assert exit_code(tool, [str(module), *argv]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith(f"{tool.__name__.rsplit('.', 1)[1].replace('_', '-')}: error: ")
    assert last.endswith(ending), last


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-p", "ktir-compil"], f"unknown pass 'ktir-compil' {m('ktir-compile')} in 'ktir-compil'"),
        (["-p", "cs,ktir-fus"], f"unknown pass 'cs' {m('cse')}, 'ktir-fus' {m('ktir-fuse')}"),
        (["--pass-pipeline=builtin.module(ktir-compil)"], f"'ktir-compil' {m('ktir-compile')}"),
        (["-p", "ktir-compile{core=4}"], f'"solver", "fuse", "target"] {m("cores")}'),
        (["-p", "cse", "--mlir-print-ir-after=ce"], f"not a pass of the pipeline 'cse' {m('cse')}"),
    ],
)  # fmt: skip
def test_a_misspelled_pass_or_option_gets_a_suggestion(
    module: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert ktir_opt.main([str(module), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ktir-opt: error: ") and message in err and err.count("\n") == 1


def test_an_op_error_names_the_op_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "softmax.mlir"
    path.write_text(EXP.replace("ktir.exp %x", "ktir.softmax %x dim 1"))
    assert ktir_opt.main([str(path), "-p", "ktir-divide-work"]) == 1
    first = capsys.readouterr().err.splitlines()[0]
    message = "'ktir.softmax' op has a tensor without a layout; run ktir-propagate-layouts first"
    assert first == f"{path}:2:8: error: {message}"


def test_ktir_run_says_which_files_it_wrote(
    module: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace, report, out = (str(tmp_path / name) for name in ("trace.json", "report.json", "out.npz"))
    assert ktir_run.main([str(module), "--trace", trace, "--json", report, "-o", out]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"wrote {out}", f"wrote {trace}", f"wrote {report}"]
    assert "wrote" not in captured.out
    assert ktir_run.main([str(module), "--trace", trace, "-q"]) == 0
    assert capsys.readouterr().err == ""
