"""
Output files of the ktir tools: checked up front, written whole or not at all.

A tool calls `check_writable` on every output path before it does any work, so a bad path
fails at once and nothing else is written; then `write_all` writes each file to a temporary
file next to it and renames them into place only once every one was written, so a failure
never leaves a half-written or partial set of outputs.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO


class OutputError(Exception):
    """An output path that cannot be written; the message names it and why."""


def check_writable(path: str) -> None:
    """Raise `OutputError` unless `path` can be created or overwritten (nothing is written)."""
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise OutputError(f"cannot write '{path}': it is a directory")
    if not parent.is_dir():
        raise OutputError(f"cannot write '{path}': no such directory '{parent}'")
    if target.exists() and not os.access(target, os.W_OK):
        raise OutputError(f"cannot write '{path}': permission denied")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write '{path}': directory '{parent}' is not writable")


def repeated_output(paths: Sequence[str]) -> str | None:
    """The first output path named twice (the same file after resolving it), or None."""
    seen: set[Path] = set()
    for path in paths:
        resolved = Path(path).resolve()
        if resolved in seen:
            return path
        seen.add(resolved)
    return None


def npz_path(path: str | None) -> str | None:
    """The file `np.savez` writes for `path`: it adds `.npz` to a name without it (so does `-o`)."""
    if path is None or path.endswith(".npz"):
        return path
    return f"{path}.npz"


Writer = Callable[[str], object]
"""Writes one output to the path it is given (a temporary file with the final suffix)."""


def write_all(outputs: Sequence[tuple[str, Writer]]) -> None:
    """
    Write every `(path, writer)`. A regular file is written to a temporary file beside it, and
    the temporary files are renamed into place only after every writer succeeded; on a failure
    they are removed and nothing is renamed (an `OSError` becomes an `OutputError`). A path
    that exists and is not a regular file (`/dev/stdout`, a pipe) is written directly, last.
    """
    staged: list[tuple[str, str]] = []
    try:
        special = [(path, writer) for path, writer in outputs if _is_special(path)]
        for path, writer in [output for output in outputs if not _is_special(output[0])]:
            temporary = _temporary_name(path)
            staged.append((temporary, path))
            writer(temporary)
        for path, writer in special:
            writer(path)
        for temporary, path in staged:
            os.replace(temporary, path)
        staged.clear()
    except OSError as error:
        raise OutputError(f"cannot write '{error.filename}': {error.strerror}") from error
    finally:
        for temporary, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def announce_written(paths: Sequence[str], *, quiet: bool, stream: TextIO | None = None) -> None:
    """
    Say which files a tool wrote, `wrote PATH` on a line each on `stream` (default: stderr,
    so stdout keeps only the tool's result), unless `quiet`.
    """
    if quiet:
        return
    for path in paths:
        print(f"wrote {path}", file=stream if stream is not None else sys.stderr)


def _is_special(path: str) -> bool:
    return os.path.exists(path) and not os.path.isfile(path)


def _temporary_name(path: str) -> str:
    """`dir/.name.<pid>.tmp.suffix`: beside `path`, with its suffix (writers may go by it)."""
    target = Path(path)
    return str(target.with_name(f".{target.name}.{os.getpid()}.tmp{target.suffix}"))
