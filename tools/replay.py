"""
Process replay: record what the compiler produces, so a refactor can prove it changed nothing.

```sh
.venv/bin/python tools/replay.py record build/replay-before   # before the refactor
.venv/bin/python tools/replay.py check build/replay-before    # after: exit 1 on any difference
.venv/bin/python tools/replay.py check --against main         # both in one command
```

`check --against REV` records the baseline from the git revision REV itself: it checks REV out in
a temporary worktree and runs that revision's own `tools/replay.py record` with a
`sitecustomize.py` on `PYTHONPATH` that makes every Python process (the recording and the
console scripts its lit commands start) import REV's `ktir`, `ktir.passes`, `ktir.dialects`
and `ktir.tools`, then checks the working tree against it. The baseline goes to DIRECTORY when one
is given, else to a temporary directory removed afterwards.

What is recorded, one text file per item under the directory:

- `lit/<test>.<n>.txt`: for every RUN line of every lit test, the output of the command that
  feeds FileCheck (everything before the first `| filecheck`, or the whole line), with its exit
  code, stdout and stderr (a file's RUN lines run in order in one directory, as lit's `%t` is
  one path per file); temporary paths are replaced by `%t`, and the wall times of pass
  timing reports (`--mlir-timing`) by `%time`.
- `zoo/<model>.mlir`: the core-level IR `ktir.compile` produces for each model of the zoo
  (MLP, decoder block, HF Llama, Phi-3, BERT, and the `make demo` Llama);
- `zoo/<model>.sim.txt`: the simulated total and per-kernel cycles and a SHA-256 of every output.

Everything is deterministic, so `check` compares byte for byte and lists every file that differs.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import itertools
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LIT = ROOT / "test" / "lit"
RUN_LINE = re.compile(r"//\s*RUN:\s*(?P<command>.*)$", re.MULTILINE)


def lit_commands(path: Path) -> list[str]:
    """The RUN commands of one lit file, with lit's substitutions, cut before FileCheck."""
    text = path.read_text()
    commands = []
    for match in RUN_LINE.finditer(text):
        command = match["command"].strip()
        command = command.replace(
            "KTIR_GENERIC_ROUNDTRIP", "ktir-opt %s --split-input-file --print-op-generic"
        )
        command = command.replace("KTIR_ROUNDTRIP", "ktir-opt %s --split-input-file")
        command = re.split(r"\|\s*filecheck|&&\s*filecheck", command)[0].strip()
        command = command.removeprefix("not ").strip()
        command = command.replace("%inputs", str(LIT / "Inputs")).replace("%python", sys.executable)
        commands.append(command.replace("%s", shlex.quote(str(path))))
    return commands


def run_command(command: str, scratch: str) -> str:
    """
    Run one command in `scratch`, the directory its lit file's commands share (as lit's `%t`
    is one path per file: a RUN line may read what an earlier one wrote); its exit code, stdout
    and stderr as text.
    """
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "MPLBACKEND": "Agg"}
    temp = os.path.join(scratch, "t")
    result = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command.replace("%t", temp)],
        cwd=scratch,
        env=env,
        capture_output=True,
        encoding="utf-8",
        errors="replace",
        timeout=600,
    )
    outputs = [result.stdout, result.stderr]
    if os.path.isfile(temp):
        outputs.append(Path(temp).read_text(errors="replace"))
    text = f"$ {command}\nexit {result.returncode}\n--- stdout\n{outputs[0]}--- stderr\n{outputs[1]}"
    if len(outputs) > 2:
        text += f"--- %t\n{outputs[2]}"
    # The interpreter's environment is named first: a baseline recorded from another revision's
    # tree (`--against`) runs this checkout's venv, which lies outside that tree's root, while
    # here it lies inside it and would otherwise be spelled `%root/.venv`.
    text = text.replace(sys.prefix, "%venv")
    return normalized(text.replace(scratch, "%scratch").replace(str(ROOT), "%root"))


WALL_TIME = re.compile(r"\d+\.\d+(?= \(\s*\d+\.\d%\))|\(\s*\d+\.\d%\)|(?<=Total Execution Time: )\d+\.\d+")
"""A wall time in a pass timing report (`--mlir-timing`, `--time-passes`): `0.0031 ( 31.4%)`."""


def normalized(text: str) -> str:
    """
    A recording as compared: the venv named `%venv` (a recording made by an older replay.py
    may name it by its path), and the wall times of timing reports masked as `%time`, since
    they differ from run to run while the report's passes and nesting do not.
    """
    return WALL_TIME.sub("%time", text.replace(sys.prefix, "%venv"))


