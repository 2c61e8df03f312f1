# lit configuration for ktir's FileCheck tests (run with `lit test/lit`).
# ruff: noqa: F821  (`config` and `lit_config` are provided by lit)
import importlib.util
import os
import shutil
import sys

import lit.formats

config.name = "ktir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)

# Tools come from the environment lit runs in (the project's .venv): put its bin first.
bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])
for tool in ("ktir-opt", "ktir-import", "ktir-run", "filecheck"):
    if shutil.which(tool, path=config.environment["PATH"]) is None:
        lit_config.fatal(f"{tool} not found next to {sys.executable}: run `make test`")

# `filecheck` in RUN lines is LLVM's own FileCheck where the llvm-tools wheel (the `mlir` extra,
# which `make test` installs) provides it: a native binary starts in about a millisecond, the
# Python port (`filecheck`, the fallback) in about 60 ms, and lit runs it some 230 times. Check
# lines use what both accept: POSIX regexes (no lookahead).
llvm_tools = importlib.util.find_spec("llvm")
file_check = (
    shutil.which("FileCheck", path=os.path.join(list(llvm_tools.submodule_search_locations)[0], "bin"))
    if llvm_tools is not None and llvm_tools.submodule_search_locations
    else None
)

config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# Custom form printed, re-parsed and printed again (--verify-roundtrip: the same text) must match
# the CHECK lines.
config.substitutions.append(
    (
        "KTIR_ROUNDTRIP",
        "ktir-opt %s --split-input-file --verify-roundtrip | filecheck %s",
    )
)
# The generic form is checked with its own prefix.
config.substitutions.append(
    (
        "KTIR_GENERIC_ROUNDTRIP",
        "ktir-opt %s --split-input-file --print-op-generic --verify-roundtrip "
        "| filecheck %s --check-prefix=CHECK-GENERIC",
    )
)

if importlib.util.find_spec("mlir") is not None:
    config.available_features.add("mlir-python")


# Last, so that the `filecheck` of the substitutions above is replaced too.
if file_check is not None:
    config.substitutions.append((r"\bfilecheck\b", file_check))
