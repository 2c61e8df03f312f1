"""
`python -m ktir`: the version and the command-line tools, one line each.

Example output:

    ktir 0.1.0 (xdsl 0.74.0)
      ktir-opt     run pass pipelines on ktir IR (mlir-opt conventions)
      ...
"""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version

from ktir import __version__

TOOLS = (
    ("ktir-opt", "run pass pipelines on ktir IR (mlir-opt conventions)"),
    ("ktir-import", "import a PyTorch model file as graph-level ktir"),
    ("ktir-run", "compile and simulate a ktir module on the chip model, with a report"),
    ("ktir-estimate", "estimate a language model's latency on the chip from its config.json"),
)
"""The console scripts the package installs, with what each does."""


def describe() -> str:
    """The text `python -m ktir` prints."""
    try:
        xdsl = version("xdsl")
    except PackageNotFoundError:  # running from a source tree without xDSL's metadata
        xdsl = "unknown"
    width = max(len(name) for name, _ in TOOLS)
    lines = [f"ktir {__version__} (xdsl {xdsl})", *(f"  {n:<{width}}  {what}" for n, what in TOOLS)]
    lines.append("Run a tool with --help for its options, or see docs/ in the source tree.")
    return "\n".join(lines)


def main() -> int:
    """Print `describe()`; exit code 0."""
    print(describe())
    return 0


if __name__ == "__main__":
    sys.exit(main())