def lit_items() -> Iterator[tuple[str, Callable[[], str]]]:
    """
    (relative file name, producer) for every RUN line of the lit suite. The RUN lines of one
    file run in order in one temporary directory, removed after the file's last line.
    """
    for path in sorted(LIT.rglob("*.mlir")):
        if {"Inputs", "Output"} & set(path.relative_to(LIT).parts):
            continue
        name = str(path.relative_to(LIT)).replace("/", "__")
        with tempfile.TemporaryDirectory() as scratch:
            for index, command in enumerate(lit_commands(path)):
                yield f"lit/{name}.{index}.txt", functools.partial(run_command, command, scratch)


def zoo_models() -> dict[str, Callable[[], tuple[Any, tuple, dict]]]:
    """The model zoo: name -> factory of (fp16 model, example args, example kwargs)."""
    sys.path.insert(0, str(ROOT / "test" / "unit"))
    sys.path.insert(0, str(ROOT / "examples"))
    import test_compile_models as models  # pyright: ignore[reportMissingImports]  # the zoo the end-to-end tests use, on sys.path from here

    def demo() -> tuple[Any, tuple, dict]:
        import torch
        import transformers
        from model_zoo import tiny_llama_config  # pyright: ignore[reportMissingImports]  # examples/, on sys.path from here

        torch.manual_seed(0)
        config = tiny_llama_config()
        model = transformers.LlamaForCausalLM(config).half().eval()
        ids = torch.randint(0, config.vocab_size, (1, 32), generator=torch.Generator().manual_seed(0))
        return model, (ids,), {"use_cache": False}

    zoo = {name: _first_three(factory) for name, factory in models.MODELS.items()}
    zoo["demo_llama"] = demo
    return zoo


def _first_three(factory: Callable[[], tuple]) -> Callable[[], tuple[Any, tuple, dict]]:
    def model() -> tuple[Any, tuple, dict]:
        model16, _, args, kwargs = factory()
        return model16, args, kwargs

    return model


def zoo_items() -> Iterator[tuple[str, Callable[[], str]]]:
    """(file name, producer) for the IR and the simulation of every zoo model."""
    for name, factory in zoo_models().items():
        cache: dict[str, Any] = {}

        def program(factory: Callable[[], tuple] = factory, cache: dict[str, Any] = cache) -> Any:
            if "program" not in cache:
                import ktir

                model, args, kwargs = factory()
                cache["program"] = ktir.compile(model, args, kwargs)
                cache["args"] = args
            return cache

        yield f"zoo/{name}.mlir", lambda program=program: str(program()["program"].module) + "\n"
        yield f"zoo/{name}.sim.txt", lambda program=program: _simulation(program())


def _simulation(compiled: dict[str, Any]) -> str:
    import ktir.sim

    prog = compiled["program"]
    result = ktir.sim.simulate(prog.module, prog.imported.arguments(*compiled["args"]), target=prog.target)
    lines = [f"total_cycles {result.report.total_cycles}"]
    lines += [f"kernel {k.name} {k.op} cycles {k.cycles}" for k in result.report.kernels]
    for index, output in enumerate(result.outputs):
        digest = hashlib.sha256(output.tobytes()).hexdigest()
        lines.append(f"output {index} {output.dtype} {list(output.shape)} sha256 {digest}")
    return "\n".join(lines) + "\n"


def items(only: str | None) -> Iterator[tuple[str, Callable[[], str]]]:
    """Every recorded item, optionally only those whose name contains `only`."""
    # Lazily: a lit file's directory lives while its lines run (`lit_items`).
    for name, producer in itertools.chain(lit_items(), zoo_items()):
        if only is None or only in name:
            yield name, producer


def record(directory: Path, only: str | None) -> int:
    """Write every item under `directory`."""
    count = 0
    for name, producer in items(only):
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(producer())
        count += 1
    print(f"recorded {count} items in {directory}")
    return 0


def check(directory: Path, only: str | None) -> int:
    """Compare every item with its recording; list the ones that differ or are missing."""
    differ, count = [], 0
    for name, producer in items(only):
        count += 1
        recorded = directory / name
        if not recorded.is_file() or normalized(recorded.read_text()) != producer():
            differ.append(name)
    for name in differ:
        print(f"differs: {name}")
    print(f"{count - len(differ)}/{count} items identical to {directory}")
    return 1 if differ else 0


def record_revision(revision: str, directory: Path, only: str | None) -> None:
    """
    Record the baseline of git revision `revision` under `directory`: its own `replay.py record`,
    run from a temporary worktree whose packages every Python process imports first
    (`_revision_boot`). Raises `ReplayError` when the revision does not exist or its recording
    fails.
    """
    scratch = Path(tempfile.mkdtemp(prefix="ktir-replay-"))
    tree = scratch / "tree"
    try:
        _git("worktree", "add", "--detach", "--quiet", str(tree), revision)
        boot = _revision_boot(tree, scratch / "boot")
        command = [sys.executable, str(tree / "tools" / "replay.py"), "record", str(directory.resolve())]
        if only is not None:
            command += ["--only", only]
        path = os.pathsep.join(filter(None, [str(boot), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONPATH": path}
        result = subprocess.run(
            command, cwd=tree, env=env, capture_output=True, encoding="utf-8", errors="replace"
        )
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise ReplayError(f"recording {revision} failed: {last}")
    finally:
        if tree.exists():
            _git("worktree", "remove", "--force", str(tree))
        shutil.rmtree(scratch, ignore_errors=True)


BOOT = """\
# Written by tools/replay.py: import the packages of {tree} before the installed ones.
import sys
from importlib.util import spec_from_file_location

PACKAGES = {packages!r}


class RevisionFinder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname not in PACKAGES:
            return None
        where = PACKAGES[fullname]
        return spec_from_file_location(fullname, where + "/__init__.py", submodule_search_locations=[where])


sys.meta_path.insert(0, RevisionFinder)
"""


def _revision_boot(tree: Path, boot: Path) -> Path:
    """
    A directory holding a `sitecustomize.py` that makes every Python process started with it on
    `PYTHONPATH` (the recording, and the tools its lit commands run) import `ktir` and its
    mapped subpackages (`[tool.setuptools.package-dir]`: `ktir.passes` is `passes/`, ...) from
    `tree`. `tree` first on `PYTHONPATH` would not do: the editable install's finder still maps
    `ktir.passes`, `ktir.dialects` and `ktir.tools` to this checkout.
    """
    with open(tree / "pyproject.toml", "rb") as file:
        package_dir = tomllib.load(file).get("tool", {}).get("setuptools", {}).get("package-dir", {})
    packages = {name: str(tree / folder) for name, folder in package_dir.items()}
    packages.setdefault("ktir", str(tree / "ktir"))
    boot.mkdir(parents=True)
    (boot / "sitecustomize.py").write_text(BOOT.format(tree=tree, packages=packages))
    return boot


class ReplayError(Exception):
    """A baseline could not be recorded (unknown revision, failing recording)."""


def _git(*args: str) -> None:
    result = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, encoding="utf-8", errors="replace")
    if result.returncode != 0:
        raise ReplayError(f"git {args[0]} {args[1]}: {result.stderr.strip().splitlines()[-1]}")


def check_against(revision: str, directory: Path | None, only: str | None) -> int:
    """Record `revision`'s baseline (in `directory`, or a temporary one) and check against it."""
    if directory is not None:
        record_revision(revision, directory, only)
        return check(directory, only)
    with tempfile.TemporaryDirectory(prefix="ktir-replay-base-") as base:
        record_revision(revision, Path(base), only)
        return check(Path(base), only)


def main(argv: list[str] | None = None) -> int:
    """`replay.py record DIR`, `replay.py check DIR` or `replay.py check --against REV [DIR]`."""
    assert __doc__ is not None  # the module docstring
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["record", "check"])
    parser.add_argument("directory", type=Path, nargs="?")
    parser.add_argument("--only", help="only items whose name contains this text")
    parser.add_argument(
        "--against", metavar="REV", help="check: record the baseline from this git revision first"
    )
    options = parser.parse_intermixed_args(argv)  # DIRECTORY may follow --against REV
    if options.against is not None and options.mode != "check":
        parser.error("--against goes with check")
    if options.against is None and options.directory is None:
        parser.error(f"{options.mode} needs a DIRECTORY (or, with check, --against REV)")
    try:
        if options.against is not None:
            return check_against(options.against, options.directory, options.only)
    except ReplayError as error:
        print(f"replay.py: error: {error}", file=sys.stderr)
        return 1
    action = record if options.mode == "record" else check
    return action(options.directory, options.only)


if __name__ == "__main__":
    sys.exit(main())
